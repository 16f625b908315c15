"""Projections between 2-D and 1-D: reading along a line, and writing along one.

``projection-2d-1d``: a row vector ``W = [w1 w2]`` maps each 2-D point ``x`` to
the number ``y = W x = w1 x0 + w2 x1``. That is the point's position along the
line through the origin in the direction ``(w1, w2)``, stretched by ``|W|``;
everything across the line is lost. The 1-D panel's range is fixed over the whole
range of the ``w1`` slider and every frame of the wiggle (``_reach``), so dragging ``w1``
or playing time moves only the points: the reader sees ``y`` stretch with ``|W|``.

``projection-1d-2d``: a column vector ``U = [u1; u2]`` maps each number ``y``
to the point ``y (u1, u2)``. However the numbers vary, the points stay on one
line: writing up never fills the plane. The 2-D panel's range is fixed over both sliders'
whole range (``_REACH_1D_2D``), so a drag moves only the points and the line.

>>> from headspace_site.demos import REGISTRY
>>> REGISTRY["projection-2d-1d"].run({"w1": 2, "w2": -1})["outputs"]["matrix"]
[[2.0, -1.0]]
>>> REGISTRY["projection-1d-2d"].run({"u1": -1.5, "u2": 3.2})["outputs"]["matrix"]
[[-1.5], [3.2]]
"""

from __future__ import annotations

import numpy as np

from headspace_site.figure.style import COLORS, rounded, scatter, segments, two_panels
from headspace_site.figure.registry import Output, Param, register

STEPS = 240  # frames in one loop of the wiggle
_N = 60


def _rotation(deg: float) -> np.ndarray:
    t = np.deg2rad(deg)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


def _cloud(n: int, seed: int) -> np.ndarray:
    """A seeded elongated cloud, shape [2, n]: long along 30 degrees, thin across."""
    z = np.random.default_rng(seed).standard_normal((2, n))
    return _rotation(30) @ np.diag([1.5, 0.55]) @ z


def _wiggle(n: int, steps: int, seed: int, size: float = 0.3) -> np.ndarray:
    """A seeded random walk for each point that returns to its start, shape [steps, 2, n].

    Each walk is a Brownian bridge (a random walk with its drift removed), so
    frame ``steps`` would equal frame 0 and the animation loops without a jump.
    """
    steps_ = np.random.default_rng(seed).standard_normal((steps, 2, n)) * size * 2 / np.sqrt(steps)
    walk = np.concatenate([np.zeros((1, 2, n)), np.cumsum(steps_, axis=0)])
    k = np.arange(steps + 1)[:, None, None] / steps
    return (walk - k * walk[-1])[:steps]


CLOUD = _cloud(_N, seed=7)
WIGGLE = _wiggle(_N, STEPS, seed=11)
#: The highlighted point (the rightmost), the same one in every panel of projection and bottleneck.
HIGHLIGHT = int(np.argmax(CLOUD[0]))


#: |x0| and |x1| of every point at every frame of the wiggle, [2, STEPS * n].
_EXTENT = np.abs(CLOUD[:, None, :] + WIGGLE.transpose(1, 0, 2)).reshape(2, -1)
#: The sliders' bound: w1 and w2 are in [-W_MAX, W_MAX].
W_MAX = 3.0


def _reach(w2: float) -> float:
    """Half-width of the 1-D panel: the largest ``|y|`` over every ``w1`` in the slider's range
    and every frame, padded by 15% and rounded up (at least 4).

    ``max over |w1| <= W_MAX of |w1 x0 + w2 x1|`` is ``W_MAX |x0| + |w2 x1|`` (pick w1's sign).

    >>> _reach(0.0) >= 4.0
    True
    """
    widest = float(np.max(W_MAX * _EXTENT[0] + abs(w2) * _EXTENT[1]))
    return max(4.0, float(np.ceil(1.15 * widest)))


def points_at(t: int) -> np.ndarray:
    """The wiggling cloud at frame ``t`` (shape [2, n]); frame ``t + STEPS`` is frame ``t``."""
    return CLOUD + WIGGLE[int(t) % STEPS]


@register(
    "projection-2d-1d", "Projecting 2-D down to 1-D",
    key='Points x drop (dotted) onto the line W reads along; the 1-D panel puts each at its number y = W x. The larger dot: one point in both.',
    params=[
        Param("w1", "w₁", "range", 2.0, min=-W_MAX, max=W_MAX, step=0.1,
              help="first entry of the 1×2 matrix W"),
        Param("w2", "w₂", "range", -1.0, min=-3, max=3, step=0.1,
              help="second entry of the 1×2 matrix W"),
        Param("orient", "Orient along the line", "checkbox", False,
              help="rotate the 2-D view so the line W reads along lies flat"),
        Param("t", "Time", "range", 0, min=0, max=STEPS - 1, step=1, animate=True,
              help="frame of the points' random walk"),
    ],
    outputs=[Output("matrix", "W", "matrix", "the 1 × 2 matrix [w₁ w₂] that reads a point x as y = W x")],
)
def projection_2d_1d(w1: float, w2: float, orient: bool, t: int) -> dict:
    w = np.array([w1, w2])
    x = points_at(t)
    y = w @ x                                   # the 1-D result, one number per point
    norm = float(np.hypot(w1, w2))
    angle = float(np.degrees(np.arctan2(w2, w1))) if norm > 1e-9 else 0.0
    view = _rotation(-angle) if orient else np.eye(2)   # turn the plot, not the data
    u = np.array([np.cos(np.deg2rad(angle)), np.sin(np.deg2rad(angle))])
    feet = np.outer(u, u @ x) if norm > 1e-9 else np.zeros_like(x)
    seen, seen_feet, line = view @ x, view @ feet, view @ np.outer(u, [-6, 6])

    left = []
    if norm > 1e-9:
        left += [segments(seen, seen_feet, name="drop onto the line", color=COLORS["muted"], opacity=0.7),
                 scatter(*line, name=f"the line W reads along ({angle:.0f}°)", color=COLORS["orange"],
                         mode="lines", width=2.5)]
    left += [scatter(*seen, name="points x", color=COLORS["blue"], size=6, opacity=0.8),
             scatter(*seen[:, [HIGHLIGHT]], name="one point", color=COLORS["red"], size=11, showlegend=False)]
    right = [scatter(y, np.zeros_like(y), name="y = W x", color=COLORS["green"], size=8, opacity=0.6),
             scatter(y[[HIGHLIGHT]], [0.0], name="the same point", color=COLORS["red"], size=12, showlegend=False)]
    reach = _reach(w2)
    fig = two_panels(
        left, right, titles=("2-D: points x", "1-D: y = W x"),
        split=0.6, equal_axes=(True, False),
        xaxis={"range": [-5, 5], "title": {"text": "along the line" if orient else "x₀"}},
        yaxis={"range": [-5, 5], "title": {"text": "across the line" if orient else "x₁"}},
        xaxis2={"range": [-reach, reach], "title": {"text": f"y (|W| = {norm:.2f})"}},
        yaxis2={"range": [-1, 1], "showticklabels": False, "zeroline": False, "showgrid": False},
    )
    return {"figure": fig, "outputs": {"matrix": [[float(w1), float(w2)]]}}


_VALUES = np.linspace(-2, 2, 21)   # the 1-D inputs: an evenly spaced ruler
#: The sliders' bound: u1 and u2 are in [-U_MAX, U_MAX].
U_MAX = 4.0
#: Half-width of the 2-D panel: the farthest point ``|U| max|y|`` over every U the sliders reach
#: (``|U| <= U_MAX sqrt(2)``), padded by 10% and rounded up. One range for every setting, so a
#: drag never changes the axes (plotly would redraw them) and lengths compare across settings.
_REACH_1D_2D = float(np.ceil(1.1 * U_MAX * np.sqrt(2) * np.abs(_VALUES).max()))
_SCALE = [[0.0, COLORS["blue"]], [1.0, COLORS["orange"]]]


@register(
    "projection-1d-2d", "Projecting 1-D up to 2-D",
    key='Values y on a line, coloured by size; the 2-D panel shows each as the point U y, on the dashed line U writes along.',
    params=[
        Param("u1", "u₁", "range", -1.5, min=-U_MAX, max=U_MAX, step=0.1, help="first entry of the 2×1 matrix U"),
        Param("u2", "u₂", "range", 3.2, min=-U_MAX, max=U_MAX, step=0.1, help="second entry of the 2×1 matrix U"),
    ],
    outputs=[Output("matrix", "U", "matrix", "the 2 × 1 matrix [u₁; u₂] that writes a value y as x = U y")],
)
def projection_1d_2d(u1: float, u2: float) -> dict:
    u = np.array([u1, u2])
    z = np.outer(u, _VALUES)                    # column i is U y_i
    norm = float(np.hypot(u1, u2))
    reach = _REACH_1D_2D
    colour = {"color": rounded(_VALUES, 3), "colorscale": _SCALE, "size": 9}
    left = [scatter(_VALUES, np.zeros_like(_VALUES), name="values y", marker=colour)]
    right = [scatter(*z, name="U y", marker=colour)]
    if norm > 1e-9:
        ends = np.outer(u / norm, [-2 * reach, 2 * reach])
        right.insert(0, scatter(*ends, name="the line U writes along", color=COLORS["muted"],
                                mode="lines", line={"color": COLORS["muted"], "width": 2, "dash": "dash"}))
    fig = two_panels(
        left, right, titles=("1-D: values y", "2-D: z = U y"), split=0.38, equal_axes=(False, True),
        xaxis={"range": [-2.5, 2.5], "title": {"text": "y"}},
        yaxis={"range": [-1, 1], "showticklabels": False, "zeroline": False, "showgrid": False},
        xaxis2={"range": [-reach, reach], "title": {"text": "z₀"}},
        yaxis2={"range": [-reach, reach], "title": {"text": "z₁"}},
    )
    return {"figure": fig, "outputs": {"matrix": [[float(u1)], [float(u2)]]}}
