"""The held-out rule over many splits of the configurations, not one.

Why: ``scorecard.held_out`` chooses a rule (the best score by a statistic) on one half of the
zoo's configurations and tests it on the other, for one seeded split. A review of the benchmark
(issue 47) found that which way that verdict goes depends on the split drawn: one configuration
landing in one half or the other decides it. So a rule is recommended only if it carries over in
most splits. ``many_splits`` draws the splits ``scorecard.split_configurations`` makes with seeds
``0 .. n_seeds - 1``, keeps each distinct split once, and, in both directions of each, chooses the
best score on one half and ranks it on the other. Point estimates only (each model's statistic on
all its evaluation batches, averaged over a half's models with a circuit): the question is how
often the rule carries over, and the per-split intervals are ``held_out``'s.

>>> import numpy as np
>>> from headspace.scorecard import ZooData
>>> data = ZooData.synthetic(np.random.default_rng(0), n_families=6, n_seeds=3)
>>> out = many_splits(data, "auroc", n_seeds=20)
>>> list(out["chosen_counts"]), out["n_splits"]   # the real signal is chosen on every half; 9 distinct splits
(['signal'], 9)
>>> out["first_on_other"] == out["n_directions"]  # and is first on the other half every time
True
"""

from __future__ import annotations

import warnings

import numpy as np

from headspace import scorecard as sc

__all__ = ["many_splits", "N_SEEDS", "TOP", "TIE"]

#: How many split seeds ``many_splits`` draws by default (distinct splits among them are kept once).
N_SEEDS = 200
#: "In the top k": the chosen score's rank on the other half at most this.
TOP = 3
#: Two half means closer than this are a tie (they share the better rank). Equal statistics can reach
#: two scores through different float sums (in the zoo, path size and Frobenius both at 28/39 of a
#: half's precision@k, differing in the last bits), and a strict ``>`` would make that tie a rank 2.
TIE = 1e-12


def _point_stats(data: sc.ZooData, statistic: str, ground_truth: str, mode: str, thresholds: dict | None):
    """Per model, ``statistic`` of every score on all its batches ``[n_models, S]``, and which models have a
    circuit: the scorecard's own bottom level (``scorecard._model_draws``) with no resamples, so its row 0,
    the point estimate, by the same code and the same rule for "has a circuit"."""
    th = dict(sc.THRESHOLDS, **(thresholds or {}))
    per, formed, _, _ = sc._model_draws(data, ground_truth, mode, 0, 0, th)
    return per[statistic][:, 0], formed


def _rank(v: np.ndarray, i: int, tie: float = TIE) -> int:
    """1 + how many scores are above score ``i`` by more than ``tie`` (ties share the better rank).

    >>> _rank(np.array([0.5, 28 / 39, np.nextafter(28 / 39, 1)]), 1)   # one float step apart: a tie
    1
    """
    return int((v > v[i] + tie).sum() + 1)


def many_splits(data: sc.ZooData, statistic: str = "spearman", ground_truth: str = sc.FORMED_BY,
                mode: str = "task", n_seeds: int = N_SEEDS, thresholds: dict | None = None,
                candidates=None, top: int = TOP) -> dict:
    """How often the held-out rule "use the best score by ``statistic``" carries over, over many splits.

    Returns a JSON-ready dict: ``n_seeds``, ``n_splits`` (distinct splits among them),
    ``n_directions`` (two per split whose halves both hold a model with a circuit), and over those
    directions: ``first_on_other`` and ``top_on_other`` (the chosen score first, or in the top
    ``top``, on the half it was not chosen on), ``last_on_other``, ``rank_counts`` (``{rank: n}``),
    ``chosen_counts`` (``{score: n}``), ``both_ways`` (splits where each half's choice is first on the
    other); per score ``first_on_half`` and ``worst_rank`` over every half; ``splits``, one row per
    split (halves, per direction the choice and its rank). ``candidates``: the scores a rule may
    choose (default all); ranks are among all scores.
    """
    if statistic not in sc.STATISTICS:
        raise ValueError(f"statistic must be one of {list(sc.STATISTICS)}; got {statistic!r}")
    if ground_truth not in data.ground_truths:
        raise ValueError(f"ground_truth must be one of {list(data.ground_truths)}; got {ground_truth!r}")
    if n_seeds < 1:
        raise ValueError(f"n_seeds must be at least 1; got {n_seeds}")
    names = list(data.scores)
    cand = [names.index(s) for s in (candidates if candidates is not None else names)]
    values, formed = _point_stats(data, statistic, ground_truth, mode, thresholds)
    fam = np.array(data.families)

    def half_mean(half):
        keep = np.isin(fam, half) & formed
        if not keep.any():
            return None
        with warnings.catch_warnings():             # a score with no finite value on a half: NaN, ranked last
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(values[keep], axis=0)

    seen, rows = set(), []
    for seed in range(n_seeds):
        a, b = sc.split_configurations(data, seed)
        key = frozenset((frozenset(a), frozenset(b)))
        if key in seen:
            continue
        seen.add(key)
        means = {"A": half_mean(a), "B": half_mean(b)}
        row = {"seed": seed, "halves": {"A": a, "B": b}, "directions": []}
        if means["A"] is not None and means["B"] is not None:
            for on, other in (("A", "B"), ("B", "A")):
                mine = means[on]
                best = max(cand, key=lambda i: -np.inf if np.isnan(mine[i]) else mine[i])
                row["directions"].append({"chosen_on": on, "chosen": names[best],
                                          "rank_on_other": _rank(np.nan_to_num(means[other], nan=-np.inf), best),
                                          "ranks_on_half": {names[i]: _rank(np.nan_to_num(mine, nan=-np.inf), i)
                                                            for i in range(len(names))}})
        rows.append(row)
    dirs = [d for r in rows for d in r["directions"]]
    ranks = [d["rank_on_other"] for d in dirs]
    chosen = [d["chosen"] for d in dirs]
    return {"statistic": statistic, "ground_truth": ground_truth, "mode": mode, "top": top,
            "n_seeds": n_seeds, "n_splits": len(rows), "n_directions": len(dirs), "n_scores": len(names),
            "first_on_other": sum(r == 1 for r in ranks), "top_on_other": sum(r <= top for r in ranks),
            "last_on_other": sum(r == len(names) for r in ranks),
            "rank_counts": {int(k): ranks.count(k) for k in sorted(set(ranks))},
            "chosen_counts": {s: chosen.count(s) for s in sorted(set(chosen), key=lambda s: -chosen.count(s))},
            "both_ways": sum(len(r["directions"]) == 2 and all(d["rank_on_other"] == 1 for d in r["directions"])
                             for r in rows),
            "first_on_half": {s: sum(d["ranks_on_half"][s] == 1 for d in dirs) for s in names},
            "worst_rank": {s: max((d["ranks_on_half"][s] for d in dirs), default=None) for s in names},
            "splits": [{"seed": r["seed"], "halves": r["halves"],
                        "directions": [{k: d[k] for k in ("chosen_on", "chosen", "rank_on_other")}
                                       for d in r["directions"]]} for r in rows]}
