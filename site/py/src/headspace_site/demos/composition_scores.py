"""Composition scores of every earlier head against every later head of a shipped toy model.

``scores`` is exactly ``headspace.composition.all_composition_scores`` of the model's weights (norm
scale folded in, see ``shipped``) at the chosen training step, for the chosen mode and metric
(``token`` and ``whitened`` through the embedding the heads see; ``causal`` is
``headspace.causal.path_ablation`` on the site's fixed seeded batch, in nats):
``scores[l1][h1][l2][h2]`` scores head ``h1`` of layer ``l1`` writing (its ``W_V W_O``) against
head ``h2`` of layer ``l2`` reading, through ``W_Q W_K^T`` (Q), ``W_K W_Q^T`` (K) or ``W_V W_O``
(V); it is 0 unless ``l2 > l1``. ``top_pair`` is ``[l1, h1, l2, h2]`` of the largest score.

The heatmap shows writers (rows: heads of every layer but the last) against readers (columns:
heads of every layer but the first); cells with ``l2 <= l1`` are blank. The previous-token head
and the induction head, found from attention patterns on a seeded repeated sequence
(``headspace.heads``), are labelled, and the top pair is outlined.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["composition-scores"].run({"mode": "K"})["outputs"]
>>> len(out["scores"]), len(out["top_pair"])
(2, 4)
"""

from __future__ import annotations

import numpy as np


from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, SCORE_SCALE, colorbar_ticks, figure
from headspace_site.figure.outputs import METRIC_NAMES, head
from headspace_site.figure.registry import Output, Param, register

_MODE_HELP = "which input of the later head reads the earlier head's output: query, key or value"


def top_pair(s: np.ndarray) -> list[int]:
    """``[l1, h1, l2, h2]`` of the largest score among pairs with ``l2 > l1`` (first on ties).

    >>> s = np.zeros((2, 2, 2, 2)); s[0, 1, 1, 0] = 0.3
    >>> top_pair(s)
    [0, 1, 1, 0]
    """
    s = np.asarray(s, dtype=float)
    n = s.shape[0]
    later = np.arange(n)[:, None] < np.arange(n)[None, :]
    masked = np.where(later[:, None, :, None], s, -np.inf)
    return [int(i) for i in np.unravel_index(int(np.argmax(masked)), s.shape)]


@register(
    "composition-scores", "Composition scores between the heads of a trained model",
    key='Row: the earlier head that writes; column: the later head that reads; colour and number: the score; outlined: the top pair.',
    params=[
        shipped.model_param(),
        shipped.mode_param(help=_MODE_HELP),
        Param("metric", "Metric", "select", "frobenius", options=shipped.SCORE_OPTIONS,
              option_labels=tuple(METRIC_NAMES[m] for m in shipped.SCORE_OPTIONS),
              help="how the score of a pair of heads is computed; path ablation is the ground truth: the loss "
                   "increase (nats) when the writer's output is mean-ablated in the reader's input only"),
        Param("step", "Training step", "select", "final", options=shipped.STEP_OPTIONS,
              help="final weights, or a training checkpoint (a model's latest checkpoint not after this step)"),
    ],
    outputs=[
        Output("scores", "scores", "head-pairs", "every pair's score: the earlier head (row) writes, the later "
               "head (column) reads", fold=True),
        Output("top_pair", "top pair", "head-pair", "the pair with the largest score, writer → reader"),
    ],
    needs_models=True,
)
def composition_scores(model: str, mode: str, metric: str, step) -> dict:
    at = shipped.resolve_step(model, step)
    s = shipped.scores(model, at, mode, metric)
    top = top_pair(s)
    return {"figure": _figure(s, top, model, mode, metric, step, at), "outputs": {"scores": s, "top_pair": top}}


def _figure(s, top, model, mode, metric, step, at) -> dict:
    n_layers, n_heads = s.shape[:2]
    rows = [(l, h) for l in range(n_layers - 1) for h in range(n_heads)]       # writers
    cols = [(l, h) for l in range(1, n_layers) for h in range(n_heads)]       # readers
    z = [[round(float(s[a][b][c][d]), 4) if c > a else None for (c, d) in cols] for (a, b) in rows]
    # bare names on the axes, so the grid keeps its width on a phone; the title names the two roles
    ylab = [head(l, h) for l, h in rows]
    xlab = [head(l, h) for l, h in cols]
    vals = [v for row in z for v in row if v is not None]
    lo, hi = min(0.0, min(vals)), max(vals) if max(vals) > 0 else 1.0
    heat = {"type": "heatmap", "z": z, "x": list(range(len(cols))), "y": list(range(len(rows))),
            "customdata": [[[ylab[i], xlab[j]] for j in range(len(cols))] for i in range(len(rows))], "zmin": round(lo, 4), "zmax": round(hi, 4),
            "colorscale": SCORE_SCALE, "xgap": 2, "ygap": 2, "name": METRIC_NAMES[metric],
            "colorbar": {"title": {"text": METRIC_NAMES[metric]}, "thickness": 12, **colorbar_ticks(round(lo, 4), round(hi, 4))},
            "hovertemplate": "writer %{customdata[0]}<br>reader %{customdata[1]}<br>score %{z}<extra></extra>"}
    notes = [{"x": j, "y": i, "text": f"{v:.3f}", "showarrow": False,
              "font": {"size": 11, "color": "white" if (v - lo) > 0.55 * (hi - lo) else COLORS["ink"]}}
             for i, row in enumerate(z) for j, v in enumerate(row) if v is not None]
    ti, tj = rows.index((top[0], top[1])), cols.index((top[2], top[3]))
    box = {"type": "rect", "xref": "x", "yref": "y", "x0": tj - 0.5, "x1": tj + 0.5, "y0": ti - 0.5,
           "y1": ti + 0.5, "line": {"color": COLORS["orange"], "width": 3}}
    when = "final weights" if at is None else f"step {at}" + ("" if step == at else f" (latest checkpoint before {step})")
    unit = "Δ loss (nats)" if metric == shipped.CAUSAL else METRIC_NAMES[metric]
    heat["colorbar"]["title"]["text"] = unit
    prev, ind = shipped.roles(model)
    title = (f"{mode}-composition, {METRIC_NAMES[metric]}: {shipped.model_words(model)}, {when}; "
             f"previous-token head {head(*prev)}, induction head {head(*ind)}")
    fig = figure([heat], title=title, height=430, showlegend=False,
                 xaxis={"title": {"text": "later head (reads)"}, "tickvals": list(range(len(cols))),
                        "ticktext": xlab, "zeroline": False, "showgrid": False, "tickangle": 0},
                 yaxis={"title": {"text": "earlier head (writes)"}, "tickvals": list(range(len(rows))),
                        "ticktext": ylab, "autorange": "reversed", "zeroline": False, "showgrid": False,
                        "automargin": True},
                 annotations=notes, shapes=[box])
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "l": 60, "b": 60}
    return fig
