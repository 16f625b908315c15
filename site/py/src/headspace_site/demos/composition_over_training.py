"""One pair of heads scored at every training checkpoint, by every metric, beside the loss.

For the chosen model and mode, ``scores[metric][i]`` is the score of the pair (``head1`` writing,
``head2`` reading) in ``all_composition_scores`` of the checkpoint at ``steps[i]``: the very
numbers the composition-scores heatmap shows at that step. The right panel is the loss on
repeated random text from the model's ``training_curve.json``: the first half cannot be predicted
(its loss stays near ln d_vocab); the repeated half falls once an induction circuit forms. The
shaded band is the phase change recorded there (the best induction score rising from 10 % to 90 %
of the way up). The line "path ablation of this pair" there is the causal ground truth for the pair, ``scores["causal"]``:
``headspace.causal.path_ablation`` at each checkpoint, in nats.

The axes a model switch would move are fixed over every shipped model (``step_range``, and the
loss axis from every model's curve), so switching the model moves only the data.

Defaults: the previous-token head and the induction head of the model, found from the final
weights' attention patterns (``headspace.heads``).

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["composition-over-training"].run({})["outputs"]
>>> sorted(out["scores"]) == sorted(METRICS + ("causal",)), len(out["steps"]) == len(out["scores"]["frobenius"])
(True, True)
"""

from __future__ import annotations

import numpy as np

from headspace.composition import METRICS

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, METRIC_COLORS, METRIC_DASH, scatter, two_panels
from headspace_site.figure.outputs import METRIC_NAMES
from headspace_site.figure.registry import Output, Param, register


def step_range() -> list[float]:
    """The training-step axis, the same for every shipped model: every checkpoint and every point of
    every training curve, with 2% of the span added at each end (room for the end markers)."""
    steps = [s for name in shipped.MODEL_NAMES
             for s in (*shipped.checkpoint_steps(name), *shipped.curve(name)["step"])]
    lo, hi = min(steps), max(steps)
    pad = 0.02 * ((hi - lo) or 1)
    return [lo - pad, hi + pad]


def _loss_range(causal: list[float]) -> list[float]:
    """The loss axis: 0 to the highest loss of every shipped model's training curve, 5% padded,
    widened only where this pair's path ablation (near 0, in nats) falls outside it."""
    hi = max(max(c["first_half_loss"] + c["repeated_half_loss"]) for c in map(shipped.curve, shipped.MODEL_NAMES))
    pad = 0.05 * hi
    return [round(min(-pad, *causal), 4), round(max(hi + pad, *causal), 4)]


def pair_over_training(model: str, mode: str, pair: tuple[int, int, int, int]) -> tuple[list[int], dict]:
    """``(steps, {metric: [score at each step]})`` for one pair ``(l1, h1, l2, h2)``; ``"causal"`` is
    the pair's path-ablation effect (nats)."""
    steps = list(shipped.checkpoint_steps(model))
    l1, h1, l2, h2 = pair
    return steps, {m: [float(shipped.scores(model, s, mode, m)[l1, h1, l2, h2]) for s in steps]
                   for m in shipped.SCORE_OPTIONS}


@register(
    "composition-over-training", "One pair of heads over training, by every metric",
    key="First panel: the pair's score by every metric over training; second: the loss and path ablation. Shaded: the phase change.",
    params=[
        shipped.model_param(),
        shipped.mode_param(),
        Param("head1", "Earlier head (writes)", "select", shipped.PREV, options=shipped.HEAD1_OPTIONS,
              help="L0H1 is layer 0, head 1; 'previous-token' is the model's previous-token head"),
        Param("head2", "Later head (reads)", "select", shipped.INDUCTION, options=shipped.HEAD2_OPTIONS,
              help="L1H2 is layer 1, head 2; 'induction' is the model's induction head"),
    ],
    outputs=[
        Output("steps", "checkpoints", "steps", "the training steps at which the weights were saved"),
        Output("scores", "scores over training", "series",
               "the pair's score at each checkpoint, by every metric, and path ablation in nats",
               index="steps", fold=True),
    ],
    needs_models=True,
)
def composition_over_training(model: str, mode: str, head1: str, head2: str) -> dict:
    a, b = shipped.parse_head(head1, model), shipped.parse_head(head2, model)
    steps, s = pair_over_training(model, mode, a + b)
    return {"figure": _figure(model, mode, a, b, steps, s), "outputs": {"steps": steps, "scores": s}}


def _figure(model, mode, a, b, steps, s) -> dict:
    left = [scatter(steps, s[m], name=METRIC_NAMES[m], color=METRIC_COLORS[m], mode="lines+markers", size=5,
                    line={"color": METRIC_COLORS[m], "width": 2, "dash": METRIC_DASH.get(m, "solid")})
            for m in METRICS]
    c = shipped.curve(model)
    right = [scatter(c["step"], c["first_half_loss"], name="loss, first (random) half", color=COLORS["muted"],
                     mode="lines", width=1.5),
             scatter(c["step"], c["repeated_half_loss"], name="loss, repeated half", color=COLORS["ink"],
                     mode="lines", width=2),
             scatter(steps, s[shipped.CAUSAL], name="path ablation of this pair (Δ loss)",
                     color=METRIC_COLORS[shipped.CAUSAL], mode="lines+markers", size=5, width=2)]
    shapes = []
    if c.get("phase_change_steps"):
        lo, hi = c["phase_change_steps"][:2]
        for ax in ("x", "x2"):
            shapes.append({"type": "rect", "xref": ax, "yref": "y" + ax[1:] + " domain",  # its panel alone
                           "x0": lo, "x1": hi, "y0": 0, "y1": 1, "fillcolor": "rgba(224,123,36,0.15)",
                           "line": {"width": 0}, "layer": "below"})
    for trace in right:                       # two_panels moves these to x2/y2
        trace["hoverinfo"] = "x+y+name"
    vals = [v for m in METRICS for v in s[m]]
    ymin = min(0.0, float(np.floor(min(vals) * 10) / 10))
    fig = two_panels(left, right,
                     titles=(f"{mode}-composition of {shipped.head_label(*a, model)} → "
                             f"{shipped.head_label(*b, model)}", "loss and path ablation (nats)"),
                     split=0.56, gap=0.12, height=440,
                     xaxis={"title": {"text": "training step"}, "zeroline": False, "range": step_range()},
                     yaxis={"title": {"text": "score"}, "range": [ymin, 1.02], "zeroline": True},
                     xaxis2={"title": {"text": "training step"}, "zeroline": False, "range": step_range()},
                     yaxis2={"title": {"text": "loss (nats)"}, "zeroline": False,
                             "range": _loss_range(s[shipped.CAUSAL])},
                     shapes=shapes)
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "b": 110}
    return fig

