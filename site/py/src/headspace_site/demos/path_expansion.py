"""A two-layer model's logit for the correct next token, split into its paths (``paths.path_terms``).

For the reader's sequence and position ``i``, the left panel shows how much each path adds to the
logit of the token that really comes next (``tokens[i + 1]``): the direct path, each single head,
each virtual head (a layer-0 head followed by a layer-1 head), and all the biases together. The
right panel shows how the loss at ``i`` changes when that one term is removed from the logits,
attention patterns held fixed. Both panels' x ranges are fixed over every position of the sequence
(``_extent``), so moving the position slider moves only the bars.

Outputs: ``terms`` {label: contribution to the correct logit}, which sum to the model's logit;
``ablated_loss`` {label: loss without that term}, plus ``"none"``: the loss with every term.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["path-expansion"].run({"tokens": "1 2 3 1 2 3", "position": 3})["outputs"]
>>> len(out["terms"]), sorted(out["ablated_loss"])[:3]
(26, ['0.0', '0.0>1.0', '0.0>1.1'])
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace.paths import BIAS, DIRECT, VIRTUAL, path_terms

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, figure
from headspace_site.figure.outputs import path_label
from headspace_site.figure.registry import Output, register


@register(
    "path-expansion", "The logit split into direct, single-head and virtual-head paths",
    key='One row per path (L0H1: layer 0, head 1; L0H1 → L1H0: a virtual head): what it adds to the correct logit, and the loss change without it.',
    params=shipped.sequence_params(
        "position", "Position", last=-2,
        help="where the next token is predicted (the last but one if the sequence is shorter)"),
    outputs=[
        Output("terms", "contribution", "paths",
               "how much each path adds to the logit of the true next token; the terms sum to the logit", fold=True),
        Output("ablated_loss", "loss without it", "paths",
               "the loss (nats) at this position with that one term removed, attention held fixed", fold=True),
    ],
    needs_models=True,
)
def path_expansion(tokens: list[int], position: int, model: str, step) -> dict:
    toks = np.asarray(tokens)
    i = min(position, len(toks) - 2)
    terms = _terms(shipped.models_where(), model, shipped.resolve_step(model, step), tuple(tokens))
    at_i = {k: v[i] for k, v in terms.items()}                     # position i: [d_vocab] each
    target = int(toks[i + 1])
    contribution = {k: float(v[target]) for k, v in at_i.items()}
    logits = sum(at_i.values())
    # the loss with each term removed: every term's row at once (one logsumexp, not 27)
    kept = logits - np.stack(list(at_i.values()))                 # [term, d_vocab]
    loss = _losses(np.vstack([logits, kept]), target)
    losses = dict(zip(("none", *at_i), map(float, loss)))
    prev, ind = shipped.roles(model)
    pair = f"{prev[0]}.{prev[1]}{VIRTUAL}{ind[0]}.{ind[1]}"
    extent = _extent(shipped.models_where(), model, shipped.resolve_step(model, step), tuple(tokens))
    return {"figure": _figure(contribution, losses, pair, toks, i, target, model, step, extent),
            "outputs": {"terms": contribution, "ablated_loss": losses}}


@lru_cache(maxsize=2)
def _terms(where: str, model: str, step, tokens: tuple) -> dict:
    """``path_terms`` of the sequence, read-only: they depend on the tokens, not on the position a
    slider moves (at most 26 x n_ctx x d_vocab floats, 1.7 MB, an entry). The last token is only
    ever a target (no position the slider picks reads it), so the terms stop before it."""
    terms = path_terms(shipped.weights(model, step), np.asarray(tokens[:-1]))
    for v in terms.values():
        v.setflags(write=False)
    return terms


@lru_cache(maxsize=2)
def _extent(where: str, model: str, step, tokens: tuple) -> tuple:
    """``((lo, hi) of the contributions, (lo, hi) of the loss changes)`` over every position the
    slider can pick in this sequence (each range includes 0): the panels' x ranges."""
    terms = _terms(where, model, step, tokens)
    T = np.stack(list(terms.values()))                              # [term, position, d_vocab]
    target = np.asarray(tokens)[1:]
    at = np.arange(len(target))
    logits = T.sum(axis=0)                                          # [position, d_vocab]
    without = logits[None] - T
    top = without.max(axis=2, keepdims=True)
    lse = top[..., 0] + np.log(np.exp(without - top).sum(axis=2))
    ablated = lse - without[:, at, target]                          # loss without each term
    top = logits.max(axis=1, keepdims=True)
    full = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1)) - logits[at, target]
    added, change = T[:, at, target], ablated - full[None]
    return tuple((min(0.0, float(a.min())), max(0.0, float(a.max()))) for a in (added, change))


def _range(lo: float, hi: float) -> list[float]:
    """``[lo, hi]`` with 5% of its length added at each end, as plotly pads a bar chart."""
    pad = 0.05 * ((hi - lo) or 1.0)
    return [round(lo - pad, 4), round(hi + pad, 4)]


def _losses(logits: np.ndarray, target: int) -> np.ndarray:
    """Cross-entropy (nats) of ``target`` under each row of ``logits`` [rows, d_vocab].

    >>> _losses(np.array([[0.0, 0.0], [0.0, np.log(3.0)]]), 1).round(4).tolist()
    [0.6931, 0.2877]
    """
    top = logits.max(axis=1)
    return top + np.log(np.exp(logits - top[:, None]).sum(axis=1)) - logits[:, target]


def _color(label: str, pair: str) -> str:
    if label == pair:
        return COLORS["green"]
    if label in (DIRECT, BIAS):
        return COLORS["ink"] if label == DIRECT else COLORS["muted"]
    if VIRTUAL in label:
        return COLORS["purple"]
    return COLORS["blue"] if label.startswith("0.") else COLORS["orange"]


def _figure(contribution, losses, pair, toks, i, target, model, step, extent) -> dict:
    labels = list(contribution)
    shown = [path_label(label) + (" ★" if label == pair else "") for label in labels]
    colors = [_color(label, pair) for label in labels]
    bar = {"type": "bar", "orientation": "h", "y": shown, "marker": {"color": colors}, "showlegend": False}
    left = {**bar, "x": [round(contribution[k], 4) for k in labels], "name": "contribution",
            "hovertemplate": "%{y}: %{x} to the logit<extra></extra>"}
    full = losses["none"]
    right = {**bar, "x": [round(losses[k] - full, 4) for k in labels], "xaxis": "x2", "yaxis": "y2",
             "customdata": [round(losses[k], 4) for k in labels], "name": "loss change without it",
             "hovertemplate": "without %{y}: loss %{customdata} nats (%{x:+})<extra></extra>"}
    rows = {"type": "category", "autorange": "reversed", "tickfont": {"size": 10}, "showgrid": False}
    at = shipped.resolve_step(model, step)
    when = "final weights" if at is None else f"step {at}"
    total = sum(contribution.values())
    title = (f"position {i} predicts token {target}, {when}<br>"
             f"<span style='font-size:11px'>logit {total:.2f}, loss {full:.2f} nats; ★ induction pair</span>")
    fig = figure([left, right], title=title, height=600, showlegend=False,
                 margin={"l": 78, "r": 10, "t": 70, "b": 50},
                 xaxis={"domain": [0, 0.48], "title": {"text": "adds to the correct logit", "font": {"size": 11}},
                        "zeroline": True, "range": _range(*extent[0])},
                 yaxis=rows,
                 xaxis2={"domain": [0.56, 1], "anchor": "y2", "zeroline": True, "range": _range(*extent[1]),
                         "title": {"text": "loss change without it", "font": {"size": 11}}},
                 yaxis2={**rows, "anchor": "x2", "showticklabels": False, "matches": "y"})
    fig["layout"].pop("legend", None)
    return fig
