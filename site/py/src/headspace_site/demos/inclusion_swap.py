"""One writer, two readers, and a stretch of the stream that swaps which reader it writes inside.

The plane is the residual stream, in the row convention (``x -> x A``). The writer ``A = e_1 e_1^T``
writes the line through ``e_1``; reader ``B = e_1 e_1^T`` reads that same line, reader
``D = u u^T`` the line through ``u``, ``phi`` degrees from ``e_1``. ``axioms.inclusion_swap`` gives
the change of basis ``T = S^(1/2)`` (S symmetric positive definite, ``S e_1`` along u) after which
the writer lies inside D's read space instead of B's. ``stretch`` = s applies ``T^s`` (s = 0: no
change, s = 1: all of T): the writer becomes ``T^-s A T^s``, a QK reader ``T^-s B T^-s``, so the
write line is the line through ``T^s e_1`` and the read lines those through ``T^-s e_1`` and
``T^-s u``. The model computes the same function for every s.

Outputs, each a pair (reader B, reader D) except ``condition``:

- ``angles``: the angle between the write line and each read line, in degrees.
- ``counting``: the counting score ``rank(A B) / rank(A)``, the share of the write space that
  survives the reader: 1 unless the writer lies in the reader's kernel.
- ``subspace``: ``composition_score(A, B, "subspace", rtol=1e-9)``, the mean squared cosine of the
  angles.
- ``condition``: the condition number of ``T^s`` (the ratio of its largest to smallest stretch).

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["inclusion-swap"].run({"phi": 45, "stretch": 1})["outputs"]
>>> [round(a, 9) for a in out["angles"]], [round(c, 9) for c in out["subspace"]], round(out["condition"], 2)
([45.0, 0.0], [0.5, 1.0], 2.62)
"""

from __future__ import annotations

import numpy as np

from headspace.axioms import inclusion_swap as _swap
from headspace.axioms import principal_angles
from headspace.composition import composition_score

from headspace_site.figure.style import COLORS, figure, scatter
from headspace_site.figure.registry import Output, Param, register

#: Numerical rank tolerance of the subspace score. The default, max(shape) * eps, can count the rounding
#: left in a stretched rank-1 reader (a second singular value near 5e-16 of the first) as a direction.
RTOL = 1e-9
_CIRCLE = np.linspace(0.0, 2.0 * np.pi, 73)
_REACH = 1.7                                   # half-length of the drawn lines; the axes show +-1.8


def power(T: np.ndarray, s: float) -> np.ndarray:
    """``T^s`` for a symmetric positive definite ``T``, by its eigenvalues."""
    lam, V = np.linalg.eigh(T)
    return (V * lam ** s) @ V.T


def counting(A: np.ndarray, B: np.ndarray) -> float:
    """``1 - dim(W ∩ ker B) / dim W``, W the row space of A: the rank A keeps through B, ``rank(AB) / rank(A)``."""
    return float(np.linalg.matrix_rank(A @ B) / np.linalg.matrix_rank(A))


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@register(
    "inclusion-swap", "A stretch of the stream moves a writer from one reader's space into another's",
    key="The writer's direction, reader B's space (dashed), reader D's (dotted), B's kernel, and the unit circle after the stretch.",
    params=[
        Param("phi", "Reader D's angle φ", "range", 45, min=5, max=80, step=5, unit="°",
              help="the angle between the line reader D reads and the line reader B reads"),
        Param("stretch", "Stretch", "range", 0.0, min=0.0, max=1.0, step=0.05,
              help="how much of the change of basis T is applied: 0 none, 1 all"),
    ],
    outputs=[
        Output("angles", "angle to each read line", "vector",
               "the angle between the writer's line and the line each reader reads", unit="°",
               labels=("reader B", "reader D")),
        Output("counting", "counting score", "vector",
               "rank(AB) / rank(A): the share of the writer's space a reader does not discard",
               labels=("reader B", "reader D")),
        Output("subspace", "subspace score", "vector",
               "the mean squared cosine of the angles between the writer's and each reader's spaces",
               labels=("reader B", "reader D")),
        Output("condition", "condition number of the stretch", "number",
               "the largest stretch of the applied change of basis over its smallest: 1 is no change"),
    ],
)
def inclusion_swap(phi: float, stretch: float) -> dict:
    ex = _swap(phi, d_model=2)
    Ts, Tis = power(ex["T"], stretch), power(ex["T"], -stretch)
    A, B, D = Tis @ ex["A"] @ Ts, Tis @ ex["B"] @ Tis, Tis @ ex["D"] @ Tis
    e1, u = np.eye(2)[0], ex["D"][:, 0] / ex["D"][0, 0]
    w, rb, rd = _unit(Ts @ e1), _unit(Tis @ e1), _unit(Tis @ u)       # write line, read lines
    angles = [round(float(principal_angles(w[:, None], r[:, None])[0]), 9) + 0.0 for r in (rb, rd)]
    lam = np.linalg.eigvalsh(ex["T"])
    outputs = {"angles": angles,
               "counting": [float(counting(A, B)), float(counting(A, D))],
               "subspace": [float(composition_score(A, R, "subspace", rtol=RTOL)) for R in (B, D)],
               "condition": float((lam.max() / lam.min()) ** stretch)}
    return {"figure": _figure(w, rb, rd, Ts, angles), "outputs": outputs}


def _line(v, name, color, dash, width=2.5):
    return scatter([-_REACH * v[0], _REACH * v[0]], [-_REACH * v[1], _REACH * v[1]], name=name, color=color,
                   mode="lines", line={"color": color, "width": width, "dash": dash})


def _figure(w, rb, rd, Ts, angles) -> dict:
    circle = Ts @ np.stack([np.cos(_CIRCLE), np.sin(_CIRCLE)])     # the unit circle, moved like the writer
    circle /= np.sqrt(abs(np.linalg.det(Ts)))                      # same area, so only its shape changes
    kernel = np.array([-rb[1], rb[0]])                             # B's kernel: at right angles to its read line
    # the writer first and wide, so a read line lying on it shows its dashes on top
    traces = [_line(w, "writer A", COLORS["blue"], "solid", width=6),
              scatter(*circle, name="stretched circle", color=COLORS["muted"], mode="lines", width=1.5,
                      showlegend=False),                           # three legend entries fit a phone's row
              {**_line(kernel, "B's kernel", COLORS["muted"], "dashdot", width=1.5), "showlegend": False},
              _line(rd, "reader D", COLORS["purple"], "dot", width=3),
              _line(rb, "reader B", COLORS["green"], "dash", width=2.5)]
    title = f"writer to B {angles[0]:.0f}°, to D {angles[1]:.0f}°"
    return figure(traces, title=title, equal_axes=True, extent=1.8, height=420,
                  xaxis={"fixedrange": True}, yaxis={"fixedrange": True})
