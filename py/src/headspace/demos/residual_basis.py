"""Change the residual basis of a shipped model: the model does not notice, some scores do.

The reader builds ``T = H(shear) S(condition) R(rotation) P`` (row convention, ``x -> x @ T``)
from a seeded orthonormal frame Q of the residual stream: ``R`` rotates by ``rotation`` degrees in
the planes of Q (``symmetry.rotation``), ``S`` stretches Q's directions by factors log-spaced from 1
to ``10 ** log_condition`` (``symmetry.stretch``), ``H`` adds ``shear`` times the component along
Q's first direction to its second (``symmetry.shear``) and ``P`` permutes the residual axes when
``permute`` is on. ``symmetry.transform_model`` applies T to the model's folded weights: writers
``W @ T``, readers ``T^-1 @ W``.

Outputs:

- ``loss_before``, ``loss_after``: mean next-token loss (nats) on the site's fixed batch of
  repeated sequences (``_shipped.eval_batch``), before and after.
- ``max_logit_change``: the largest change of any logit on that batch.
- ``scores_before``, ``scores_after``: the chosen metric for every pair of heads,
  ``[n_layers, n_heads, n_layers, n_heads]`` (0 unless the reader is in a later layer); ``causal``
  is ``causal.path_ablation`` of each model on the same batch.
- ``order_changed``: whether any two pairs of heads swap places in the ranking
  (``axioms.ordering_flips`` with a tolerance of 1e-9 of the largest score).

For ``attn-only-2l`` the loss moves only by float rounding under every T, ``frobenius`` reorders
pairs under a stretch, and ``token``, ``whitened`` and ``causal`` do not (tests/unit).

>>> from headspace.demos import REGISTRY
>>> out = REGISTRY["residual-basis"].run({"log_condition": 1.0})["outputs"]
>>> abs(out["loss_after"] - out["loss_before"]) < 1e-9, out["order_changed"]
(True, True)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace import symmetry
from headspace.axioms import ordering_flips
from headspace.model import cross_entropy

from . import _shipped
from ._figure import COLORS, SCORE_SCALE, figure
from ._registry import Param, register

#: Two orderings differ only if a gap of more than this share of the largest score changes sign.
ORDER_RTOL = 1e-9
#: Text on light heatmap cells: near-black in both colour schemes (the page recolours ink itself).
CELL_INK = "#111827"


def basis_change(d_model: int, rotation: float, log_condition: float, shear: float, permute: bool,
                 seed: int) -> np.ndarray:
    """``T = H S R P`` of the module docstring, [d_model, d_model].

    >>> T = basis_change(4, 0.0, 0.0, 0.0, False, 0)
    >>> bool(np.allclose(T, np.eye(4)))
    True
    """
    Q = symmetry.random_orthogonal(d_model, seed)
    T = symmetry.permutation(d_model, seed) if permute else np.eye(d_model)
    T = T @ symmetry.rotation(d_model, rotation, seed)
    T = T @ symmetry.stretch(d_model, 10.0 ** log_condition, seed)
    return T @ symmetry.shear(d_model, Q[:, 0], Q[:, 1], shear)


def mean_loss(m, name: str) -> tuple[float, np.ndarray]:
    """(mean loss in nats, logits) of model ``m`` on the site's fixed batch."""
    toks = _shipped.eval_batch(name)
    logits = m.logits(toks)
    return float(cross_entropy(logits, toks).mean()), logits


@lru_cache(maxsize=4)
def _reference(name: str):
    """(model, loss, logits) of the shipped model on the batch: one forward pass per model, shared
    by every metric and mode (each costs tens of ms in Pyodide)."""
    m = _shipped.weights(name, None)
    loss, logits = mean_loss(m, name)
    return m, loss, logits


@register(
    "residual-basis", "Change the residual basis of a trained model",
    params=[
        _shipped.model_param(help="a shipped toy model; with RMSNorm only rotations (times a scale) are symmetries"),
        Param("metric", "Score", "select", "frobenius", options=_shipped.SCORE_OPTIONS,
              help="how each pair of heads is scored; 'causal' is path ablation, the loss increase in nats"),
        _shipped.mode_param(),
        Param("rotation", "Rotate by", "range", 0, min=-180, max=180, step=5, unit="°",
              help="rotation in every plane of a seeded orthonormal frame"),
        Param("log_condition", "Stretch, log₁₀ cond", "range", 1.0, min=0.0, max=3.0, step=0.1,
              help="directions of the frame scaled by factors from 1 to 10^this"),
        Param("shear", "Shear", "range", 0.0, min=-3.0, max=3.0, step=0.1,
              help="adds this times the frame's first direction to its second"),
        Param("permute", "Permute the axes", "checkbox", False, help="relabel the residual axes at random"),
        Param("seed", "Seed of the frame", "range", 0, min=0, max=9, step=1),
    ],
    outputs=["loss_before", "loss_after", "max_logit_change", "scores_before", "scores_after", "order_changed"],
    needs_models=True,
)
def residual_basis(model: str, metric: str, mode: str, rotation: float, log_condition: float, shear: float,
                   permute: bool, seed: int) -> dict:
    _, loss_before, _ = _reference(model)
    before = _shipped.scores(model, None, mode, metric)
    basis = (model, rotation, log_condition, shear, permute, seed)
    _, loss_after, max_logit_change, cond = _moved(*basis)
    after = _after(basis, mode, metric)
    flips = ordering_flips(_shipped.later_pairs(before), _shipped.later_pairs(after), rtol=ORDER_RTOL)
    outputs = {"loss_before": loss_before, "loss_after": loss_after, "max_logit_change": max_logit_change,
               "scores_before": before, "scores_after": after, "order_changed": flips > 0}
    return {"figure": _figure(before, after, model, mode, metric, loss_before, loss_after, cond),
            "outputs": outputs}


@lru_cache(maxsize=8)
def _moved(name: str, rotation: float, log_condition: float, shear: float, permute: bool, seed: int):
    """(the model in the new basis, its loss, the largest logit change, cond T): the forward pass on
    the batch, most of a call's time, depends on the basis only, so a move of ``metric`` or ``mode``
    reuses it. Eight bases: about 1 MB of weights."""
    m, _, logits_before = _reference(name)
    T = basis_change(m.config["d_model"], rotation, log_condition, shear, permute, seed)
    moved = symmetry.transform_model(m, T)
    loss_after, logits_after = mean_loss(moved, name)
    return moved, loss_after, float(np.abs(logits_after - logits_before).max()), float(np.linalg.cond(T))


@lru_cache(maxsize=32)
def _after(basis: tuple, mode: str, metric: str) -> np.ndarray:
    """The scores of the model in basis ``basis`` (the key of ``_moved``), read-only: moving back to
    a metric or mode seen before costs nothing (path ablation is several forward passes)."""
    moved = _moved(*basis)[0]
    out = _shipped.model_scores(moved, basis[0], mode, metric)
    out.setflags(write=False)
    return out


def ranks(s) -> np.ndarray:
    """Rank of each score among pairs with a later reader (1 = largest), same shape as ``s``; 0 elsewhere.

    >>> s = np.zeros((2, 1, 2, 1)); s[0, 0, 1, 0] = 0.5
    >>> int(ranks(s)[0, 0, 1, 0])
    1
    """
    s = np.asarray(s, dtype=float)
    order = np.argsort(-_shipped.later_pairs(s), kind="stable")
    r = np.empty_like(order)
    r[order] = np.arange(1, order.size + 1)
    out = np.zeros(s.shape, dtype=int)
    out[_shipped.later_mask(s.shape)] = r
    return out


def rank_heatmaps(before, after, titles: tuple[str, str], unit: str, title: str) -> dict:
    """Two heatmaps of pair scores on one colour scale, each cell labelled with its rank; cells whose
    rank changed are outlined on the right. No colour bar: the ranks carry the order, hover the value."""
    n_layers, n_heads = before.shape[:2]
    rows = [(l, h) for l in range(n_layers - 1) for h in range(n_heads)]
    cols = [(l, h) for l in range(1, n_layers) for h in range(n_heads)]
    vals = np.concatenate([_shipped.later_pairs(before), _shipped.later_pairs(after)])
    lo, hi = min(0.0, float(vals.min())), max(float(vals.max()), 1e-12)
    r_before, r_after = ranks(before), ranks(after)
    traces, notes, shapes = [], [], []
    for k, (s, r, axis) in enumerate(((before, r_before, ""), (after, r_after, "2"))):
        z = [[round(float(s[a][b][c][d]), 6) if c > a else None for (c, d) in cols] for (a, b) in rows]
        rk = [[int(r[a][b][c][d]) for (c, d) in cols] for (a, b) in rows]
        names = [[[f"{a}.{b}", f"{c}.{d}"] for (c, d) in cols] for (a, b) in rows]
        traces.append({"type": "heatmap", "z": z, "x": list(range(len(cols))), "y": list(range(len(rows))),
                       "customdata": [[[*names[i][j], rk[i][j]] for j in range(len(cols))] for i in range(len(rows))],
                       "zmin": round(lo, 6), "zmax": round(hi, 6), "colorscale": SCORE_SCALE, "xgap": 2, "ygap": 2,
                       "showscale": False, "name": titles[k], "xaxis": "x" + axis, "yaxis": "y" + axis,
                                              "hovertemplate": "writer %{customdata[0]} → reader %{customdata[1]}<br>" + unit + " %{z}"
                                        "<br>rank %{customdata[2]}<extra></extra>"})
        for i, row in enumerate(z):
            for j, v in enumerate(row):
                if v is None:
                    continue
                dark = (v - lo) > 0.55 * (hi - lo)
                notes.append({"x": j, "y": i, "xref": "x" + axis, "yref": "y" + axis, "text": str(rk[i][j]),
                              "showarrow": False, "font": {"size": 11, "color": "white" if dark else CELL_INK}})
                if k == 1 and rk[i][j] != int(r_before[rows[i] + cols[j]]):
                    shapes.append({"type": "rect", "xref": "x2", "yref": "y2", "x0": j - 0.45, "x1": j + 0.45,
                                   "y0": i - 0.45, "y1": i + 0.45, "line": {"color": COLORS["orange"], "width": 2.5}})
    ticks = {"tickvals": list(range(len(cols))), "ticktext": [f"{l}.{h}" for l, h in cols], "showgrid": False,
             "zeroline": False, "tickangle": 0, "title": {"text": "reader"}}
    yticks = {"tickvals": list(range(len(rows))), "ticktext": [f"{l}.{h}" for l, h in rows], "showgrid": False,
              "zeroline": False, "autorange": "reversed"}
    heads = [{"text": t, "xref": "paper", "yref": "paper", "x": x, "y": 1.0, "xanchor": "center",
              "yanchor": "bottom", "showarrow": False, "font": {"size": 13}} for t, x in zip(titles, (0.235, 0.765))]
    fig = figure(traces, title=title, height=360, showlegend=False, annotations=heads + notes, shapes=shapes,
                 xaxis={**ticks, "domain": [0.0, 0.47]}, yaxis={**yticks, "title": {"text": "writer"}},
                 xaxis2={**ticks, "domain": [0.53, 1.0], "anchor": "y2"},
                 yaxis2={**yticks, "anchor": "x2", "showticklabels": False})
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "t": 76, "l": 50, "r": 6}
    return fig


def _figure(before, after, model, mode, metric, loss_before, loss_after, cond) -> dict:
    label = "path ablation" if metric == _shipped.CAUSAL else metric
    unit = "Δ loss (nats)" if metric == _shipped.CAUSAL else metric
    title = f"{mode}, {label}: loss {loss_before:.4f} → {loss_after:.4f}"
    return rank_heatmaps(before, after, ("before", f"after T, cond {cond:.3g}"), unit, title)
