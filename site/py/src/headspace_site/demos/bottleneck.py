"""A bottleneck: project 2-D down to 1-D, then back up to 2-D.

The product ``W = W_up W_down = u d^T`` (``d = (d1, d2)`` reads, ``u = (u1, u2)``
writes) is a 2x2 matrix of rank at most 1. It reads each point along ``d``,
forgets everything across ``d`` (the line ``d^T x = 0`` goes to zero), and
writes the one number it kept along ``u``.

The output panel's range is fixed over the whole range of the ``d1`` slider: it is the
largest output any ``d1`` would give with the other three entries as they are
(``_reach``). Dragging ``d1`` then moves only the points, and the reader sees the
output grow and shrink instead of the axes rescaling under it.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["bottleneck"].run({"d1": 2, "d2": -1, "u1": -1.5, "u2": 3})["outputs"]
>>> out["matrix"], out["rank"]         # the 2x2 product u d^T; its columns are parallel
([[-3.0, 1.5], [6.0, -3.0]], 1)
"""

from __future__ import annotations

import numpy as np

from headspace_site.figure.style import COLORS, scatter, two_panels
from headspace_site.figure.registry import Output, Param, register
from .projection import CLOUD, HIGHLIGHT


#: The sliders' bound: every entry of d and u is in [-D_MAX, D_MAX].
D_MAX = 3.0


def _reach(d2: float, u: np.ndarray) -> float:
    """Half-width of the output panel: the largest output coordinate over every ``d1`` in the
    slider's range, padded by 15% and rounded up (at least 5).

    ``max over |d1| <= D_MAX of |d1 x0 + d2 x1|`` is ``D_MAX |x0| + |d2 x1|`` (pick d1's sign), so
    no sweep is needed.

    >>> _reach(0.0, np.zeros(2))
    5.0
    """
    widest = float(np.max(D_MAX * np.abs(CLOUD[0]) + abs(d2) * np.abs(CLOUD[1])))
    return max(5.0, float(np.ceil(1.15 * float(np.abs(u).max()) * widest)))


def _line(v: np.ndarray, reach: float) -> np.ndarray:
    """Two points spanning the line through the origin along ``v`` (shape [2, 2])."""
    return np.outer(v / np.hypot(*v), [-reach, reach])


@register(
    "bottleneck", "Down to 1-D and back up: a rank-1 bottleneck",
    key='Points x are read along d (solid); every point on the dotted line goes to zero; the output panel shows where they land, on the dashed line u.',
    params=[
        Param("d1", "d₁ (read)", "range", 2.0, min=-D_MAX, max=D_MAX, step=0.1, help="first entry of the row d that the layer reads along"),
        Param("d2", "d₂ (read)", "range", -1.0, min=-3, max=3, step=0.1, help="second entry of the row d that the layer reads along"),
        Param("u1", "u₁ (write)", "range", -1.5, min=-3, max=3, step=0.1, help="first entry of the column u that the layer writes along"),
        Param("u2", "u₂ (write)", "range", 1.0, min=-3, max=3, step=0.1, help="second entry of the column u that the layer writes along"),
    ],
    outputs=[
        Output("matrix", "<i>W</i><sub>up</sub><i>W</i><sub>down</sub>", "matrix", "the 2 × 2 map from input x to output, through the 1-D hidden layer"),
        Output("rank", "rank", "integer", "how many independent directions the map keeps: at most 1 through the bottleneck"),
    ],
)
def bottleneck(d1: float, d2: float, u1: float, u2: float) -> dict:
    d, u = np.array([d1, d2]), np.array([u1, u2])
    w = np.outer(u, d)                          # W_up W_down, 2x2
    out = w @ CLOUD
    rank = int(np.linalg.matrix_rank(w))

    left = []
    if np.hypot(d1, d2) > 1e-9:
        left += [scatter(*_line(d, 6), name="read along d", color=COLORS["orange"], mode="lines", width=2.5),
                 scatter(*_line(np.array([-d2, d1]), 6), name="sent to zero", color=COLORS["muted"],
                         mode="lines", line={"color": COLORS["muted"], "width": 2, "dash": "dot"})]
    left += [scatter(*CLOUD, name="points x", color=COLORS["blue"], size=6, opacity=0.8),
             scatter(*CLOUD[:, [HIGHLIGHT]], name="one point", color=COLORS["red"], size=11, showlegend=False)]
    reach = _reach(d2, u)
    right = []
    if np.hypot(u1, u2) > 1e-9 and np.hypot(d1, d2) > 1e-9:
        right.append(scatter(*_line(u, 2 * reach), name="written along u", color=COLORS["green"],
                             mode="lines", line={"color": COLORS["green"], "width": 2, "dash": "dash"}))
    right += [scatter(*out, name="output", color=COLORS["purple"], size=6, opacity=0.6),
              scatter(*out[:, [HIGHLIGHT]], name="the same point", color=COLORS["red"], size=11, showlegend=False)]
    fig = two_panels(
        left, right, titles=("in: x", f"out: <i>W</i><sub>up</sub><i>W</i><sub>down</sub><i>x</i> (rank {rank})"), equal_axes=(True, True),
        xaxis={"range": [-5, 5], "title": {"text": "x₀"}}, yaxis={"range": [-5, 5], "title": {"text": "x₁"}},
        xaxis2={"range": [-reach, reach], "title": {"text": "z₀"}},
        yaxis2={"range": [-reach, reach], "title": {"text": "z₁"}},
    )
    return {"figure": fig, "outputs": {"matrix": w, "rank": rank}}
