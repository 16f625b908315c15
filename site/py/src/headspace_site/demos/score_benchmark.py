"""Which composition score should you trust? One score against one ground truth, on a family of models.

The benchmark (``headspace.benchmark``) scored every pair of heads of every model of the zoo
with every weight score, and measured four causal ground truths on 20 held-out batches; the
table of statistics and every pair's numbers ship as ``benchmark.json`` beside the models (the
browser fetches it for the page that shows this figure). Nothing is recomputed here: the demo
picks rows.

Left: each pair of heads of the chosen models, its score's rank within its model (0 the lowest,
1 the highest: models with different scales pool, and Spearman's correlation reads ranks) against
its causal effect (nats), pairs counted causal (effect at least ``MIN_EFFECT`` nats and
``REL_EFFECT`` of the model's largest) in orange. Right: the ROC curve of that rank at finding the
causal pairs, and the diagonal of a score that knows nothing. The axes are the same for every
choice, so a reader's move redraws the points in place. Outputs: the mean over models of Spearman's correlation and of the
AUROC, each with its 95% interval over seeds and evaluation batches.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["score-benchmark"].run({})["outputs"]
>>> len(out["spearman"]), out["n_models"] >= 3
(3, True)
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from headspace import store
from headspace.benchmark import FAMILIES, GT_NAMES
from headspace.pair_scores import SCORES as PAIR_SCORES
from headspace.tasks import TASKS

from headspace_site.figure.style import COLORS, figure, scatter, two_panels
from headspace_site.figure.names import METRIC_NAMES, group as group_words
from headspace_site.figure.registry import Output, Param, register

FILE = "benchmark.json"
MODE_OPTIONS = ("task", "Q", "K", "V")


@lru_cache(maxsize=2)
def _load(where: str) -> dict:
    path = store.models_dir() / FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise store.MissingModelFile(path) from None   # the browser's worker fetches it and calls again
    return json.loads(data)


def table() -> dict:
    """The benchmark's table (``headspace/models/benchmark.json``), read once per models directory."""
    return _load(str(store.models_dir()))


# The choices, declared from the code (the table is read only when the figure runs: in the browser
# it is fetched then); tests/unit/test_zoo.py checks the table has exactly these.
SCORES = tuple(PAIR_SCORES)
GROUND_TRUTHS = GT_NAMES
GROUPS = ("all",) + TASKS + FAMILIES


def row(score: str, ground_truth: str, group: str, mode: str) -> dict:
    """The table's row for these choices, as ``{field: value}``."""
    t = table()
    fields = t["row_fields"]
    for r in t["rows"]:
        if r[0] == group and r[1] == mode and r[2] == ground_truth and r[3] == score:
            return dict(zip(fields, r))
    raise ValueError(f"no benchmark row for score={score!r}, ground_truth={ground_truth!r}, group={group!r}, "
                     f"mode={mode!r}")


def members(group: str) -> list[dict]:
    """The zoo's models in ``group`` (``"all"``, a task or a family)."""
    ms = table()["models"]
    return [m for m in ms if group in ("all", m["task"], m["family"])]


def points(score: str, ground_truth: str, group: str, mode: str):
    """``(score, effect, causal, score rank within its model in [0, 1])`` over every pair of the group's models."""
    from headspace.benchmark import MIN_EFFECT, REL_EFFECT
    t = table()
    xs, ys, pos, rank = [], [], [], []
    for m in members(group):
        mi = t["modes"].index(t["mode_of_task"][m["task"]] if mode == "task" else mode)
        x = np.asarray(m["scores"][score][mi], float)
        y = np.asarray(m["ground_truth"][ground_truth][mi], float)
        p = (y >= MIN_EFFECT) & (y >= REL_EFFECT * y.max())
        order = np.argsort(np.argsort(x, kind="stable"), kind="stable")
        xs.append(x), ys.append(y), pos.append(p), rank.append(order / max(len(x) - 1, 1))
    return tuple(np.concatenate(a) for a in (xs, ys, pos, rank))


def roc_curve(rank, causal):
    """False and true positive rates as the threshold on ``rank`` falls (pooled pairs)."""
    order = np.argsort(-rank, kind="stable")
    p = causal[order]
    n_pos, n_neg = max(p.sum(), 1), max((~p).sum(), 1)
    tpr = np.concatenate([[0.0], np.cumsum(p) / n_pos])
    fpr = np.concatenate([[0.0], np.cumsum(~p) / n_neg])
    return fpr, tpr


def _truth_words(key: str) -> str:
    """A ground truth's key in words: ``"mean-circuit"`` -> ``"mean ablation, circuit positions"``."""
    how, where = (key.split("-", 1) + [""])[:2]
    return f"{how} ablation, " + ("all positions" if where == "all" else f"{where} positions")


def _mode_param():
    return Param("mode", "composition", "select", "task", options=MODE_OPTIONS,
                 help="which input of the later head: each model's own task's mode (induction K, reverse V, "
                      "lookup Q, text K), or one mode for every model")


@register(
    "score-benchmark", "Which composition score ranks pairs of heads as their causal effect does, across the zoo",
    key="First panel: each pair's score, ranked within its model, against its causal effect; second: the ROC curve of finding the causal pairs by that rank.",
    params=[
        Param("score", "score", "select", "frobenius" if "frobenius" in SCORES else SCORES[0], options=SCORES,
              option_labels=tuple(METRIC_NAMES.get(s, s) for s in SCORES)),
        Param("ground_truth", "ground truth", "select",
              "mean-circuit" if "mean-circuit" in GROUND_TRUTHS else GROUND_TRUTHS[0], options=GROUND_TRUTHS,
              option_labels=tuple(_truth_words(g) for g in GROUND_TRUTHS),
              help="path ablation by the mean or by resampling; loss averaged over all positions or only "
                   "where the task's circuit acts"),
        Param("group", "models", "select", "all", options=GROUPS, option_labels=tuple(group_words(g) for g in GROUPS),
              help="every model, one task's, or one configuration's three seeds"),
        _mode_param(),
    ],
    outputs=[
        Output("spearman", "Spearman ρ", "vector", "mean over models of the rank correlation of the score "
               "with the ground truth over each model's pairs; then the 95% interval", labels=("mean", "low", "high")),
        Output("auroc", "AUROC", "vector", "mean over models of the area under the ROC curve at finding the "
               "causal pairs; then the 95% interval", labels=("mean", "low", "high")),
        Output("n_models", "models", "integer", "how many models the statistics average over"),
        Output("n_pairs", "pairs", "integer", "pairs of heads in the scatter"),
    ],
    needs_models=True,
)
def score_benchmark(score: str, ground_truth: str, group: str, mode: str) -> dict:
    r = row(score, ground_truth, group, mode)
    x, y, causal, rank = points(score, ground_truth, group, mode)
    fpr, tpr = roc_curve(rank, causal)
    left = [scatter(rank[~causal], y[~causal], name="other pairs", color=COLORS["muted"], size=5, opacity=0.7),
            scatter(rank[causal], y[causal], name="causal pairs", color=COLORS["orange"], size=6)]
    right = [scatter([0, 1], [0, 1], name="chance", color=COLORS["muted"], mode="lines",
                     line={"color": COLORS["muted"], "width": 1, "dash": "dot"}),
             scatter(fpr, tpr, name="ROC (pooled)", color=COLORS["blue"], mode="lines")]
    # The left title names only the score (the ground truth is the control beside it): a title that
    # wrapped for some settings changed the figure's height, and every move then needed plotly.
    fig = two_panels(left, right, titles=(METRIC_NAMES.get(score, score), "finding the causal pairs"),
                     split=0.56, gap=0.14, height=400,
                     xaxis={"title": {"text": "score's rank in its model"}, "range": [-0.03, 1.03], "zeroline": False},
                     yaxis={"title": {"text": "effect (nats)"}},
                     xaxis2={"title": {"text": "false positive rate"}, "range": [0, 1], "zeroline": False},
                     yaxis2={"title": {"text": "true positive rate"}, "range": [0, 1.02], "zeroline": False})
    spearman = [r["spearman"], r["spearman_lo"], r["spearman_hi"]]
    auc = [r["auroc"], r["auroc_lo"], r["auroc_hi"]]
    return {"figure": fig, "outputs": {"spearman": spearman, "auroc": auc, "n_models": r["n_models"],
                                       "n_pairs": int(len(x))}}
