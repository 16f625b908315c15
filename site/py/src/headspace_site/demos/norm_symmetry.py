"""How far can the residual basis of an RMSNorm model be nudged before the model notices?

With RMSNorm only ``T = alpha R`` (R orthogonal, alpha > 0) is an exact symmetry. Here the reader
applies a stretch T with condition number ``10 ** log_condition`` to the shipped model with RMSNorm
(``MODEL``, ``attn-only-2l-rms``)
(``symmetry.transform_model``: writers ``W @ T``, readers ``s T^-1 @ W`` with ``s`` the RMS of T's
singular values) and watches two things at once:

- the loss change on the site's fixed batch of repeated sequences (``shipped.eval_batch``);
  the model is no longer the same model, and this says by how much;
- the ``frobenius`` scores of every pair of heads in the chosen mode, and the condition number at
  which the pair that scores highest before the stretch first stops being the top pair.

``stretch`` picks T: ``"shrink one direction"`` multiplies one seeded random direction of the
residual stream by ``1 / condition``; ``"grow one direction"`` by ``condition``; ``"all
directions"`` is ``symmetry.stretch`` (factors log-spaced from 1 to ``condition`` over a seeded
frame). The loss curve is computed at every slider position (0 to 2 in steps of 0.1, cached per
model, stretch and seed, so moving the slider is a look-up). It costs a forward pass per position
(about 1.7 s in the browser for a new seed), and is a pure function of the model's files, the
stretch and the seed: ``norm_symmetry.write_table()`` computes every curve once (about 20 s
natively) into ``norm_symmetry_table.json``, package data of the wheel, so a new seed or stretch in the
browser is a look-up too (the tests recompute and compare; a model whose files differ from the
ones the table was computed from is computed as before). ``first_reorder_condition`` is found
on a grid 10 times finer (step 0.01 in log10), where only weights are needed, and is ``None`` when
the top pair holds up to condition 100; the scores at all 201 positions are computed at once
(``frobenius_curve``: d_head x d_head Gram matrices, T's basis found once), not by one library call
per position.

Both panels show every slider position at once (the curves) and mark the current one, so their
y ranges are fixed from the whole curves (``_span``): moving the slider moves only the marks.

Outputs: ``loss_change`` (nats, at the slider's condition), ``first_reorder_condition``,
``scores`` (``frobenius`` at the slider's condition, ``[n_layers, n_heads, n_layers, n_heads]``).

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["norm-symmetry"].run({"log_condition": 0.0})["outputs"]
>>> abs(out["loss_change"]) < 1e-9
True
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from headspace import store, symmetry
from headspace.composition import all_composition_scores

from headspace_site.figure import shipped
from headspace_site.figure.style import COLORS, scatter, two_panels
from headspace_site.figure.outputs import head
from headspace_site.figure.registry import Output, Param, register
from .residual_basis import mean_loss

#: The shipped model with RMSNorm (the first, if the manifest lists several).
MODEL = shipped.NORMALISED_MODELS[0]
STRETCHES = ("shrink one direction", "grow one direction", "all directions")
#: Slider positions (log10 of the condition number); the loss curve is computed at each.
GRID = np.round(np.arange(0.0, 2.0001, 0.1), 2)
#: The finer grid on which the top pair is tracked.
FINE = np.round(np.arange(0.0, 2.0001, 0.01), 3)
#: The seeds the seed slider offers (its Param below): the table holds a curve for each.
SEEDS = range(10)
#: Every loss curve, written by ``write_table()`` (run this module); the wheel ships it.
TABLE_FILE = Path(__file__).with_name("norm_symmetry_table.json")


def stretch_matrix(d_model: int, stretch: str, condition: float, seed: int) -> np.ndarray:
    """The T of the module docstring, [d_model, d_model], with condition number ``condition``.

    >>> T = stretch_matrix(4, "shrink one direction", 10.0, 0)
    >>> round(float(np.linalg.cond(T)), 6)
    10.0
    """
    if stretch == "all directions":
        return symmetry.stretch(d_model, condition, seed)
    u = symmetry.random_orthogonal(d_model, seed)[:, :1].T
    factor = 1.0 / condition if stretch == "shrink one direction" else condition
    return symmetry.scale_directions(d_model, u, [factor])


def _table_key(stretch: str, seed: int) -> str:
    """A curve's key in the table: ``"grow one direction/3"``."""
    return f"{stretch}/{int(seed)}"


def write_table(path: Path = TABLE_FILE, model: str = MODEL) -> Path:
    """Compute the loss curve of every stretch and seed of ``model`` and save it, with the
    fingerprint of the files (and evaluation batch) they were computed from."""
    curves = {_table_key(st, seed): list(loss_curve(model, st, seed)) for st in STRETCHES for seed in SEEDS}
    entry = store.read_manifest()["models"][model]
    path.write_text(json.dumps({"numpy": np.__version__, "model": model, "grid": GRID.tolist(),
                                "fingerprint": shipped.causal_fingerprint(entry), "curves": curves},
                               separators=(",", ":")) + "\n")
    return path


@lru_cache(maxsize=None)
def _table(model: str) -> dict:
    """The committed curves of ``model``, or {} when this copy of the package lacks the file or the
    model's files (or the evaluation batch, or the grid) are not the ones they were computed from."""
    try:
        stored = json.loads(TABLE_FILE.read_text())
        entry = store.read_manifest()["models"][model]
    except (OSError, ValueError, KeyError):
        return {}
    same = (stored.get("model") == model and stored.get("grid") == GRID.tolist()
            and stored.get("fingerprint") == shipped.causal_fingerprint(entry))
    return {key: tuple(curve) for key, curve in stored["curves"].items()} if same else {}


def losses(model: str, stretch: str, seed: int) -> tuple[float, ...]:
    """The loss curve from the table, or computed now (``loss_curve``) if it has none."""
    return _table(model).get(_table_key(stretch, seed)) or loss_curve(model, stretch, seed)


@lru_cache(maxsize=32)
def loss_curve(model: str, stretch: str, seed: int) -> tuple[float, ...]:
    """Loss change (nats) at every ``GRID`` position, computed, cached: one forward pass per position."""
    m = shipped.weights(model, None)
    base, _ = mean_loss(m, model)
    d = m.config["d_model"]
    return tuple(mean_loss(symmetry.transform_model(m, stretch_matrix(d, stretch, 10.0 ** lc, seed)), model)[0]
                 - base for lc in GRID)


def stretch_basis(d_model: int, stretch: str, conditions, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(q, f)``: every T of ``stretch_matrix`` at the condition numbers ``conditions`` is
    ``q diag(f[i]) q^T``, q orthogonal [d_model, d_model] whose first columns are the stretched
    directions (orthonormalised as ``symmetry.scale_directions`` does), ``f`` [len, k] their factors
    (the other directions keep factor 1).

    >>> q, f = stretch_basis(4, "all directions", [1.0, 10.0], 0)
    >>> T = (q[:, :f.shape[1]] * (f[1] - 1.0)) @ q[:, :f.shape[1]].T + np.eye(4)
    >>> bool(np.allclose(T, stretch_matrix(4, "all directions", 10.0, 0)))
    True
    """
    c = np.asarray(conditions, dtype=float)[:, None]
    if stretch == "all directions":
        directions = symmetry.random_orthogonal(d_model, seed).T
        factors = c ** np.linspace(0.0, 1.0, d_model)
    else:
        directions = symmetry.random_orthogonal(d_model, seed)[:, :1].T
        factors = 1.0 / c if stretch == "shrink one direction" else c
    return np.linalg.qr(directions.T, mode="complete")[0], factors


def frobenius_curve(m, q: np.ndarray, f: np.ndarray, mode: str) -> np.ndarray:
    """``frobenius_after(m, T, mode)`` for every ``T = q diag(f[i]) q^T`` (``stretch_basis``) at once,
    [len(f), n_layers, n_heads, n_layers, n_heads]: one library call per T cost most of a new
    seed in the browser.

    With writer ``A = V O`` and reader ``B = L R^T`` (Q: ``L, R = W_Q, W_K``; K: ``W_K, W_Q``; V:
    ``W_V, W_O^T``), moved by T (``T^-1 W`` for W_Q, W_K, W_V; ``W_O T``): ``||A||^2 = tr(Gv Go)``,
    ``||B||^2 = tr(Gl Gr)`` and ``||A B||^2 = tr(M^T Gv M Gr)`` with the d_head x d_head Gram
    matrices G (``X^T X``, ``O O^T``) and ``M = O L = W_O W_L``, which T leaves alone (``T T^-1``).
    Each Gram matrix is its unmoved one plus one term per stretched direction k, weighted by
    ``f_k^-2 - 1`` (``T^-1 W``) or ``f_k^2 - 1`` (``W_O T``): one product of [len(f), k] by [k, ...].
    """
    k = f.shape[1]

    def gram(W, power):                                     # W [layers, heads, d_model, d_head]
        r = np.einsum("dk,lhdi->klhi", q[:, :k], W)          # W's rows along the stretched directions
        outer = np.einsum("klhi,klhj->klhij", r, r)
        return np.swapaxes(W, -1, -2) @ W + np.tensordot(f ** power - 1.0, outer, axes=1)
    O_T = np.swapaxes(m.W_O, -1, -2)                        # O O^T of W_O T is the Gram of (W_O T)^T
    # writers: every layer but the last; readers: every layer but the first
    Gv, Go = gram(m.W_V[:-1], -2.0), gram(O_T[:-1], 2.0)
    Wl, Gl, Gr = {"Q": lambda: (m.W_Q, gram(m.W_Q[1:], -2.0), gram(m.W_K[1:], -2.0)),
                  "K": lambda: (m.W_K, gram(m.W_K[1:], -2.0), gram(m.W_Q[1:], -2.0)),
                  "V": lambda: (m.W_V, gram(m.W_V[1:], -2.0), gram(O_T[1:], 2.0))}[mode]()
    writer = (Gv * Go).sum(axis=(-1, -2))                    # ||A||^2 per earlier head (Go symmetric)
    reader = (Gl * Gr).sum(axis=(-1, -2))                    # ||B||^2 per later head
    n_layers, n_heads = m.W_O.shape[:2]
    out = np.zeros((len(f), n_layers, n_heads, n_layers, n_heads))
    for l1 in range(n_layers - 1):
        for l2 in range(l1 + 1, n_layers):                   # later heads only (reader index l2 - 1)
            M = m.W_O[l1][:, None] @ Wl[l2][None]           # [h1, h2, d_head, d_head], T-free
            product = (M * (Gv[:, l1, :, None] @ M @ Gr[:, l2 - 1, None])).sum(axis=(-1, -2))
            out[:, l1, :, l2, :] = np.sqrt(np.maximum(product, 0.0) / (writer[:, l1, :, None] * reader[:, l2 - 1, None, :]))
    return out


def frobenius_after(m, T, mode) -> np.ndarray:
    """frobenius scores of the heads of ``m`` after T; only the heads' weights are moved (the
    score does not see the global scale that ``transform_model`` gives the readers)."""
    Ti = np.linalg.inv(T)
    return all_composition_scores(Ti @ m.W_Q, Ti @ m.W_K, Ti @ m.W_V, m.W_O @ T, mode, "frobenius")


@lru_cache(maxsize=32)
def score_curve(model: str, stretch: str, seed: int, mode: str) -> np.ndarray:
    """``frobenius`` at every ``FINE`` position, ``[len(FINE), n_layers, n_heads, n_layers, n_heads]``,
    all at once (``frobenius_curve``; the tests compare it with ``frobenius_after`` at each)."""
    m = shipped.weights(model, None)
    out = frobenius_curve(m, *stretch_basis(m.config["d_model"], stretch, 10.0 ** FINE, seed), mode)
    out.setflags(write=False)
    return out


def first_reorder(curve: np.ndarray) -> float | None:
    """The condition number (on ``FINE``) at which the top pair of ``curve[0]`` first loses the top.

    >>> c = np.zeros((len(FINE), 1, 2, 2, 1)); c[:, 0, 0, 1, 0] = 1.0; c[50:, 0, 1, 1, 0] = 2.0
    >>> round(first_reorder(c), 6)   # 10 ** 0.5
    3.162278
    """
    flat = curve.reshape(len(curve), -1)
    top = flat.argmax(axis=1)
    moved = np.flatnonzero(top != top[0])
    return None if moved.size == 0 else float(10.0 ** FINE[moved[0]])


@register(
    "norm-symmetry", "Nudge the basis of a model with RMSNorm: when does the model notice?",
    key="The loss change as T stretches, then every pair's Frobenius score (thick: the top pair at the start); dashed: where the top pair changes.",
    params=[
        Param("stretch", "Stretch", "select", STRETCHES[0], options=STRETCHES,
              help="which directions of the residual stream T scales"),
        Param("log_condition", "Condition number, log₁₀", "range", 1.5, min=0.0, max=2.0, step=0.1,
              help="T's condition number is 10^this: 1 is no change"),
        shipped.mode_param(),
        Param("seed", "Seed of the direction", "range", 0, min=SEEDS.start, max=SEEDS.stop - 1, step=1),
    ],
    outputs=[
        Output("loss_change", "loss change", "number",
               "how much the loss on the fixed batch changes at this condition number", unit=" nats"),
        Output("first_reorder_condition", "top pair first changes at", "number",
               "the condition number at which the pair on top before the stretch first loses the top place",
               none="not up to 100"),
        Output("scores", "scores", "head-pairs",
               "every pair's Frobenius score at this condition number: writer (row) → reader (column)", fold=True),
    ],
    needs_models=True,
)
def norm_symmetry(stretch: str, log_condition: float, mode: str, seed: int) -> dict:
    model = MODEL
    curve_of_loss = losses(model, stretch, seed)
    curve = score_curve(model, stretch, seed, mode)
    i = int(np.argmin(np.abs(GRID - log_condition)))
    j = int(np.argmin(np.abs(FINE - GRID[i])))
    first = first_reorder(curve)
    outputs = {"loss_change": curve_of_loss[i], "first_reorder_condition": first, "scores": curve[j]}
    return {"figure": _figure(curve_of_loss, curve, i, j, first, mode, stretch), "outputs": outputs}


def _span(lo: float, hi: float, pad: float = 0.06) -> list[float]:
    """``[lo, hi]`` widened by ``pad`` of its length at each end (a flat curve gets a unit span).

    >>> _span(0.0, 1.0)
    [-0.06, 1.06]
    """
    width = (hi - lo) or 1.0
    return [lo - pad * width, hi + pad * width]


def _figure(losses, curve, i, j, first, mode, stretch) -> dict:
    cond, fine = GRID.tolist(), FINE.tolist()      # log10 of the condition number, labelled as the number
    flat = curve
    n = flat.shape[1]
    pairs = [(a, b, c, d) for a in range(n) for b in range(flat.shape[2]) for c in range(a + 1, n)
             for d in range(flat.shape[4])]
    top = max(pairs, key=lambda p: flat[(0,) + p])
    left = [scatter(cond, losses, name="loss change", color=COLORS["red"], mode="lines+markers", size=5,
                    customdata=(10.0 ** GRID).tolist(),
                    hovertemplate="condition %{customdata:.3g}<br>loss change %{y:.4f} nats<extra></extra>"),
            scatter([cond[i]], [losses[i]], name="this stretch", color=COLORS["ink"], size=11,
                    customdata=[10.0 ** GRID[i]], hovertemplate="condition %{customdata:.3g}<br>loss change %{y:.4f} nats<extra></extra>")]
    right = []
    for p in pairs:
        if p == top:
            continue
        right.append(scatter(fine, flat[(slice(None),) + p], mode="lines", color=COLORS["muted"], width=1,
                             name=f"{head(*p[:2])} → {head(*p[2:])}", showlegend=False,
                             hovertemplate=f"{head(*p[:2])} → {head(*p[2:])}: " + "%{y:.3f}<extra></extra>"))
    right.append(scatter(fine, flat[(slice(None),) + top], mode="lines", color=COLORS["orange"], width=3,
                         name=f"top pair at the start, {head(*top[:2])} → {head(*top[2:])}",
                         hovertemplate="top pair: %{y:.3f}<extra></extra>"))
    top_y = float(flat.max()) * 1.05
    right.append(scatter([fine[j], fine[j]], [0.0, top_y], mode="lines", color=COLORS["ink"], width=1.5,
                         name="this stretch", showlegend=False, hoverinfo="skip"))
    lines = []
    if first is not None:
        for axis in ("x", "x2"):
            # "y domain": from the bottom to the top of its own panel, not through the gap between them
            lines.append({"type": "line", "xref": axis, "yref": "y" + axis[1:] + " domain",
                          "x0": np.log10(first), "x1": np.log10(first), "y0": 0,
                          "y1": 1, "line": {"color": COLORS["orange"], "width": 1.5, "dash": "dash"}})
    log_x = {"title": {"text": "cond(T)"}, "zeroline": False, "range": [-0.05, 2.05],
             "tickvals": [0, 0.5, 1, 1.5, 2], "ticktext": ["1", "3.2", "10", "32", "100"]}
    fig = two_panels(left, right, titles=("loss change (nats)", f"Frobenius, {mode}"),
                     xaxis=log_x, xaxis2=log_x,
                     # the curves hold every slider position: ranges that fit them fit every frame
                     yaxis={"range": _span(min(0.0, *losses), max(0.0, *losses))},
                     yaxis2={"zeroline": False, "range": _span(min(0.0, float(flat.min())), top_y, pad=0.03)},
                     shapes=lines, height=400)
    where = "top pair holds to 100" if first is None else f"top pair changes at {first:.3g}"
    fig["layout"]["title"] = {"text": f"{stretch}: {where}", "font": {"size": 13}}
    fig["layout"]["margin"] = {**fig["layout"]["margin"], "t": 60, "l": 52, "b": 96}
    fig["layout"]["legend"] = {**fig["layout"]["legend"], "y": -0.26}   # clear of the axis titles
    fig["layout"]["yaxis"]["automargin"] = True
    return fig
