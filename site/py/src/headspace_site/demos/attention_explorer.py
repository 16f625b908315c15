"""Where every head of a shipped model looks, on a sequence the reader types.

One heatmap per head (rows: layers; columns: heads), query position down, key position across,
from ``Model.attention_patterns``. The selected query's row is outlined in every head, and the
loss at each position is drawn underneath. On a sequence whose second half repeats a span, a
previous-token head shows a stripe just below the diagonal, an induction head a stripe offset by
the span's length, and the loss falls in the repeat.

Outputs: ``patterns`` [n_layers][n_heads][pos][pos]; ``loss`` (nats, predicting token ``i + 1`` at
position ``i``); ``prev_token_scores`` and ``induction_scores`` [n_layers][n_heads] on this sequence
(``heads.sequence_scores``).

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["attention-explorer"].run({"tokens": "1 2 3 1 2 3"})["outputs"]
>>> len(out["patterns"]), len(out["patterns"][0]), len(out["patterns"][0][0]), len(out["loss"])
(2, 4, 6, 5)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace.heads import sequence_scores
from headspace.model import cross_entropy

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, figure, named_colorbar
from headspace_site.figure.outputs import head
from headspace_site.figure.registry import Output, register

#: attention 0 is the page itself (transparent), 1 the full accent colour: legible in both schemes
ATTENTION_SCALE = [[0.0, "rgba(47,111,222,0)"], [1.0, "rgba(47,111,222,1)"]]


@register(
    "attention-explorer", "Attention patterns of every head on your sequence",
    key='One grid per head (L0H1: layer 0, head 1, with its score): row the query position, column the key, darker more attention; bars: the loss.',
    params=shipped.sequence_params(
        "query", "Query position", last=-1,
        help="the position whose attention is outlined in every head (the last one if the sequence is shorter)"),
    outputs=[
        Output("patterns", "attention patterns", "tensor",
               "every head's attention weights, the heatmaps' values",
               labels=("layers", "heads", "query positions", "key positions")),
        Output("loss", "loss by position", "sequence",
               "the loss (nats) of predicting the next token at each position", fold=True),
        Output("prev_token_scores", "previous-token scores", "layer-head",
               "each head's mean attention to the token just before the query"),
        Output("induction_scores", "induction scores", "layer-head",
               "each head's mean attention, in the repeat, to the token after the earlier copy of the query"),
    ],
    needs_models=True,
)
def attention_explorer(tokens: list[int], query: int, model: str, step) -> dict:
    toks = np.asarray(tokens)
    pattern, loss, prev, induction = _forward(shipped.models_where(), model,
                                              shipped.resolve_step(model, step), tuple(tokens))
    q = min(query, len(toks) - 1)
    outputs = {"patterns": np.round(pattern, 6), "loss": np.round(loss, 6),
               "prev_token_scores": np.round(prev, 6), "induction_scores": np.round(induction, 6)}
    return {"figure": _figure(pattern, loss, prev, induction, toks, q, model, step), "outputs": outputs}


@lru_cache(maxsize=4)
def _forward(where: str, model: str, step, tokens: tuple) -> tuple:
    """(patterns, loss, previous-token scores, induction scores), read-only: the forward pass
    depends on the model and the tokens, not on the query a slider moves."""
    m = shipped.weights(model, step)
    toks = np.asarray(tokens)
    logits, pattern = m.run(toks)
    out = (pattern, cross_entropy(logits, toks), *sequence_scores(pattern, toks))
    for a in out:
        a.setflags(write=False)
    return out


def _figure(pattern, loss, prev, induction, toks, q, model, step) -> dict:
    L, H, n = pattern.shape[0], pattern.shape[1], len(toks)
    # gap_y: a row's tick labels and the next row's titles, which wrap to two lines on a phone
    gap_x, gap_y, top, heat_bottom, loss_top = 0.04, 0.1, 0.93, 0.3, 0.17
    width = (1 - gap_x * (H - 1)) / H
    row_h = (top - heat_bottom - gap_y * (L - 1)) / L
    traces, layout, notes, shapes = [], {}, [], []
    ticks = list(range(0, n, 4 * -(-n // 12)))  # about three ticks a panel: legible on a phone
    for l in range(L):
        for h in range(H):
            k = l * H + h + 1
            ax = "" if k == 1 else str(k)
            x0 = h * (width + gap_x)
            y1 = top - l * (row_h + gap_y)
            traces.append({  # z an array: Demo.run makes it lists in one call, not row by row
                "type": "heatmap", "z": np.round(pattern[l, h], 3), "xaxis": f"x{ax}", "yaxis": f"y{ax}",
                "zmin": 0, "zmax": 1, "colorscale": ATTENTION_SCALE, "showscale": k == 1,
                "colorbar": named_colorbar("weight", {0: "0", 0.5: "0.5", 1: "1"}),
                "name": head(l, h),
                "hovertemplate": f"{head(l, h)}<br>query %{{y}} → key %{{x}}<br>attention %{{z}}<extra></extra>"})
            layout[f"xaxis{ax}"] = {"domain": [round(x0, 4), round(x0 + width, 4)], "anchor": f"y{ax}",
                                    "showgrid": False, "zeroline": False, "tickvals": ticks,
                                    "range": [-0.5, n - 0.5], "tickfont": {"size": 9}}
            layout[f"yaxis{ax}"] = {"domain": [round(y1 - row_h, 4), round(y1, 4)], "anchor": f"x{ax}",
                                    "autorange": "reversed", "showgrid": False, "zeroline": False,
                                    "tickvals": ticks, "showticklabels": h == 0, "tickfont": {"size": 9}}
            score = prev[l, h] if l == 0 else induction[l, h]
            notes.append({"text": f"<b>{head(l, h)}</b> · {score:.2f}", "xref": "paper", "yref": "paper",
                          "x": round(x0 + width / 2, 4), "y": round(y1, 4), "xanchor": "center",
                          "yanchor": "bottom", "showarrow": False, "font": {"size": 10}})
            shapes.append({"type": "rect", "xref": f"x{ax}", "yref": f"y{ax}", "x0": -0.5, "x1": q + 0.5,
                           "y0": q - 0.5, "y1": q + 0.5, "line": {"color": COLORS["orange"], "width": 1.5},
                           "fillcolor": "rgba(0,0,0,0)"})
    k = L * H + 1
    colors = [COLORS["orange"] if i == q else COLORS["muted"] for i in range(n - 1)]
    traces.append({"type": "bar", "x": list(range(n - 1)), "y": np.round(loss, 4).tolist(),
                   "xaxis": f"x{k}", "yaxis": f"y{k}", "marker": {"color": colors}, "name": "loss",
                   "showlegend": False, "hovertemplate": "position %{x}: loss %{y} nats<extra></extra>"})
    layout[f"xaxis{k}"] = {"domain": [0, 1], "anchor": f"y{k}", "range": [-0.5, n - 0.5], "tickvals": ticks,
                           "title": {"text": "position (query, key, or where the loss is taken)",
                                     "font": {"size": 11}}, "zeroline": False, "showgrid": False}
    layout[f"yaxis{k}"] = {"domain": [0, loss_top], "anchor": f"x{k}", "title": {"text": "loss", "font": {"size": 11}},
                           "rangemode": "tozero", "nticks": 3}
    at = shipped.resolve_step(model, step)
    when = "final weights" if at is None else f"step {at}"
    title = f"query {q} (token {int(toks[q])}) outlined, {when}"
    fig = figure(traces, title=title, height=600, showlegend=False, annotations=notes, shapes=shapes,
                 margin={"l": 34, "r": 8, "t": 56, "b": 44}, **layout)
    fig["layout"].pop("legend", None)
    return fig
