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
  repeated sequences (``shipped.eval_batch``), before and after.
- ``max_logit_change``: the largest change of any logit on that batch.
- ``scores_before``, ``scores_after``: the chosen metric for every pair of heads,
  ``[n_layers, n_heads, n_layers, n_heads]`` (0 unless the reader is in a later layer); ``causal``
  is ``causal.path_ablation`` of each model on the same batch.
- ``order_changed``: whether any two pairs of heads swap places in the ranking
  (``axioms.ordering_flips`` with a tolerance of 1e-9 of the largest score).

For ``attn-only-2l`` the loss moves only by float rounding under every T, ``frobenius`` reorders
pairs under a stretch, and ``token``, ``whitened`` and ``causal`` do not (tests/unit).

What a move of the basis sliders costs. The scores after are computed on the moved weights, every
move: they are what the figure is about, and their changes are real. What the model computes is
not recomputed for a model without normalisation: there every invertible T is an exact symmetry
(``symmetry.transform_model``), so ``loss_after`` is ``loss_before``, ``max_logit_change`` is 0 and
the ``causal`` scores after are those before. A forward pass in the new basis would differ from
them only by float rounding (``symmetry_rounding`` measures it: at most about 1e-12 in a logit on
every T the sliders reach, which the page prints as 0; tests/unit checks both), and it would cost
a forward pass of a [32, 64] batch per move in the browser (path ablation several times that). A
model with RMSNorm does notice a stretch or a shear: its loss, logits and path ablation after are
computed on the moved model, every move.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["residual-basis"].run({"log_condition": 1.0})["outputs"]
>>> abs(out["loss_after"] - out["loss_before"]) < 1e-9, out["order_changed"]
(True, True)
"""

from __future__ import annotations

from functools import cached_property, lru_cache

import numpy as np

from headspace import symmetry
from headspace.axioms import ordering_flips
from headspace.model import cross_entropy

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, SCORE_SCALE, figure, named_colorbar
from headspace_site.figure.outputs import METRIC_NAMES, head
from headspace_site.figure.registry import Output, Param, register

#: Two orderings differ only if a gap of more than this share of the largest score changes sign.
ORDER_RTOL = 1e-9
#: Text on light heatmap cells: near-black in both colour schemes (the page recolours ink itself).
CELL_INK = "#111827"


def basis_change(d_model: int, rotation: float, log_condition: float, shear: float, permute: bool,
                 seed: int) -> np.ndarray:
    """``T = H S R P`` of the module docstring, [d_model, d_model].

    Each factor is cached (``_factor``): a move of one slider recomputes only its own factor, and
    the product is taken in the same order as ever, so T is the same to the last bit.

    >>> T = basis_change(4, 0.0, 0.0, 0.0, False, 0)
    >>> bool(np.allclose(T, np.eye(4)))
    True
    """
    T = _factor(d_model, "permutation", None, seed) if permute else np.eye(d_model)
    T = T @ _factor(d_model, "rotation", rotation, seed)
    T = T @ _factor(d_model, "stretch", log_condition, seed)
    return T @ _factor(d_model, "shear", shear, seed)


@lru_cache(maxsize=16)
def _factor(d_model: int, kind: str, value, seed: int) -> np.ndarray:
    """One factor of ``basis_change``, read-only: ``symmetry.permutation``, ``symmetry.rotation``
    (``value`` degrees), ``symmetry.stretch`` (condition ``10 ** value``) or ``symmetry.shear``
    (``value`` times the frame's first direction added to its second)."""
    if kind == "permutation":
        F = symmetry.permutation(d_model, seed)
    elif kind == "rotation":
        F = symmetry.rotation(d_model, value, seed)
    elif kind == "stretch":
        F = symmetry.stretch(d_model, 10.0 ** value, seed)
    else:
        Q = symmetry.random_orthogonal(d_model, seed)
        F = symmetry.shear(d_model, Q[:, 0], Q[:, 1], value)
    F.setflags(write=False)
    return F


def mean_loss(m, name: str) -> tuple[float, np.ndarray]:
    """(mean loss in nats, logits) of model ``m`` on the site's fixed batch."""
    toks = shipped.eval_batch(name)
    logits = m.logits(toks)
    return float(cross_entropy(logits, toks).mean()), logits


@lru_cache(maxsize=4)
def _reference(name: str):
    """(model, loss, logits) of the shipped model on the batch: one forward pass per model, shared
    by every metric and mode (each costs tens of ms in Pyodide)."""
    m = shipped.weights(name, None)
    loss, logits = mean_loss(m, name)
    return m, loss, logits


def is_symmetry(m) -> bool:
    """Whether every invertible T leaves the folded model ``m``'s function exactly unchanged: true
    without normalisation (``symmetry.transform_model``); with RMSNorm only rotations times a scale do."""
    return m.config.get("normalization_type") is None


@register(
    "residual-basis", "Change the residual basis of a trained model",
    key="Row: writer head; column: reader head; number: the pair's rank by score, before and after T; darker: a higher score; outlined: a rank that changed.",
    params=[
        shipped.model_param(help="a shipped toy model; with RMSNorm only rotations (times a scale) are symmetries"),
        Param("metric", "Score", "select", "frobenius", options=shipped.SCORE_OPTIONS,
              option_labels=tuple(METRIC_NAMES[m] for m in shipped.SCORE_OPTIONS),
              help="how each pair of heads is scored; path ablation is the loss increase in nats"),
        shipped.mode_param(),
        Param("rotation", "Rotate by", "range", 0, min=-180, max=180, step=5, unit="°",
              help="rotation in every plane of a seeded orthonormal frame"),
        Param("log_condition", "Stretch, log₁₀ cond", "range", 1.0, min=0.0, max=3.0, step=0.1,
              help="directions of the frame scaled by factors from 1 to 10^this"),
        Param("shear", "Shear", "range", 0.0, min=-3.0, max=3.0, step=0.1,
              help="adds this times the frame's first direction to its second"),
        Param("permute", "Permute the axes", "checkbox", False, help="relabel the residual axes at random"),
        Param("seed", "Seed of the frame", "range", 0, min=0, max=9, step=1),
    ],
    outputs=[
        Output("loss_before", "loss before", "number", "the model's loss on the site's fixed batch", unit=" nats"),
        Output("loss_after", "loss after", "number", "the same after the change of basis T", unit=" nats"),
        Output("max_logit_change", "largest logit change", "number",
               "the largest change of any logit on that batch: rounding error only", floor=0),
        Output("scores_before", "scores before", "head-pairs",
               "every pair's score before T: writer (row) → reader (column)", fold=True),
        Output("scores_after", "scores after", "head-pairs", "every pair's score after T", fold=True),
        Output("order_changed", "ranking changed", "boolean", "whether any two pairs swapped places in the ranking"),
    ],
    needs_models=True,
)
def residual_basis(model: str, metric: str, mode: str, rotation: float, log_condition: float, shear: float,
                   permute: bool, seed: int) -> dict:
    _, loss_before, _ = _reference(model)
    before = shipped.scores(model, None, mode, metric)
    basis = (model, rotation, log_condition, shear, permute, seed)
    loss_after, max_logit_change = _function_after(basis)
    after = _after(basis, mode, metric)
    flips = ordering_flips(shipped.later_pairs(before), shipped.later_pairs(after), rtol=ORDER_RTOL)
    outputs = {"loss_before": loss_before, "loss_after": loss_after, "max_logit_change": max_logit_change,
               "scores_before": before, "scores_after": after, "order_changed": flips > 0}
    return {"figure": _figure(before, after, model, mode, metric, loss_before, loss_after, _basis(basis)[2]),
            "outputs": outputs}


@lru_cache(maxsize=8)
def _basis(basis: tuple):
    """(T, T^-1, cond T) of ``basis`` = (model, rotation, log_condition, shear, permute, seed), with
    T^-1 as ``symmetry.invert`` computes it and one SVD for both the condition number and the check
    that T is invertible (``symmetry.invert`` gives the message when it is not)."""
    d_model = _reference(basis[0])[0].config["d_model"]
    T = basis_change(d_model, *basis[1:])
    cond = float(np.linalg.cond(T))
    if not 1.0 / cond >= d_model * np.finfo(np.float64).eps:
        symmetry.invert("T", T)  # raises ValueError naming T, unless it is invertible after all
    Ti = np.linalg.inv(T)
    for a in (T, Ti):
        a.setflags(write=False)
    return T, Ti, cond


@lru_cache(maxsize=8)
def _moved(basis: tuple):
    """The whole shipped model in basis ``basis`` (``symmetry.transform_model``): what the forward
    pass and path ablation after run on. About 0.4 MB a basis."""
    return symmetry.transform_model(_reference(basis[0])[0], _basis(basis)[0])


@lru_cache(maxsize=8)
def _function_after(basis: tuple) -> tuple[float, float]:
    """(loss after, largest logit change) on the batch: the reference's and 0 where the change is an
    exact symmetry (``is_symmetry``), else one forward pass of the moved model, which a move of
    ``metric`` or ``mode`` then reuses."""
    m, loss_before, logits_before = _reference(basis[0])
    if is_symmetry(m):
        return loss_before, 0.0
    loss_after, logits_after = mean_loss(_moved(basis), basis[0])
    return loss_after, float(np.abs(logits_after - logits_before).max())


def symmetry_rounding(basis: tuple) -> tuple[float, float]:
    """(loss after, largest logit change) from a forward pass of the moved model, whatever the model:
    for a model without normalisation, how far float rounding moves what ``_function_after`` takes
    as unchanged. Not cached; the build quotes it in prose, tests/unit checks it."""
    _, _, logits_before = _reference(basis[0])
    loss_after, logits_after = mean_loss(_moved(basis), basis[0])
    return loss_after, float(np.abs(logits_after - logits_before).max())


class _Readers:
    """The weights a weight-based score reads, of the folded model ``m`` in basis T: each computed
    when first read, by the same operations as ``symmetry.transform_model`` (writers ``W @ T``,
    readers ``T^-1 @ W``, times the root mean square of T's singular values with a norm), so the
    scores equal those of the whole moved model to the last bit (tests/unit) without moving
    ``W_E``, ``W_pos`` and ``W_U`` for the metrics that do not read them."""

    def __init__(self, m, T, Ti):
        self.config, self.eps, self._m, self._T = m.config, m.eps, m, T
        if m.config.get("normalization_type") is not None:
            Ti = Ti * np.sqrt(np.mean(np.linalg.svd(T, compute_uv=False) ** 2))
        self._Ti = Ti

    def _writer(self, name):
        return getattr(self._m, name) @ self._T

    def _reader(self, name):
        return self._Ti @ getattr(self._m, name)

    W_E = cached_property(lambda self: self._writer("W_E"))
    W_O = cached_property(lambda self: self._writer("W_O"))
    W_Q = cached_property(lambda self: self._reader("W_Q"))
    W_K = cached_property(lambda self: self._reader("W_K"))
    W_V = cached_property(lambda self: self._reader("W_V"))
    W_U = cached_property(lambda self: self._reader("W_U"))


@lru_cache(maxsize=8)
def _readers(basis: tuple) -> _Readers:
    T, Ti, _ = _basis(basis)
    return _Readers(_reference(basis[0])[0], T, Ti)


@lru_cache(maxsize=32)
def _after(basis: tuple, mode: str, metric: str) -> np.ndarray:
    """The scores of the model in basis ``basis`` (the key of ``_basis``), read-only: moving back to
    a metric or mode seen before costs nothing. ``causal`` of a model whose function the change
    leaves alone (``is_symmetry``) is the causal score before; otherwise path ablation of the moved
    model (several forward passes)."""
    if metric == shipped.CAUSAL:
        if is_symmetry(_reference(basis[0])[0]):
            return shipped.scores(basis[0], None, mode, metric)
        out = shipped.model_scores(_moved(basis), basis[0], mode, metric)
    else:
        out = shipped.model_scores(_readers(basis), basis[0], mode, metric)
    out.setflags(write=False)
    return out


def ranks(s) -> np.ndarray:
    """Rank of each score among pairs with a later reader (1 = largest), same shape as ``s``; 0 elsewhere.

    >>> s = np.zeros((2, 1, 2, 1)); s[0, 0, 1, 0] = 0.5
    >>> int(ranks(s)[0, 0, 1, 0])
    1
    """
    s = np.asarray(s, dtype=float)
    order = np.argsort(-shipped.later_pairs(s), kind="stable")
    r = np.empty_like(order)
    r[order] = np.arange(1, order.size + 1)
    out = np.zeros(s.shape, dtype=int)
    out[shipped.later_mask(s.shape)] = r
    return out


def rank_heatmaps(before, after, titles: tuple[str, str], unit: str, title: str) -> dict:
    """Two heatmaps of pair scores on one colour scale, each cell labelled with its rank; cells whose
    rank changed are outlined on the right. The colour bar runs from the lowest score to the highest;
    the ranks carry the order, hover the value."""
    n_layers, n_heads = before.shape[:2]
    rows = [(l, h) for l in range(n_layers - 1) for h in range(n_heads)]
    cols = [(l, h) for l in range(1, n_layers) for h in range(n_heads)]
    vals = np.concatenate([shipped.later_pairs(before), shipped.later_pairs(after)])
    lo, hi = min(0.0, float(vals.min())), max(float(vals.max()), 1e-12)
    r_before, r_after = ranks(before), ranks(after)
    traces, notes, shapes = [], [], []
    for k, (s, r, axis) in enumerate(((before, r_before, ""), (after, r_after, "2"))):
        z = [[round(float(s[a][b][c][d]), 6) if c > a else None for (c, d) in cols] for (a, b) in rows]
        rk = [[int(r[a][b][c][d]) for (c, d) in cols] for (a, b) in rows]
        names = [[[head(a, b), head(c, d)] for (c, d) in cols] for (a, b) in rows]
        # coloured from the lowest score of both grids to the highest: the bar's ends stay put
        shade = [[None if v is None else round((v - lo) / (hi - lo), 4) for v in row] for row in z]
        traces.append({"type": "heatmap", "z": shade, "x": list(range(len(cols))), "y": list(range(len(rows))),
                       "customdata": [[[*names[i][j], rk[i][j], z[i][j]] for j in range(len(cols))] for i in range(len(rows))],
                       "zmin": 0, "zmax": 1, "colorscale": SCORE_SCALE, "xgap": 2, "ygap": 2,
                       "showscale": k == 0, "name": titles[k], "xaxis": "x" + axis, "yaxis": "y" + axis,
                       "colorbar": named_colorbar("score", {0: "low", 1: "high"}),
                       "hovertemplate": "writer %{customdata[0]} → reader %{customdata[1]}<br>" + unit + " %{customdata[3]}"
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
    ticks = {"tickvals": list(range(len(cols))), "ticktext": [head(l, h) for l, h in cols], "showgrid": False,
             "zeroline": False, "tickangle": 0, "title": {"text": "reader"}}
    yticks = {"tickvals": list(range(len(rows))), "ticktext": [head(l, h) for l, h in rows], "showgrid": False,
              "zeroline": False, "autorange": "reversed"}
    heads = [{"text": t, "xref": "paper", "yref": "paper", "x": x, "y": 1.0, "xanchor": "center",
              "yanchor": "bottom", "showarrow": False, "font": {"size": 13}} for t, x in zip(titles, (0.235, 0.765))]
    # The rows' name heads their labels' column, as in a table: an axis title beside labels as wide
    # as "L0H0" is drawn by plotly over them.
    heads.append({"text": "writer", "xref": "paper", "yref": "paper", "x": 0, "y": 1.0, "xanchor": "right",
                  "yanchor": "bottom", "showarrow": False, "font": {"size": 12}})
    fig = figure(traces, title=title, height=360, showlegend=False, annotations=heads + notes, shapes=shapes,
                 xaxis={**ticks, "domain": [0.0, 0.47]}, yaxis=yticks,
                 xaxis2={**ticks, "domain": [0.53, 1.0], "anchor": "y2"},
                 yaxis2={**yticks, "anchor": "x2", "showticklabels": False})
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "t": 76, "l": 50}
    return fig


def _figure(before, after, model, mode, metric, loss_before, loss_after, cond) -> dict:
    label = METRIC_NAMES[metric]
    unit = "Δ loss (nats)" if metric == shipped.CAUSAL else label
    title = f"{mode}, {label}: loss {loss_before:.4f} → {loss_after:.4f}"
    return rank_heatmaps(before, after, ("before", f"after T, cond {cond:.3g}"), unit, title)
