"""How well each weight-based score ranks pairs of heads as the causal ground truth does, over training.

For the chosen model and mode, at every training checkpoint, every pair of heads (writer in an
earlier layer, reader in a later one) gets a score from each metric of ``headspace.composition``
(``shipped.scores``) and a ground-truth effect from ``headspace.causal.path_ablation`` (the loss
increase, in nats, when the writer's output is mean-ablated in the reader's input only, on the
site's fixed seeded batch). ``rank_correlation[metric][i]`` is Spearman's rank correlation of the
two over all pairs at ``steps[i]``; ``final`` is the same for the final weights. With only 16
pairs, and four induction heads that nearly tie, a single correlation is a noisy number: read the
curves, not one point. The step axis is the same for every shipped model
(``composition_over_training.step_range``), so switching the model moves only the curves.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["metric-agreement"].run({"mode": "K"})["outputs"]
>>> sorted(out["final"]) == sorted(METRICS)
True
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace.causal import rank_correlation
from headspace.composition import METRICS

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, METRIC_COLORS, METRIC_DASH, figure, scatter
from headspace_site.figure.outputs import METRIC_NAMES
from .composition_over_training import step_range
from headspace_site.figure.registry import Output, register


def agreement(model: str, step, mode: str) -> dict:
    """``{metric: Spearman rho}`` of each metric against path ablation over every pair, at ``step``."""
    return dict(_agreement(shipped.models_where(), model, step, mode))


@lru_cache(maxsize=256)
def _agreement(where: str, model: str, step, mode: str) -> tuple:
    """``agreement`` as (metric, rho) pairs, cached per models directory: a call needs every
    checkpoint's (about 30 x 8 rank correlations, too slow for a slider move), and a move of the model or
    mode returns to the same few. At most 2 models x 30 steps x 3 modes entries of 7 floats."""
    truth = shipped.later_pairs(shipped.scores(model, step, mode, shipped.CAUSAL))
    return tuple((m, rank_correlation(shipped.later_pairs(shipped.scores(model, step, mode, m)), truth))
                 for m in METRICS)


@register(
    "metric-agreement", "Which score ranks pairs of heads as path ablation does, over training",
    key="Each line: one score's rank agreement with path ablation over training (1: the same order). Shaded: the phase change.",
    params=[
        shipped.model_param(),
        shipped.mode_param(),
    ],
    outputs=[
        Output("steps", "checkpoints", "steps", "the training steps at which the weights were saved"),
        Output("rank_correlation", "rank correlation over training", "series",
               "Spearman's rank correlation of each score with path ablation over all pairs, at each checkpoint",
               index="steps", fold=True),
        Output("final", "rank correlation, final weights", "mapping",
               "the same correlation for the final weights"),
    ],
    needs_models=True,
)
def metric_agreement(model: str, mode: str) -> dict:
    steps = list(shipped.checkpoint_steps(model))
    per_step = [agreement(model, s, mode) for s in steps]
    rho = {m: [a[m] for a in per_step] for m in METRICS}
    final = agreement(model, None, mode)
    return {"figure": _figure(model, mode, steps, rho), "outputs": {"steps": steps, "rank_correlation": rho,
                                                                    "final": final}}


def _figure(model, mode, steps, rho) -> dict:
    lines = [scatter(steps, rho[m], name=METRIC_NAMES[m], color=METRIC_COLORS[m], mode="lines+markers", size=5,
                     line={"color": METRIC_COLORS[m], "width": 2, "dash": METRIC_DASH.get(m, "solid")})
             for m in METRICS]
    for trace in lines:
        trace["hoverinfo"] = "x+y+name"
    c = shipped.curve(model)
    shapes = []
    if c.get("phase_change_steps"):
        lo, hi = c["phase_change_steps"][:2]
        shapes.append({"type": "rect", "xref": "x", "yref": "y domain", "x0": lo, "x1": hi, "y0": 0, "y1": 1,
                       "fillcolor": "rgba(224,123,36,0.15)", "line": {"width": 0}, "layer": "below"})
    fig = figure(lines, title=f"{mode}: rank agreement with path ablation", height=420,
                 xaxis={"title": {"text": "training step"}, "zeroline": False, "range": step_range()},
                 yaxis={"title": {"text": "Spearman ρ with path ablation"}, "range": [-1.05, 1.05],
                        "zeroline": True, "zerolinecolor": COLORS["muted"]},
                 shapes=shapes)
    fig["layout"]["legend"] = {**fig["layout"]["legend"], "y": -0.2, "yanchor": "top"}
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "b": 120}
    return fig
