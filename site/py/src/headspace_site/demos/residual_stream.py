"""Heads read from and write to the residual stream: pick one head of a shipped model and see which
writers it reads, and which later readers read what it writes.

The stream at a layer is the sum of everything written before it: the token embedding, the
position embedding and the output of every head of the earlier layers. A head reads the stream
through one of three inputs (query, key, value) and writes its output back. How much of one
writer a reader picks up is measured, as throughout the site, by the Frobenius composition score
of the writer's output map followed by the reader's input map (TransformerLens order, row vectors):

    score(left, right) = ||left @ right||_F / (||left||_F ||right||_F)

with ``left`` the writer's map into the stream (``W_E`` [d_vocab, d_model] for tokens, ``W_pos``
[n_ctx, d_model] for positions, ``W_V W_O`` for a head) and ``right`` the reader's map from it
(``W_Q W_K^T`` for the query, ``W_K W_Q^T`` for the key, ``W_V W_O`` for the value, ``W_U`` for the
unembedding). Between heads this is exactly ``shipped.scores(model, None, mode, "frobenius")``
(``all_composition_scores``). The weights are the final ones with any norm scale folded in; the
score does not change when either side is multiplied by a number.

Outputs: ``reads`` {writer: score} for the chosen head's chosen input; ``writes`` {reader: score},
the later heads reading the chosen head through the same input, then the unembedding.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["residual-stream"].run({"head": "L0H1"})["outputs"]
>>> list(out["reads"]), list(out["writes"])[-1]
(['token embedding', 'position embedding'], 'unembedding')
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace.composition import composition_score

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, figure, scatter
from headspace_site.figure.registry import Output, Param, register

INPUTS = {"query": "Q", "key": "K", "value": "V"}
TOKENS, POSITIONS, UNEMBED = "token embedding", "position embedding", "unembedding"
_LAYERS, _HEADS = 2, 4  # the shipped models' shape; ``_check`` refuses a model of another


def head_name(layer: int, head: int) -> str:
    """The site's name of head ``head`` of layer ``layer``: ``head_name(0, 1) == "L0H1"``."""
    return f"L{layer}H{head}"


HEAD_OPTIONS = tuple(head_name(l, h) for l in range(_LAYERS) for h in range(_HEADS))


def reader_map(m, layer: int, head: int, mode: str) -> np.ndarray:
    """The map through which head (``layer``, ``head``) of the folded model ``m`` reads the stream
    in ``mode`` ("Q", "K" or "V"), [d_model, d_model], as ``all_composition_scores`` takes it."""
    q, k, v, o = m.W_Q[layer, head], m.W_K[layer, head], m.W_V[layer, head], m.W_O[layer, head]
    return {"Q": q @ k.T, "K": k @ q.T, "V": v @ o}[mode]


@lru_cache(maxsize=None)
def _edges(where: str, model: str, mode: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(token scores [n_layers, n_heads], position scores [n_layers, n_heads], unembedding scores
    [n_layers, n_heads]) of the final folded weights; cached per models directory."""
    m = shipped.weights(model, None)
    n_layers, n_heads = m.W_Q.shape[:2]
    tok, pos, out = (np.zeros((n_layers, n_heads)) for _ in range(3))
    for l in range(n_layers):
        for h in range(n_heads):
            right = reader_map(m, l, h, mode)
            tok[l, h] = composition_score(m.W_E, right)
            pos[l, h] = composition_score(m.W_pos, right)
            out[l, h] = composition_score(m.W_V[l, h] @ m.W_O[l, h], m.W_U)
    return tok, pos, out


def reads_and_writes(model: str, layer: int, head: int, mode: str) -> tuple[dict, dict]:
    """({writer: score} the head reads in ``mode``, {reader: score} that read the head's output).

    Writers are the two embeddings, then every head of an earlier layer; readers are every head of
    a later layer (through the same input), then the unembedding.
    """
    tok, pos, out = _edges(shipped.models_where(), model, mode)
    pairs = shipped.scores(model, None, mode, "frobenius")  # [writer l, h, reader l, h]
    n_layers, n_heads = tok.shape
    reads = {TOKENS: float(tok[layer, head]), POSITIONS: float(pos[layer, head])}
    reads.update({head_name(l, h): float(pairs[l, h, layer, head]) for l in range(layer) for h in range(n_heads)})
    writes = {head_name(l, h): float(pairs[layer, head, l, h])
              for l in range(layer + 1, n_layers) for h in range(n_heads)}
    writes[UNEMBED] = float(out[layer, head])
    return reads, writes


def _check(model: str) -> None:
    shape = shipped.weights(model, None).W_Q.shape[:2]
    if tuple(shape) != (_LAYERS, _HEADS):
        raise ValueError(f"residual-stream: model {model!r} must have {_LAYERS} layers of {_HEADS} heads "
                         f"(the head menu lists those); got {shape[0]} layers of {shape[1]}")


@register(
    "residual-stream", "Heads read from the residual stream and write to it",
    key="Grey: the residual stream; blue lines: what the chosen head reads; orange: who reads what it writes; thicker: a larger score.",
    params=[
        Param("head", "Head", "select", "L1H0", options=HEAD_OPTIONS,
              help="L0H1 is head 1 of layer 0; the lines show what this head reads and who reads it"),
        Param("input", "Input", "select", "key", options=tuple(INPUTS),
              help="which input reads the stream: the query (where to look from), the key (what to look "
                   "for) or the value (what to move)"),
        shipped.model_param(),
    ],
    outputs=[
        Output("reads", "what it reads", "mapping",
               "the composition score of each earlier writer with the chosen head's input"),
        Output("writes", "who reads it", "mapping",
               "the composition score of the chosen head's output with each later head's same input, "
               "and with the unembedding"),
    ],
    needs_models=True,
)
def residual_stream(head: str, input: str, model: str) -> dict:
    _check(model)
    layer, h = int(head[1]), int(head[3])
    mode = INPUTS[input]
    reads, writes = reads_and_writes(model, layer, h, mode)
    return {"figure": _figure(model, layer, h, input, reads, writes),
            "outputs": {"reads": {k: round(v, 6) for k, v in reads.items()},
                        "writes": {k: round(v, 6) for k, v in writes.items()}}}


#: Half the width and height of a node's box (data units: one unit between two heads, or two rows).
_BOX = {"head": (0.36, 0.22), "wide": (0.62, 0.22)}
_SHORT = {TOKENS: "token", POSITIONS: "position", UNEMBED: "unembedding"}


def _places(n_layers: int, n_heads: int) -> dict:
    """Where each node sits: the embeddings at the bottom, a row per layer, the unembedding on top.
    The embeddings sit between two heads' columns, so a line from them to a later layer passes
    between the boxes of the layer in between."""
    mid = (n_heads - 1) / 2
    at = {TOKENS: (mid - 1.0, 0.0), POSITIONS: (mid + 1.0, 0.0), UNEMBED: (mid, n_layers + 1.0)}
    at.update({head_name(l, h): (float(h), l + 1.0) for l in range(n_layers) for h in range(n_heads)})
    return at


def _half(name: str) -> tuple[float, float]:
    return _BOX["wide" if name in _SHORT else "head"]


def route(a: str, b: str, at: dict, n_heads: int, start=None, end=None) -> list[tuple[float, float]]:
    """The polyline of a line from node ``a`` up to node ``b`` (in a higher row): from the middle of
    ``a``'s top edge to the middle of ``b``'s bottom edge, straight, or, across a row of heads,
    bent to pass straight up through the gap between two boxes of that row. Leaving upwards and
    arriving from below, it crosses no other box of either row. ``start`` and ``end``, when given, replace the two ends (the
    lines of the chosen head's box leave or arrive side by side).

    >>> at = _places(2, 4)
    >>> route("L0H1", "L1H0", at, 4)
    [(1.0, 1.22), (0.0, 1.78)]
    >>> route(TOKENS, "L1H0", at, 4)
    [(0.5, 0.22), (0.5, 0.78), (0.5, 1.22), (0.0, 1.78)]
    """
    (xa, ya), (xb, yb) = at[a], at[b]
    points = [(xa, ya)]
    for row in np.arange(min(ya, yb) + 1, max(ya, yb)):             # rows of heads crossed
        x = xa + (xb - xa) * (row - ya) / (yb - ya)
        gap = float(np.clip(np.floor(x) + 0.5, -0.5, n_heads - 0.5))  # the gap between boxes nearest x
        hy = _BOX["head"][1]
        points += [(gap, float(row - hy)), (gap, float(row + hy))]   # straight up through the gap
    points.append((xb, yb))
    points[0] = start or (xa, ya + _half(a)[1])
    points[-1] = end or (xb, yb - _half(b)[1])
    return [(round(x, 4), round(y, 4)) for x, y in points]


def _ports(me: str, others: list, at: dict, side: int) -> dict:
    """Where each line from ``others`` meets the chosen head's box: spread along its lower edge
    (``side`` -1) or upper edge (1) in the order of the other nodes' positions across."""
    (x, y), (hx, hy) = at[me], _half(me)
    order = sorted(others, key=lambda n: (at[n][0], at[n][1]))
    n = len(order)
    return {o: (round(x + (0.7 * hx * (2 * k / (n - 1) - 1) if n > 1 else 0.0), 4), y + side * hy)
            for k, o in enumerate(order)}


def _figure(model: str, layer: int, head: int, input: str, reads: dict, writes: dict) -> dict:
    n_layers, n_heads = _LAYERS, _HEADS
    at = _places(n_layers, n_heads)
    me = head_name(layer, head)
    top = max([*reads.values(), *writes.values()]) or 1.0
    stream_x, y_lo, y_hi = -0.85, -0.5, n_layers + 1.5
    # The stream: one upward arrow from the embeddings to the unembedding; each row taps it.
    traces = [scatter([stream_x, stream_x], [y_lo + 0.2, y_hi - 0.1], name="residual stream",
                      color=COLORS["muted"], mode="lines+markers", width=5, showlegend=False,
                      marker={"symbol": "arrow", "angleref": "previous", "size": [0, 16], "color": COLORS["muted"]})]
    for row in range(n_layers + 2):
        first = min((x - _half(n)[0] for n, (x, y) in at.items() if y == row))
        traces.append(scatter([stream_x, first], [row, row], color=COLORS["muted"], mode="lines", width=1,
                              showlegend=False, line={"color": COLORS["muted"], "width": 1, "dash": "dot"}))
    # Every head's figure has the same parts in the same order (two legend entries, seven lines of
    # as many points, a box outline for the chosen head, two notes a node, a two-line title), so a
    # move to another head rewrites the figure's data in place instead of plotly redrawing it.
    traces += [{"type": "scatter", "x": [None], "y": [None], "name": name, "mode": "lines", "hoverinfo": "skip",
                "line": {"color": color, "width": 3}}
               for name, color in ((f"what {me} reads", COLORS["blue"]), (f"what reads {me}", COLORS["orange"]))]
    points = 2 * n_layers  # the most a route has: two ends and a bend through each row crossed
    score = {}
    for kind, edges, color in (("reads", reads, COLORS["blue"]), ("writes", writes, COLORS["orange"])):
        ports = _ports(me, list(edges), at, -1 if kind == "reads" else 1)
        for other, s in edges.items():
            path = (route(other, me, at, n_heads, end=ports[other]) if kind == "reads"
                    else route(me, other, at, n_heads, start=ports[other]))
            path += [path[-1]] * (points - len(path))  # a repeated end draws nothing more
            xs, ys = zip(*path)
            traces.append(scatter(xs, ys, name=f"what {me} reads" if kind == "reads" else f"what reads {me}",
                                  mode="lines", showlegend=False,
                                  line={"color": color, "width": round(1.5 + 7 * s / top, 2), "simplify": False}))
            score[other] = s
    (x, y), (hx, hy) = at[me], _half(me)
    traces.append(scatter([x - hx, x + hx, x + hx, x - hx, x - hx], [y - hy, y - hy, y + hy, y + hy, y - hy],
                          name=me, color=COLORS["ink"], mode="lines", width=3, showlegend=False))
    prev, induction = shipped.roles(model)
    roles = {head_name(*prev): "previous-token head", head_name(*induction): "induction head"}
    shapes, notes = [], []
    for n, (x, y) in at.items():
        hx, hy = _half(n)
        shapes.append({"type": "rect", "xref": "x", "yref": "y", "x0": x - hx, "x1": x + hx, "y0": y - hy,
                       "y1": y + hy, "line": {"color": COLORS["ink"], "width": 1}})
        # the score under the name, a blank where no line ends (one note a line: centred alike by
        # plotly and the build)
        for k, text in enumerate([_SHORT.get(n, n), f"{score[n]:.2f}" if n in score else "\u00a0"]):
            notes.append({"x": x, "y": y + (0.5 - k) * 0.18, "text": text, "showarrow": False,
                          "yanchor": "middle", "font": {"size": 11}})
    notes.append({"x": stream_x, "y": y_hi, "text": "residual stream", "showarrow": False,
                  "xanchor": "left", "yanchor": "top", "xshift": 10, "font": {"size": 11}})
    role = f" ({roles[me]})" if me in roles else ""
    fig = figure(traces, title=f"{me}{role}<br>reads and is read through the {input}", height=420,
                 xaxis={"range": [stream_x - 0.25, n_heads - 0.45], "visible": False, "zeroline": False,
                        "showgrid": False, "showticklabels": False},
                 yaxis={"range": [y_lo, y_hi], "visible": False, "zeroline": False,
                        "showgrid": False, "showticklabels": False},
                 annotations=notes, shapes=shapes)
    fig["layout"]["legend"].update({"itemclick": False, "itemdoubleclick": False})  # the entries only name
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "l": 8, "r": 8, "b": 8}
    return fig
