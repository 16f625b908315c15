"""The benchmark's results at a glance: every score's statistic with its 95% interval, per ground truth.

Each row is one score (its name as the articles write it); on it, one dot per ground truth with a
line across its interval, read from the shipped tables, so the figure follows the data when the zoo
is retrained. By default, the models whose circuit formed, each in its task's mode, from
``scorecard.json``: the numbers and intervals (over configurations, seeds and batches) of the
article's tables. Any other group of models (every model, a task's, or one family's seeds) and mode
comes from ``benchmark.json``, the table ``score-benchmark`` reads (intervals over seeds and batches).
The statistic is Spearman's ρ over each model's pairs, or the AUROC at finding the causal pairs. The
dashed line is what a score with no information gets: ρ = 0, AUROC = 0.5.

Outputs: ``best``, ``{score: mean}`` of the score with the highest mean under the first ground truth
drawn (ties are common: read the intervals); ``n_models``, how many models the statistics average over.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["score-intervals"].run({})["outputs"]
>>> out["n_models"] > 0 and len(out["best"]) == 1
True
"""

from __future__ import annotations

import json
from functools import lru_cache

from headspace import store

from headspace_site.demos.score_benchmark import GROUND_TRUTHS, GROUPS, MODE_OPTIONS, SCORES, _truth_words, row
from headspace_site.figure.names import METRIC_NAMES, group as group_words
from headspace_site.figure.registry import Output, Param, register
from headspace_site.figure.style import COLORS, figure, scatter

STATISTICS = ("spearman", "auroc")
_STAT_WORDS = {"spearman": "Spearman ρ", "auroc": "AUROC"}
_CHANCE = {"spearman": 0.0, "auroc": 0.5}
_COLOURS = (COLORS["blue"], COLORS["orange"], COLORS["green"], COLORS["purple"])
_STEP = 0.18   # each ground truth's offset within a score's row


FORMED = "formed"   # the models whose circuit formed: the article's tables (scorecard.json)
CARD = "scorecard.json"


def _mode_words(mode: str) -> str:
    return "each model in its task's mode" if mode == "task" else f"{mode}-composition"


def _group_words(group: str) -> str:
    return "formed circuits (the tables)" if group == FORMED else group_words(group)


@lru_cache(maxsize=2)
def _card(where: str) -> dict:
    path = store.models_dir() / CARD
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise store.MissingModelFile(path) from None   # the browser's worker fetches it and calls again


def rows(statistic: str, group: str, mode: str) -> tuple[list[str], list[list[tuple[float, float, float]]], int]:
    """``(ground truths, [per ground truth: (mean, lo, hi) per score in SCORES], number of models)``."""
    if group == FORMED:
        card = _card(str(store.models_dir()))
        truths = [g for g in card["ground_truths"] if f"{g}|task" in card["scorecards"]]
        out = [[tuple(card["scorecards"][f"{g}|task"]["stats"][statistic][s]) for s in SCORES] for g in truths]
        return truths, out, int(card["scorecards"][f"{truths[0]}|task"]["n_models"])
    out, n = [], 0
    for truth in GROUND_TRUTHS:
        rs = [row(s, truth, group, mode) for s in SCORES]
        n = max([n] + [r["n_models"] for r in rs])
        out.append([(r[statistic], r[f"{statistic}_lo"], r[f"{statistic}_hi"]) for r in rs])
    return list(GROUND_TRUTHS), out, n


def _truth(key: str) -> str:
    """A ground truth in words, short enough for a phone's legend; "excess" is the patch's loss minus a
    control's that pushes as far in a random direction (the article's ground truth that leaves size out)."""
    if key.startswith("excess"):
        return "excess, circuit positions"
    return _truth_words(key).replace(" ablation", "")


@register(
    "score-intervals", "Every score's result with its interval, per ground truth",
    key="One row per score; a dot per ground truth (the ablation, where the loss is read), its line the "
        "95% interval; dashed: no information.",
    params=[
        Param("statistic", "statistic", "select", "spearman", options=STATISTICS,
              option_labels=tuple(_STAT_WORDS[s] for s in STATISTICS),
              help="rank correlation with the ground truth over each model's pairs, or AUROC at finding the "
                   "causal pairs"),
        Param("group", "models", "select", FORMED, options=(FORMED,) + GROUPS,
              option_labels=tuple(_group_words(g) for g in (FORMED,) + GROUPS),
              help="the models whose circuit formed (the article's tables), every model, one task's, or one "
                   "configuration's seeds"),
        Param("mode", "composition", "select", "task", options=MODE_OPTIONS,
              option_labels=tuple(_mode_words(m) for m in MODE_OPTIONS), active_when={"group": {"not": [FORMED]}},
              inactive="The tables read each model in its task's mode",
              help="which input of the later head: each model's own task's mode, or one mode for every model"),
    ],
    outputs=[
        Output("best", "highest mean", "mapping",
               "the score with the highest mean under the first ground truth; whether it beats another is for "
               "the paired difference's interval to say"),
        Output("n_models", "models", "integer", "how many models the statistics average over"),
    ],
    needs_models=True,
)
def score_intervals(statistic: str, group: str, mode: str) -> dict:
    names = [METRIC_NAMES.get(s, s) for s in SCORES]
    truths, per_truth, n_models = rows(statistic, group, mode if group != FORMED else "task")
    traces = []
    for k, (truth, stats) in enumerate(zip(truths, per_truth)):
        ys = [i + (k - (len(truths) - 1) / 2) * _STEP for i in range(len(SCORES))]
        span_x, span_y = [], []
        for y, (_, lo, hi) in zip(ys, stats):
            if lo is not None and hi is not None:   # no interval where no model has a causal pair (AUROC)
                span_x += [lo, hi, None]
                span_y += [y, y, None]
        shown = [(m, y) for (m, _, _), y in zip(stats, ys) if m is not None]
        colour = _COLOURS[k % len(_COLOURS)]
        traces.append({**scatter([0], [0], name=_truth(truth), color=colour, mode="lines", width=1.5,
                                 legendgroup=truth, showlegend=False), "x": span_x or [None], "y": span_y or [None]})
        traces.append({**scatter([0], [0], name=_truth(truth), color=colour, size=7, legendgroup=truth),
                       "x": [m for m, _ in shown] or [None], "y": [y for _, y in shown] or [None]})
    chance = _CHANCE[statistic]
    traces.insert(0, scatter([chance, chance], [-0.6, len(SCORES) - 0.4], name="no information", mode="lines",
                             color=COLORS["muted"], showlegend=False,
                             line={"color": COLORS["muted"], "width": 1, "dash": "dash"}))
    lo = -0.6 if statistic == "spearman" else 0.0
    where = "" if group == FORMED else f"; {_mode_words(mode)}"
    fig = figure(traces, title=f"{_STAT_WORDS[statistic]}: {_group_words(group)}{where}", height=470,
                 xaxis={"title": {"text": _STAT_WORDS[statistic]}, "range": [lo, 1.0], "zeroline": False},
                 yaxis={"tickmode": "array", "tickvals": list(range(len(SCORES))), "ticktext": names,
                        "range": [len(SCORES) - 0.4, -0.6], "zeroline": False, "showgrid": False})
    first = {names[i]: m for i, (m, _, _) in enumerate(per_truth[0]) if m is not None}
    top = max(first, key=first.get) if first else None
    best = {top: first[top]} if top else {}     # empty where these models have no causal pair to find
    return {"figure": fig, "outputs": {"best": best, "n_models": int(n_models)}}
