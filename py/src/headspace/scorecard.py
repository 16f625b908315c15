"""A score's scorecard on the zoo: the questions a researcher asks of it, each with an interval.

Why: the benchmark table (``headspace.benchmark``) gives one number per score, the mean Spearman
with a ground truth, and a review of it (issue 47) found that number answers none of the
questions a researcher brings: does the score say anything beyond how large the heads are; if I
shortlist its top pairs, how many are real; does it hold on models it was not chosen on. This
module answers those, for the built-in scores and a researcher's own, on any zoo folder.

Per model, over its pairs of an earlier and a later head, in one mode (``SCORECARD_MODES``: each
model in its task's mode, in the mode of its largest path, in the mode its recorded mechanism names,
or all in Q, K or V):

* ``spearman``: rank correlation of the score with the ground truth;
* ``partial_norm_product``, ``partial_product_norm``: the same with a size score's ranks
  partialled out (``stats.partial_spearman``): what the score adds to size;
* ``auroc``: how well it separates the causal pairs (``causal_pairs``) from the rest;
* ``top1``: whether its top pair is causal; ``precision_at_k``: the share of causal pairs among
  its top k, k the model's number of causal pairs (``stats.precision_at_k``, ties shared).

Each statistic is averaged over the models *whose circuit formed*: their largest path in the mode
costs at least ``circuit_effect`` nats by the reference ground truth, ``FORMED_BY``, and, where the
zoo records each model's measured mechanism (``headspace.mechanisms``), it is not one of
``CIRCUITLESS_MECHANISMS``. The models without one are reported apart (a score cannot be rewarded
for ranking pairs where no circuit is).

Intervals: a three-level bootstrap (``bootstrap_units``, ``stats.cluster_draws``) of the models a
table averages: for the main table, the configurations (the zoo's families) that have a model whose
circuit formed, with replacement, as many as there are, then within each its models with a circuit,
then each drawn model's evaluation batches (the ground truth recomputed on them); the models without a
circuit are drawn apart in the same way for their own table. So every draw holds the same number
``n`` of configurations, all with a circuit, and ``n`` is the one the interval is widened with:
the percentile interval widened by ``sqrt(n / (n - 1))``, which undoes the bootstrap's ``(n - 1) / n``
shrinkage of the variance at the top level, and by Student's quantile over the normal's for a spread
estimated from ``n`` units (``stats.expanded_interval``; at 95%, 2.31 / 1.96 for nine configurations);
resampling seeds and batches as well makes it, if anything, wider than that.
With one configuration the top level is its seeds (``n`` seeds), with one model its batches. The card
records the unit and ``n`` (``bootstrap``). Comparisons: every score against each size score on each
statistic, and every partial Spearman against 0; their p-values (``stats.p_value``: Student's t with
``n - 1`` degrees of freedom on the bootstrap's standard error, widened by the same factor, so never
exactly 0 and not bounded below by ``1 / (resamples + 1)``) are Holm-adjusted (``stats.holm``) within the
scorecard, and, in the report (``zoo_report``), over every scorecard's comparisons at once
(``holm_family``): the report is what a text draws its findings from. Holm runs on the unrounded
p-values; only the report's written p-values are rounded (``P_DIGITS`` significant digits).

Rules are chosen and tested on different models: ``held_out`` splits the configurations in two
(stratified by task), picks the best score on one half and reports it, with intervals, on both.
``sensitivity`` recomputes the verdicts with each threshold varied; ``scorecard(..., circuit_by="path")``
lets the path alone decide which models have a circuit (the recorded labels set aside). ``mode_gaps``
gives a score's gap from another in several modes and how it changes between them, paired: one
bootstrap draws every mode at once (the same batches, the union's configurations and seeds).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> data = ZooData.synthetic(rng, n_families=4, n_seeds=3)          # a toy zoo, see ZooData.synthetic
>>> card = scorecard(data, resamples=200)
>>> est, lo, hi = card["stats"]["auroc"]["signal"]
>>> bool(lo > 0.8), card["n_models"], card["n_configurations"]       # a real signal is found
(True, 12, 4)
>>> est, lo, hi = card["stats"]["auroc"]["noise"]
>>> bool(lo < 0.5 < hi)                                              # noise is not
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from headspace import stats
from headspace.composition import MODES

__all__ = ["ZooData", "zoo_data", "scorecard", "holm_family", "held_out", "sensitivity", "causal_pairs", "split_configurations",
           "STATISTICS", "THRESHOLDS", "SIZE_SCORES", "FORMED_BY", "SCORECARD_MODES", "LEVEL", "RESAMPLES", "zoo_report",
           "read_report", "REPORT_GROUND_TRUTHS", "REPORT_MODES", "SENSITIVITY", "RANGE", "CIRCUITLESS_MECHANISMS",
           "bootstrap_units", "P_DIGITS", "P_METHOD", "mode_gaps", "MODE_GAP", "CIRCUIT_BY"]

#: The statistics of a scorecard, in the order it prints them.
STATISTICS = ("spearman", "partial_norm_product", "partial_product_norm", "auroc", "top1", "precision_at_k")
#: The thresholds (nats, share of the largest, nats): a pair is causal when its effect is at least
#: ``min_effect`` and ``rel_effect`` of the model's largest in the mode; a model's circuit formed
#: when its largest path reaches ``circuit_effect`` (the benchmark's MIN_EFFECT, REL_EFFECT,
#: CIRCUIT_EFFECT).
THRESHOLDS = {"min_effect": 0.02, "rel_effect": 0.2, "circuit_effect": 0.1}
#: The size scores other scores are compared with and partialled on.
SIZE_SCORES = ("norm_product", "product_norm")
#: The ground truth that decides whether a model's circuit formed, whichever one is scored.
FORMED_BY = "mean-circuit"
#: Recorded mechanisms (``headspace.mechanisms.LABELS``) that count as no circuit whatever the path effects:
#: no labelled mechanism passed its thresholds, or the task is answered from attention spread over many
#: entries with no head on the one the design names (lookup), so no pair of heads is *the* circuit.
CIRCUITLESS_MECHANISMS = ("none formed", "diffuse lookup")
#: "task": each model in its task's mode; "largest": in the mode of its largest path; "mechanism": in the
#: mode its recorded mechanism names (``headspace.mechanisms``; a model whose mechanism names none, or is
#: one of ``CIRCUITLESS_MECHANISMS``, is reported apart, read in its task's mode); or all in one mode.
SCORECARD_MODES = ("task", "largest", "mechanism") + MODES
#: What decides whether a model's circuit formed: "label", its largest path in the mode and its recorded
#: mechanism (not one of ``CIRCUITLESS_MECHANISMS``; the main tables); "path", the path alone (a sensitivity).
CIRCUIT_BY = ("label", "path")
#: The ground truths and modes the shipped report covers.
REPORT_GROUND_TRUTHS = ("mean-circuit", "resample-circuit", "excess-circuit")
REPORT_MODES = ("task", "largest", "mechanism")
LEVEL = 0.95
RESAMPLES = 1000
#: The fields of a comparison (a row of a card's ``comparisons``).
COMPARISON_FIELDS = ("score", "against", "statistic", "difference", "lo", "hi", "p", "p_holm")
#: Significant digits of the p-values the report writes (Holm runs on the unrounded ones).
P_DIGITS = 4
#: How a comparison's p is computed, as the card states it.
P_METHOD = ("two-sided Student's t with n-1 degrees of freedom: |difference - null| over the bootstrap draws' "
            "standard deviation widened by sqrt(n/(n-1)), n the resampled units (stats.p_value); never 0, and not "
            "bounded below by 1/(resamples+1), which a count of draws would be")
#: Each statistic's range, to which a widened interval is clipped.
RANGE = {"spearman": (-1, 1), "partial_norm_product": (-1, 1), "partial_product_norm": (-1, 1), "auroc": (0, 1),
         "top1": (0, 1), "precision_at_k": (0, 1)}


@dataclass
class ZooData:
    """What a scorecard reads: per model its configuration, scores and ground truths over its later pairs.

    ``names``, ``families``, ``tasks``: one per model. ``scores``: ``{score: [array [3 modes, P]
    per model]}``; ``ground_truths``: ``{name: [array [n_batches, 3 modes, P] per model]}`` (P the
    model's pairs with a later reader, ``benchmark.later_pairs`` order). ``task_mode``: per model
    its task's mode (``"Q" "K" "V"``). ``mechanisms``: per model its recorded mechanism's label, or
    None where none is recorded (then only the path effect decides whether its circuit formed).
    ``mechanism_modes``: per model the mode its recorded mechanism's path runs through (``"Q" "K"
    "V"``), or None where no mode is recorded (the scorecard's "mechanism" mode reads it).
    """
    names: list
    families: list
    tasks: list
    task_mode: list
    scores: dict
    ground_truths: dict = field(default_factory=dict)
    mechanisms: list | None = None
    mechanism_modes: list | None = None

    def subset(self, keep) -> "ZooData":
        """The same data for the models at indices ``keep``."""
        keep = list(keep)
        pick = lambda xs: [xs[i] for i in keep]  # noqa: E731
        return ZooData(pick(self.names), pick(self.families), pick(self.tasks), pick(self.task_mode),
                       {s: pick(v) for s, v in self.scores.items()},
                       {g: pick(v) for g, v in self.ground_truths.items()},
                       None if self.mechanisms is None else pick(self.mechanisms),
                       None if self.mechanism_modes is None else pick(self.mechanism_modes))

    def with_score(self, name: str, per_model) -> "ZooData":
        """A copy with one more score (``[3, P]`` per model)."""
        scores = dict(self.scores)
        scores[name] = [np.asarray(a, dtype=float) for a in per_model]
        return ZooData(self.names, self.families, self.tasks, self.task_mode, scores, self.ground_truths,
                       self.mechanisms, self.mechanism_modes)

    @staticmethod
    def synthetic(rng, n_families: int = 4, n_seeds: int = 3, n_pairs: int = 16, n_batches: int = 8) -> "ZooData":
        """A toy zoo for examples and tests: a ground truth ``mean-circuit`` made of a size term and
        a signal term on a few causal pairs; scores ``norm_product`` and ``product_norm`` (size),
        ``signal`` (the signal, noisy), ``noise`` (seeded noise)."""
        names, fams, scores, gts = [], [], {s: [] for s in ("norm_product", "product_norm", "signal", "noise")}, []
        for f in range(n_families):
            for s in range(n_seeds):
                size = rng.gamma(2.0, 1.0, (3, n_pairs))
                causal = np.zeros((3, n_pairs))
                causal[:, rng.choice(n_pairs, 3, replace=False)] = 1.0
                truth = 0.01 * size + 0.3 * causal
                gts.append(truth[None] + rng.normal(0, 0.02, (n_batches, 3, n_pairs)))
                scores["norm_product"].append(size)
                scores["product_norm"].append(size * rng.uniform(0.8, 1.0, size.shape))
                scores["signal"].append(causal + rng.normal(0, 0.5, size.shape))
                scores["noise"].append(rng.normal(size=size.shape))
                names.append(f"f{f}-s{s}")
                fams.append(f"f{f}")
        n = len(names)
        return ZooData(names, fams, ["induction"] * n, ["K"] * n, scores, {"mean-circuit": gts})


def zoo_data(zoo, scores=None, ground_truths=None) -> ZooData:
    """Read a zoo folder (``benchmark.zoo_dir``): its manifest, ``scores`` (``{name: fn(weights, mode)}``,
    default ``pair_scores.SCORES``) on every model, and its ground truths (``benchmark.read_ground_truth``,
    plus those of ``ground_truths`` if given: ``{name: {model: [n_batches, 3, L, H, L, H]}}``)."""
    from headspace import benchmark, mechanisms, store
    from headspace.tasks import MODE_OF_TASK
    zoo = benchmark.zoo_dir(zoo)
    entries = benchmark.scored_models(zoo)
    scored = benchmark.score_zoo(zoo, scores)
    gts = benchmark.read_ground_truth(zoo)
    names = list(entries)
    score_names = list(next(iter(scored.values())))
    out_scores = {s: [] for s in score_names}
    out_gts = {g: [] for g in benchmark.GT_NAMES}
    for g in (ground_truths or {}):
        out_gts[g] = []
    for name in names:
        cfg = store.read_config(zoo / name)
        idx = benchmark.later_pairs(cfg["n_layers"], cfg["n_heads"])
        for s in score_names:
            out_scores[s].append(scored[name][s].reshape(3, -1)[:, idx])
        g4 = gts[name]
        for i, g in enumerate(benchmark.GT_NAMES):
            out_gts[g].append(g4[i].reshape(g4.shape[1], 3, -1)[..., idx])
        for g, per_model in (ground_truths or {}).items():
            a = np.asarray(per_model[name], dtype=float)
            out_gts[g].append(a.reshape(a.shape[0], 3, -1)[..., idx])
    # the mode the recorded mechanism's path runs through (its record, mechanism.json), where one is recorded
    mech_modes = [mechanisms.read(zoo, n).get("mode") if entries[n].get("mechanism") else None for n in names]
    return ZooData(names, [entries[n]["family"] for n in names], [entries[n]["task"] for n in names],
                   [MODE_OF_TASK[entries[n]["task"]] for n in names], out_scores, out_gts,
                   [entries[n].get("mechanism") for n in names], [m if m in MODES else None for m in mech_modes])


def causal_pairs(effect, min_effect: float = THRESHOLDS["min_effect"],
                 rel_effect: float = THRESHOLDS["rel_effect"]) -> np.ndarray:
    """Which pairs are causal: effect at least ``min_effect`` nats and ``rel_effect`` of the largest (last axis).

    >>> causal_pairs(np.array([0.5, 0.3, 0.01, 0.09, 0.11])).tolist()
    [True, True, False, False, True]
    """
    e = np.asarray(effect, dtype=float)
    return (e >= min_effect) & (e >= rel_effect * e.max(axis=-1, keepdims=True))


def _auroc(sc: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """AUROC of every score ``[S, P]`` for every positives row ``[D, P]``: ``[D, S]`` (NaN without both kinds)."""
    p = pos.astype(float)
    n = 1.0 - p
    d = sc[:, :, None] - sc[:, None, :]
    C = (d > 0) + 0.5 * (d == 0)
    num = np.einsum("ri,sij,rj->rs", p, C, n, optimize=True)
    den = (p.sum(-1) * n.sum(-1))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _mechanism_names_a_mode(data: ZooData) -> np.ndarray:
    """Per model, whether its recorded mechanism names a mode to read it in: a mode is recorded and the
    label is not one of ``CIRCUITLESS_MECHANISMS``."""
    n = len(data.names)
    modes = data.mechanism_modes if data.mechanism_modes is not None else [None] * n
    labels = data.mechanisms if data.mechanisms is not None else [None] * n
    return np.array([m in MODES and lab not in CIRCUITLESS_MECHANISMS for m, lab in zip(modes, labels)], dtype=bool)


def _model_mode(data: ZooData, mode: str, reference: str) -> np.ndarray:
    """Per model, the index of the mode it is read in."""
    if mode in MODES:
        return np.full(len(data.names), MODES.index(mode))
    if mode == "task":
        return np.array([MODES.index(m) for m in data.task_mode])
    if mode == "largest":
        return np.array([int(np.argmax(g.mean(0).max(-1))) for g in data.ground_truths[reference]])
    if mode == "mechanism":
        if data.mechanism_modes is None:
            raise ValueError("mode 'mechanism' needs data.mechanism_modes (each model's recorded mechanism's mode); "
                             "got None")
        named = _mechanism_names_a_mode(data)
        return np.array([MODES.index(data.mechanism_modes[i] if named[i] else data.task_mode[i])
                         for i in range(len(data.names))])
    raise ValueError(f"mode must be one of {list(SCORECARD_MODES)}; got {mode!r}")


def bootstrap_units(families, keep, n_batches, resamples: int, seed: int) -> tuple[np.ndarray, int | None, str]:
    """The draws of a table's bootstrap over the models ``keep`` (bool per model): ``(counts, n, unit)``.

    ``counts [resamples + 1, n_models]``: how often each model enters each draw (row 0 once each; 0 for
    the models not kept); ``n``: the number of top-level units each draw resamples, the ``n`` its
    interval is widened with (``stats.expanded_interval``); ``unit``: what they are. Only the kept
    models' configurations are resampled, so every draw holds ``n`` of them: ``"configurations"``
    when the kept models span two or more, else ``"seeds"`` (the one configuration's kept models),
    else ``"batches"`` (one model: ``n_batches`` of it); ``(zeros, None, "none")`` when none is kept.

    >>> counts, n, unit = bootstrap_units(["a", "a", "b", "c"], [True, True, True, False], [4] * 4, 3, 0)
    >>> n, unit, counts[:, 3].tolist()                  # c has no kept model: never drawn
    (2, 'configurations', [0, 0, 0, 0])
    """
    keep = np.asarray(keep, dtype=bool)
    idx = np.flatnonzero(keep)
    counts = np.zeros((resamples + 1, len(keep)), dtype=np.int64)
    if idx.size == 0:
        return counts, None, "none"
    groups = [families[i] for i in idx]
    counts[:, idx] = stats.cluster_draws(groups, resamples, seed)
    n_configs = len(set(groups))
    if n_configs >= 2:
        return counts, n_configs, "configurations"
    if idx.size >= 2:
        return counts, int(idx.size), "seeds"
    return counts, int(n_batches[idx[0]]), "batches"


def _per_model(sc, gt, weights, thresholds, size_idx) -> dict:
    """Every statistic of one model: ``{statistic: [D, S]}`` for ``D`` batch draws (rows of ``weights``)."""
    g = weights @ gt                                                          # [D, P]
    rho = stats.spearman_along(sc[None], g[:, None])                          # [D, S]
    out = {"spearman": rho}
    for name, k in zip(SIZE_SCORES, size_idx):
        out[f"partial_{name}"] = stats.partial_spearman(sc[None], g[:, None], sc[k][None, None])
    pos = causal_pairs(g, thresholds["min_effect"], thresholds["rel_effect"])  # [D, P]
    out["auroc"] = _auroc(sc, pos)
    n_pos = pos.sum(-1)
    kk = np.where(n_pos > 0, n_pos, 0)[:, None]
    out["top1"] = stats.precision_at_k(sc[None], pos[:, None], np.where(n_pos > 0, 1, 0)[:, None])
    out["precision_at_k"] = stats.precision_at_k(sc[None], pos[:, None], kk)
    return out


def _has_circuit(data: ZooData, modes: np.ndarray, reference: str, th: dict, mode: str,
                 circuit_by: str = "label") -> np.ndarray:
    """Per model, whether its circuit formed in ``modes`` (one mode index per model): its largest path there
    by ``reference`` reaches ``th["circuit_effect"]``; with ``circuit_by="label"`` (the default) also its
    recorded mechanism is not one of ``CIRCUITLESS_MECHANISMS`` and, in mode "mechanism", names a mode.
    ``circuit_by="path"``: the path alone decides (the sensitivity that puts the labelled-circuitless models in)."""
    if circuit_by not in CIRCUIT_BY:
        raise ValueError(f"circuit_by must be one of {list(CIRCUIT_BY)}; got {circuit_by!r}")
    n_models = len(data.names)
    by_path = np.array([data.ground_truths[reference][m].mean(0)[modes[m]].max() >= th["circuit_effect"]
                        for m in range(n_models)], dtype=bool)
    if circuit_by == "path":
        return by_path
    named = _mechanism_names_a_mode(data) if mode == "mechanism" else np.ones(n_models, dtype=bool)
    labelled = np.array([data.mechanisms is None or data.mechanisms[m] not in CIRCUITLESS_MECHANISMS
                         for m in range(n_models)], dtype=bool)
    return by_path & labelled & named


def _model_draws(data: ZooData, ground_truth: str, mode: str, resamples: int, seed: int, th: dict,
                 circuit_by: str = "label") -> tuple[dict, np.ndarray, np.ndarray, list]:
    """The bootstrap's bottom level, one model at a time: ``(per, formed, modes, n_batches)``.

    ``per``: ``{statistic: [n_models, resamples + 1, S]}``, each model's statistic of every score on each draw
    of its evaluation batches (row 0 all of them once: the point estimate); ``formed``: which models have a
    circuit (``_has_circuit``); ``modes``: the mode each model is read in. The batch draws depend only on
    ``seed`` and the models' batch counts, not on ``mode``: two calls with the same seed draw the same
    batches, which is what pairs statistics across modes (``mode_gaps``)."""
    if ground_truth not in data.ground_truths:
        raise ValueError(f"ground_truth must be one of {list(data.ground_truths)}; got {ground_truth!r}")
    missing = [s for s in SIZE_SCORES if s not in data.scores]
    if missing:
        raise ValueError(f"data.scores must hold the size scores {list(SIZE_SCORES)}; got no {missing}")
    reference = FORMED_BY if FORMED_BY in data.ground_truths else ground_truth
    modes = _model_mode(data, mode, reference)
    score_names = list(data.scores)
    size_idx = [score_names.index(s) for s in SIZE_SCORES]
    n_models = len(data.names)
    formed = _has_circuit(data, modes, reference, th, mode, circuit_by)
    rng = np.random.default_rng(seed)
    per = {s: np.full((n_models, resamples + 1, len(score_names)), np.nan) for s in STATISTICS}
    n_batches = []
    for m in range(n_models):
        gt = data.ground_truths[ground_truth][m][:, modes[m]]                 # [B, P]
        B = gt.shape[0]
        n_batches.append(B)
        w = np.zeros((resamples + 1, B))
        w[0] = 1.0 / B
        draws = rng.integers(0, B, (resamples, B))
        np.add.at(w, (np.repeat(np.arange(1, resamples + 1), B), draws.ravel()), 1.0 / B)
        sc = np.stack([data.scores[s][m][modes[m]] for s in score_names])    # [S, P]
        for s, v in _per_model(sc, gt, w, th, size_idx).items():
            per[s][m] = v
    return per, formed, modes, n_batches


def _aggregate(per: dict, c: np.ndarray) -> dict:
    """``{statistic: [D, S]}``: the draws' means over the models, each counted as ``c [D, n_models]`` says."""
    out = {}
    for s, v in per.items():
        ok = np.isfinite(v)
        num = np.einsum("dm,mds->ds", c, np.where(ok, v, 0.0))
        den = np.einsum("dm,mds->ds", c, ok.astype(float))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[s] = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    return out


def scorecard(data: ZooData, ground_truth: str = FORMED_BY, mode: str = "task", resamples: int = RESAMPLES,
              seed: int = 0, thresholds: dict | None = None, level: float = LEVEL, circuit_by: str = "label") -> dict:
    """Every statistic of every score of ``data`` against ``ground_truth``, with intervals and Holm-adjusted comparisons.

    Returns a JSON-ready dict: ``stats`` (``{statistic: {score: [estimate, lo, hi]}}`` over the
    models whose circuit formed), ``circuitless`` (the same over the others, or empty),
    ``comparisons`` (one row per comparison of the Holm family: score, against, statistic,
    difference with its interval, p and Holm-adjusted p), the models of each kind, the numbers
    of configurations and distinct draws, and the thresholds. See the module docstring.
    """
    th = dict(THRESHOLDS, **(thresholds or {}))
    per, formed, modes, n_batches = _model_draws(data, ground_truth, mode, resamples, seed, th, circuit_by)
    score_names = list(data.scores)
    # each table resamples only its own models' configurations (bootstrap_units): the formed models' and,
    # apart, the others'; every draw holds n configurations, the n each interval and p is widened with
    counts, n, unit = bootstrap_units(data.families, formed, n_batches, resamples, seed + 1)
    counts_apart, n_apart, unit_apart = bootstrap_units(data.families, ~formed, n_batches, resamples, seed + 2)

    def aggregate(c):
        return _aggregate(per, c)

    def widened(d, units):
        """The expanded interval of draws ``d [D + 1]`` (row 0 the estimate) over ``units`` top-level units."""
        if units is None:
            return stats.Interval(float(d[0]), float("nan"), float("nan"))
        return stats.expanded_interval(d[1:], d[0], units, level)

    def table(agg, units):
        return {s: {name: _rounded(widened(v[:, i], units), RANGE[s]) for i, name in enumerate(score_names)}
                for s, v in agg.items()}

    main = aggregate(counts.astype(float))
    out = {"ground_truth": ground_truth, "mode": mode, "thresholds": th, "level": level, "resamples": resamples,
           "circuit_by": circuit_by, "scores": score_names, "statistics": list(STATISTICS),
           "models": [n_ for n_, f in zip(data.names, formed) if f],
           "circuitless_models": [n_ for n_, f in zip(data.names, formed) if not f],
           "n_models": int(formed.sum()),
           "n_configurations": len({f for f, k in zip(data.families, formed) if k}),
           "model_modes": {n_: MODES[i] for n_, i in zip(data.names, modes)},
           "bootstrap": {"unit": unit, "n": n, "circuitless_unit": unit_apart, "circuitless_n": n_apart},
           "stats": table(main, n),
           "circuitless": table(aggregate(counts_apart.astype(float)), n_apart) if (~formed).any() else {}}
    out["distinct_draws"] = {"configurations": stats.distinct_draws(out["n_configurations"]) if out["n_configurations"] else 0,
                             "seeds_per_configuration": sorted({stats.distinct_draws(data.families.count(f))
                                                                for f in set(data.families)})}
    # the Holm family: every other score against each size score on each statistic, and each partial > 0
    rows, ps = [], []

    def p_of(d):
        return stats.p_value(d[1:], d[0], n) if n is not None else float("nan")

    for s_i, name in enumerate(score_names):
        for base in SIZE_SCORES:                      # does the score add to size? its partial against 0
            if name == base:
                continue
            d = main[f"partial_{base}"][:, s_i]
            rows.append([name, "0", f"partial_{base}", *_rounded(widened(d, n))])
            ps.append(p_of(d))
        if name in SIZE_SCORES:
            continue
        for base in SIZE_SCORES:
            b_i = score_names.index(base)
            for stat in ("spearman", "auroc", "top1", "precision_at_k"):
                d = main[stat][:, s_i] - main[stat][:, b_i]
                rows.append([name, base, stat, *_rounded(widened(d, n))])
                ps.append(p_of(d))
    adjusted = stats.holm(ps)
    out["comparison_fields"] = list(COMPARISON_FIELDS)
    # p and p_holm unrounded (a family adjusted later, holm_family, must see them so); zoo_report rounds what it writes
    out["comparisons"] = [r + [_finite(p), _finite(a)] for r, p, a in zip(rows, ps, adjusted)]
    out["p_method"] = P_METHOD
    out["n_comparisons"] = int(np.isfinite(np.asarray(ps, dtype=float)).sum())
    return out


def holm_family(cards: dict) -> dict:
    """``cards`` (``{key: scorecard}``) with every comparison's ``p_holm`` adjusted over all of them at once.

    Why: a text that states findings from several scorecards (ground truths, modes) makes all their
    comparisons, and a comparison that survives Holm within its own card, one of a hundred, may not
    survive among all of them. The family is every comparison of ``cards``: each card's
    ``p_holm`` is replaced by the family's, and ``holm_family`` names the cards and the family's size
    (``n_comparisons`` stays the card's own). A statement that *no* comparison holds is only made
    stronger by a smaller family, so a card on its own (``scorecard``) keeps its own family. The cards
    must be ``scorecard``'s own, whose p-values are unrounded (a report read back from its file has
    them rounded to ``P_DIGITS``, which can tie two of them and change Holm's order).

    >>> data = ZooData.synthetic(np.random.default_rng(0), n_families=4, n_seeds=3)
    >>> cards = holm_family({"task": scorecard(data, resamples=100), "K": scorecard(data, mode="K", resamples=100)})
    >>> cards["task"]["holm_family"]["n_comparisons"] == 2 * cards["task"]["n_comparisons"]
    True
    """
    keys = list(cards)
    out = {k: dict(cards[k]) for k in keys}
    i_p = out[keys[0]]["comparison_fields"].index("p") if keys else 0
    ps = np.array([np.nan if c[i_p] is None else c[i_p] for k in keys for c in out[k]["comparisons"]], dtype=float)
    adjusted = iter(stats.holm(ps).tolist())
    n = int(np.isfinite(ps).sum())
    for k in keys:
        out[k]["comparisons"] = [c[:i_p + 1] + [_finite(next(adjusted))] for c in out[k]["comparisons"]]
        out[k]["holm_family"] = {"cards": keys, "n_comparisons": n}
    return out


#: The gap whose change across modes the report states: the Frobenius score minus path size on Spearman.
MODE_GAP = ("frobenius", "product_norm", "spearman")


def mode_gaps(data: ZooData, ground_truth: str = FORMED_BY, modes=REPORT_MODES, gap=MODE_GAP,
              resamples: int = RESAMPLES, seed: int = 0, thresholds: dict | None = None, level: float = LEVEL,
              circuit_by: str = "label") -> dict:
    """One score's gap from another in each of ``modes``, and how the gap changes between modes, paired.

    Why: each mode's scorecard gives the gap (``gap``: score minus ``against`` on ``statistic``) with its
    own interval, but whether the gap *changes* with the mode is a question about the difference of two
    gaps, whose interval two separate intervals cannot give (they are drawn apart, and the gaps are
    correlated: mostly the same models, the same batches). Here one bootstrap serves every mode: the
    batch draws are the same in every mode (``_model_draws``, same seed), and the top two levels resample
    the configurations, then the seeds, of the models that have a circuit in *any* of the modes; in each
    draw a mode averages over its own models with a circuit among those drawn. So each draw gives every
    mode's gap at once, and the difference ``gap(mode) - gap(modes[0])`` is taken draw by draw.

    Returns a JSON-ready dict: ``gap`` (score, against, statistic), ``modes``, ``bootstrap`` (``unit``,
    ``n``: the resampled units of the union), ``n_models`` per mode, ``gaps`` (``{mode: [estimate, lo,
    hi]}``, from these joint draws, so their intervals can differ slightly from each card's) and
    ``differences`` (``{"<mode>-<first mode>": [estimate, lo, hi, p]}``; ``p`` two-sided against 0,
    ``stats.p_value``, not Holm-adjusted: it is one comparison per pair of modes, reported beside the
    report's family, not in it). The estimates are each card's own (row 0: all the data).

    >>> data = ZooData.synthetic(np.random.default_rng(0), n_families=4, n_seeds=3)
    >>> out = mode_gaps(data, modes=("K", "K"), gap=("signal", "product_norm", "auroc"), resamples=100)
    >>> out["differences"]["K-K"][:3]                    # the same mode twice: exactly 0 in every draw
    [0.0, 0.0, 0.0]
    """
    modes = list(modes)
    if len(modes) < 2:
        raise ValueError(f"modes must name at least two modes to compare; got {modes}")
    score, against, statistic = gap
    if statistic not in STATISTICS:
        raise ValueError(f"gap's statistic must be one of {list(STATISTICS)}; got {statistic!r}")
    if score not in data.scores or against not in data.scores:
        raise ValueError(f"gap must name two scores of data ({list(data.scores)}); got {score!r}, {against!r}")
    th = dict(THRESHOLDS, **(thresholds or {}))
    names = list(data.scores)
    i_s, i_a = names.index(score), names.index(against)
    drawn = [_model_draws(data, ground_truth, m, resamples, seed, th, circuit_by) for m in modes]
    union = np.any([f for _, f, _, _ in drawn], axis=0)
    counts, n, unit = bootstrap_units(data.families, union, drawn[0][3], resamples, seed + 1)
    if n is None:
        raise ValueError(f"no model has a circuit in any of the modes {modes}")
    gap_draws = []
    for per, formed, _, _ in drawn:
        v = _aggregate({statistic: per[statistic]}, counts * formed[None].astype(float))[statistic]
        gap_draws.append(v[:, i_s] - v[:, i_a])                                    # [resamples + 1]

    def interval(d, bounds):
        return _rounded(stats.expanded_interval(d[1:], d[0], n, level), bounds)

    lo_s, hi_s = RANGE[statistic]
    spread = (lo_s - hi_s, hi_s - lo_s)
    out = {"gap": {"score": score, "against": against, "statistic": statistic}, "ground_truth": ground_truth,
           "modes": modes, "circuit_by": circuit_by, "resamples": resamples, "level": level,
           "bootstrap": {"unit": unit, "n": n},
           "n_models": {m: int(f.sum()) for m, (_, f, _, _) in zip(modes, drawn)},
           "gaps": {m: interval(d, spread) for m, d in zip(modes, gap_draws)}, "differences": {}}
    for m, d in zip(modes[1:], gap_draws[1:]):
        diff = d - gap_draws[0]
        out["differences"][f"{m}-{modes[0]}"] = interval(diff, (2 * spread[0], 2 * spread[1])) + [
            _finite(stats.p_value(diff[1:], diff[0], n))]
    return out


def split_configurations(data: ZooData, seed: int = 0) -> tuple[list, list]:
    """The zoo's configurations in two halves, stratified by task: ``(half_a, half_b)`` family names.

    Why stratified: a half without induction models, say, would test a rule on another question.
    Within each task the families are shuffled (seeded) and dealt alternately, the first to the
    half that has fewer so far, so the halves differ in size by at most one.

    >>> d = ZooData(["a", "b", "c", "d"], ["f1", "f2", "f3", "f4"], ["x", "x", "x", "y"], ["K"] * 4, {})
    >>> a, b = split_configurations(d)
    >>> sorted(a + b), abs(len(a) - len(b)) <= 1
    (['f1', 'f2', 'f3', 'f4'], True)
    """
    rng = np.random.default_rng(seed)
    fams = list(dict.fromkeys(data.families))
    task_of = {f: t for f, t in zip(data.families, data.tasks)}
    halves = ([], [])
    for task in dict.fromkeys(task_of[f] for f in fams):
        members = [f for f in fams if task_of[f] == task]
        for f in rng.permutation(members).tolist():
            halves[0 if len(halves[0]) <= len(halves[1]) else 1].append(f)
    return halves


def held_out(data: ZooData, statistic: str = "precision_at_k", ground_truth: str = FORMED_BY, mode: str = "task",
             resamples: int = RESAMPLES, seed: int = 0, thresholds: dict | None = None,
             candidates=None, halves_cards: tuple | None = None) -> dict:
    """Choose the best score by ``statistic`` on one half of the configurations, test it on the other.

    Why: a score recommended because it won on the zoo has been fitted to the zoo; only a half it
    was not chosen on says whether the win carries over. Both directions are run (choose on A,
    test on B; choose on B, test on A), each half's full scorecard is returned, and the rule's
    ``verdict`` lists, per direction, the chosen score's statistic on both halves and its
    difference from each size score on the half it was not chosen on, with intervals.
    ``candidates``: the scores the rule may choose (default all). ``halves_cards``: the
    ``(halves, cards)`` of an earlier call with the same data, ground truth, mode, resamples, seed and
    thresholds, which do not depend on ``statistic`` (a report asking several statistics computes them once).
    """
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {list(STATISTICS)}; got {statistic!r}")
    if halves_cards is None:
        a, b = split_configurations(data, seed)
        halves = {"A": a, "B": b}
        cards = {}
        for h, fams in halves.items():
            keep = [i for i, f in enumerate(data.families) if f in fams]
            cards[h] = scorecard(data.subset(keep), ground_truth, mode, resamples, seed, thresholds)
    else:
        halves, cards = halves_cards
    cand = list(candidates) if candidates is not None else list(data.scores)
    verdict = []
    for chosen_on, tested_on in (("A", "B"), ("B", "A")):
        st = cards[chosen_on]["stats"][statistic]
        best = max((s for s in cand if st[s][0] is not None), key=lambda s: st[s][0])
        test = cards[tested_on]
        diffs = {c[1]: c[3:6] for c in test["comparisons"] if c[0] == best and c[2] == statistic}
        rank = sorted((s for s in data.scores if test["stats"][statistic][s][0] is not None),
                      key=lambda s: -test["stats"][statistic][s][0])
        verdict.append({"chosen_on": chosen_on, "tested_on": tested_on, "chosen": best,
                        "on_chosen_half": st[best], "on_held_out_half": test["stats"][statistic][best],
                        "rank_on_held_out_half": rank.index(best) + 1 if best in rank else None,
                        "best_on_held_out_half": rank[0] if rank else None,
                        "against_size_on_held_out_half": diffs})
    return {"statistic": statistic, "ground_truth": ground_truth, "mode": mode, "halves": halves,
            "scorecards": cards, "verdict": verdict}


#: The thresholds ``sensitivity`` tries, one at a time, the others at their defaults.
#: Each at half, its default (``THRESHOLDS``) and twice; the all-default setting is computed once.
SENSITIVITY = {"min_effect": (0.01, 0.02, 0.04), "rel_effect": (0.1, 0.2, 0.4), "circuit_effect": (0.05, 0.1, 0.2)}


def sensitivity(data: ZooData, ground_truth: str = FORMED_BY, mode: str = "task", resamples: int = 200,
                seed: int = 0, grid: dict | None = None) -> list[dict]:
    """The scorecard's verdicts with each threshold varied (``SENSITIVITY``), one row per setting.

    Why: "causal" (0.02 nats and 20% of the largest) and "formed" (0.1 nats) are choices; a
    conclusion that flips when one moves by a factor of two is a conclusion about the threshold.
    Each row: the setting, the number of models whose circuit formed, and per statistic the
    leading score and ``{score: [estimate, lo, hi]}``.
    """
    grid = SENSITIVITY if grid is None else grid
    rows, default_done = [], False
    for key, values in grid.items():
        if key not in THRESHOLDS:
            raise ValueError(f"grid keys must be among {list(THRESHOLDS)}; got {key!r}")
        for v in values:
            if v == THRESHOLDS[key]:        # every threshold at its default: one setting, however reached
                if default_done:
                    continue
                default_done = True
            card = scorecard(data, ground_truth, mode, resamples, seed, {key: v})
            lead = {}
            for stat, by_score in card["stats"].items():
                ok = [s for s in by_score if by_score[s][0] is not None]
                lead[stat] = max(ok, key=lambda s: by_score[s][0]) if ok else None
            rows.append({"threshold": key, "value": v, "n_models": card["n_models"], "leader": lead,
                         "stats": card["stats"], "comparisons": card["comparisons"]})
    return rows


def _round(x, digits: int = 4):
    return None if x is None or not np.isfinite(x) else round(float(x), digits)


def _finite(x):
    """``x`` as a float, or None where it is missing or not finite (JSON has no NaN)."""
    return None if x is None or not np.isfinite(x) else float(x)


def _significant(x, digits: int = P_DIGITS):
    """``x`` to ``digits`` significant digits (a p-value of 3e-12 stays 3e-12, not 0), None stays None.

    >>> _significant(0.000123456), _significant(0.98765), _significant(None)
    (0.0001235, 0.9877, None)
    """
    return None if x is None else float(f"{x:.{digits - 1}e}")


def _written_p(cards: dict) -> dict:
    """``cards`` with every comparison's p and p_holm rounded to ``P_DIGITS`` significant digits (as written)."""
    out = {}
    for k, card in cards.items():
        f = card.get("comparison_fields", COMPARISON_FIELDS)
        i_p, i_h = f.index("p"), f.index("p_holm")
        out[k] = dict(card, comparisons=[c[:i_p] + [_significant(c[i_p]), _significant(c[i_h])] + c[i_h + 1:]
                                         for c in card["comparisons"]])
    return out


def _rounded(iv, bounds=(-np.inf, np.inf)) -> list:
    """``[estimate, lo, hi]`` rounded, the interval clipped to the statistic's range (the widening can pass it)."""
    lo, hi = (np.clip(x, *bounds) if np.isfinite(x) else x for x in (iv.lo, iv.hi))
    return [_round(iv.estimate), _round(lo), _round(hi)]


#: The report the CLI prints without a zoo at hand: shipped with the models' data, as the benchmark table.
def _report_path():
    from headspace import store
    return store.SHIPPED / "scorecard.json"




def zoo_report(zoo, scores=None, resamples: int = RESAMPLES, seed: int = 0, sensitivity_resamples: int = 200) -> dict:
    """Every scorecard, held-out split and threshold sensitivity of a zoo folder, JSON-ready.

    The controlled ground truth (``headspace.controlled``, ``excess-circuit``) is included when
    the zoo holds its file. Keys: ``scorecards`` (``"<ground truth>|<mode>"``), ``held_out``
    (``"<ground truth>|<mode>|<statistic>"``), ``sensitivity`` (``"<ground truth>|task"``), ``mode_gaps``
    (``{ground truth: mode_gaps(...)}``, the main one's), ``circuit_by_path`` (``"<ground truth>|<mode>"``:
    the main ground truth's cards in the task's and the largest path's mode with the circuit decided by the
    path alone, ``circuit_by="path"``; outside the Holm family, each with its own).
    """
    from headspace import benchmark, controlled
    extra = {}
    if (benchmark.zoo_dir(zoo) / controlled.FILE).is_file():
        extra[controlled.CONTROLLED] = controlled.read_zoo(zoo)[controlled.CONTROLLED]
    data = zoo_data(zoo, scores, extra)
    gts = [g for g in REPORT_GROUND_TRUTHS if g in data.ground_truths]
    out = {"format_version": 1, "scores": list(data.scores), "ground_truths": gts, "modes": list(REPORT_MODES),
           "statistics": list(STATISTICS), "thresholds": THRESHOLDS, "resamples": resamples,
           "scorecards": {}, "held_out": {}, "sensitivity": {}}
    for g in gts:
        for mode in REPORT_MODES:
            out["scorecards"][f"{g}|{mode}"] = scorecard(data, g, mode, resamples, seed)
            halves_cards = None                    # the halves' scorecards, the same for every statistic
            for stat in ("spearman", "partial_norm_product", "precision_at_k", "top1"):
                h = held_out(data, stat, g, mode, resamples, seed, halves_cards=halves_cards)
                halves_cards = (h["halves"], h["scorecards"])
                h["scorecards"] = {k: {"stats": v["stats"], "models": v["models"], "comparisons": v["comparisons"]}
                                   for k, v in h["scorecards"].items()}
                out["held_out"][f"{g}|{mode}|{stat}"] = h
        out["sensitivity"][f"{g}|task"] = [{k: r[k] for k in ("threshold", "value", "n_models", "leader", "stats")}
                                           for r in sensitivity(data, g, "task", sensitivity_resamples, seed)]
    # how the main ground truth's gap (MODE_GAP) changes with the mode, paired over one bootstrap
    out["mode_gaps"] = {FORMED_BY: mode_gaps(data, FORMED_BY, REPORT_MODES, MODE_GAP, resamples, seed)}
    # a sensitivity: the circuit decided by the path alone (the labelled-circuitless models with a path over the
    # threshold come in); each card keeps its own Holm family (a statement that nothing holds is only made
    # stronger by a smaller family; anything that holds there is reported as holding within its card)
    out["circuit_by_path"] = _written_p({f"{FORMED_BY}|{m}": scorecard(data, FORMED_BY, m, resamples, seed, circuit_by="path")
                                         for m in ("task", "largest")})
    # one Holm family over every scorecard of the report: the comparisons a text drawing on them makes,
    # adjusted on the unrounded p-values; then the p-values as written (P_DIGITS significant digits)
    out["scorecards"] = _written_p(holm_family(out["scorecards"]))
    for h in out["held_out"].values():
        h["scorecards"] = _written_p(h["scorecards"])
    out["p_digits"] = P_DIGITS
    return out


def read_report(path=None) -> dict:
    """The scorecard report shipped with the package, or the one at ``path``."""
    import json
    from pathlib import Path
    from headspace import store
    p = Path(path) if path is not None else store.models_dir() / "scorecard.json"
    try:
        return json.loads(p.read_bytes())
    except FileNotFoundError:
        raise ValueError(f"model file {p} is missing (python -m headspace.scorecard --zoo DIR writes it)") from None


if __name__ == "__main__":   # pragma: no cover
    import argparse
    import json
    import time
    from pathlib import Path
    ap = argparse.ArgumentParser(description="Write the zoo's scorecard report (read by python -m headspace bench).")
    ap.add_argument("--zoo", help="the zoo directory (default $HEADSPACE_ZOO)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    report = zoo_report(args.zoo)
    out = args.out or _report_path()
    out.write_text(json.dumps(report, separators=(",", ":")) + "\n")
    print(f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB) in {time.perf_counter() - t0:.1f} s")
