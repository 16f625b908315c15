"""A score's statistics within each configuration of the zoo, not pooled over them.

Why: the scorecard (``headspace.scorecard``) averages each statistic over every model with a
circuit, whatever its configuration. A review of the benchmark (issue 47) found that the pooled
average hides a sign reversal: on the recall models, the one task that forces V-composition, the
token diagonal ranks pairs far better than path size, and on the reverse-copy models with RMSNorm
far worse. ``by_configuration`` gives the scorecard of each configuration on its own: the same
three-level bootstrap, which within one configuration resamples its seeds and each drawn model's
evaluation batches (the top level has one unit to draw, so the interval is widened for the seeds:
``scorecard.scorecard`` widens by the number of models when there are fewer than two configurations).

>>> import numpy as np
>>> from headspace.scorecard import ZooData
>>> data = ZooData.synthetic(np.random.default_rng(0), n_families=3, n_seeds=4)
>>> rows = by_configuration(data, resamples=100, scores=("signal", "noise"))
>>> [r["configuration"] for r in rows], rows[0]["n_models"]
(['f0', 'f1', 'f2'], 4)
>>> est, lo, hi = rows[0]["stats"]["auroc"]["signal"]
>>> bool(lo > 0.5)
True
"""

from __future__ import annotations

from headspace import scorecard as sc

__all__ = ["by_configuration"]


def by_configuration(data: sc.ZooData, ground_truth: str = sc.FORMED_BY, mode: str = "task",
                     resamples: int = sc.RESAMPLES, seed: int = 0, scores=None, thresholds: dict | None = None,
                     pairs=()) -> list[dict]:
    """One row per configuration (``data.families``) with at least one model with a circuit.

    Each row: ``configuration``, ``task``, ``n_models`` (with a circuit), ``stats``
    (``{statistic: {score: [estimate, lo, hi]}}`` for ``scores``, default all), ``leader``
    (``{statistic: score}``, the highest estimate among ``scores``) and ``differences``
    (``{"a-b": {statistic: [difference, lo, hi]}}`` for each ``(a, b)`` of ``pairs``, paired over the same
    draws; the scorecard's comparisons give a score against a size score, so ``b`` must be one).
    """
    names = list(data.scores)
    scores = list(scores) if scores is not None else names
    unknown = [s for s in scores if s not in names] + [b for _, b in pairs if b not in sc.SIZE_SCORES]
    if unknown:
        raise ValueError(f"scores must be among {names} and each pair's second a size score {list(sc.SIZE_SCORES)}; "
                         f"got {unknown}")
    rows = []
    for fam in dict.fromkeys(data.families):
        keep = [i for i, f in enumerate(data.families) if f == fam]
        card = sc.scorecard(data.subset(keep), ground_truth, mode, resamples, seed, thresholds)
        if not card["n_models"]:
            continue
        stats = {st: {s: by[s] for s in scores} for st, by in card["stats"].items()}
        leader = {st: max((s for s in scores if by[s][0] is not None), key=lambda s: by[s][0], default=None)
                  for st, by in stats.items()}
        diffs = {}
        for a, b in pairs:
            diffs[f"{a}-{b}"] = {c[2]: c[3:6] for c in card["comparisons"] if c[0] == a and c[1] == b}
        rows.append({"configuration": fam, "task": data.tasks[keep[0]], "n_models": card["n_models"],
                     "models": card["models"], "stats": stats, "leader": leader, "differences": diffs})
    return rows
