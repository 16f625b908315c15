"""The hidden layer of a bottleneck has no preferred basis.

For any invertible ``A``, ``W_up W_down = (W_up A)(A^-1 W_down)``: the hidden
values become ``y' = A^-1 y`` while the output ``W_up y`` does not change. An
attention score is different: it is a dot product of two hidden vectors,
``s = q . k`` with ``q = W_Q x_q`` and ``k = W_K x_k``. Changing both by the
same ``A^-1`` gives ``s' = q^T A^-T A^-1 k``, equal to ``s`` for every pair
only when ``A^T A = I`` (``A`` orthogonal: rotations and reflections). Changing
the keys by ``A^T`` instead (the "dual" change) keeps every score for any ``A``.

``A = R(rotation) F H(shear) S(scale)``, with ``F`` a reflection when ``flip`` is
on, ``H = [[1, shear], [0, 1]]`` and ``S = diag(scale, 1)``. Outputs:

- ``A``: the matrix.
- ``orthogonal``: whether ``A^T A = I`` (to 1e-9).
- ``max_hidden_change``: largest change of any hidden coordinate (OV case).
- ``max_output_change``: largest change of any output coordinate; zero to rounding.
- ``max_score_change``: largest change of any attention score when queries and
  keys both move by ``A^-1``; zero exactly when ``A`` is orthogonal.
- ``max_score_change_dual``: the same with keys moved by ``A^T``; always zero.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["hidden-symmetry"].run({"rotation": 40, "scale": 1, "shear": 0})["outputs"]
>>> out["orthogonal"], out["max_output_change"] < 1e-12, out["max_score_change"] < 1e-12
(True, True, True)
>>> out = REGISTRY["hidden-symmetry"].run({"rotation": 40, "scale": 2, "shear": 0})["outputs"]
>>> out["orthogonal"], out["max_output_change"] < 1e-12, out["max_score_change"] > 0.1
(False, True, True)
"""

from __future__ import annotations

import numpy as np

from headspace_site.figure.style import COLORS, scatter, two_panels
from headspace_site.figure.registry import Output, Param, register

_RING = np.stack([np.cos(np.linspace(0, 2 * np.pi, 36, endpoint=False)),
                  np.sin(np.linspace(0, 2 * np.pi, 36, endpoint=False))])
_HUE = np.linspace(0, 1, 36, endpoint=False)
_CYCLIC = [[0.0, COLORS["blue"]], [0.25, COLORS["green"]], [0.5, COLORS["orange"]],
           [0.75, COLORS["purple"]], [1.0, COLORS["blue"]]]
W_DOWN = np.array([[1.2, 0.5], [-0.4, 0.9]])
W_UP = np.array([[0.8, -0.6], [0.7, 1.1]])
W_Q = np.array([[1.0, 0.3], [0.2, -0.8]])
W_K = np.array([[0.6, 0.9], [-0.7, 0.4]])
_rng = np.random.default_rng(3)
X_Q, X_K = _rng.standard_normal((2, 6)), _rng.standard_normal((2, 6))   # six query and six key tokens


def _rotation(deg: float) -> np.ndarray:
    t = np.deg2rad(deg)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


def basis_change(rotation: float, scale: float, shear: float, flip: bool) -> np.ndarray:
    """``A = R(rotation) F H(shear) S(scale)``; invertible for every ``scale > 0``."""
    if not scale > 0:
        raise ValueError(f"scale must be positive so that A is invertible; got {scale!r}")
    f = np.diag([1.0, -1.0]) if flip else np.eye(2)
    return _rotation(rotation) @ f @ np.array([[1.0, shear], [0.0, 1.0]]) @ np.diag([scale, 1.0])


def basis_params(rotation: float, scale: float, axis: str) -> list[Param]:
    """The controls of ``basis_change`` (rotation, stretch, shear, reflect), with these defaults;
    ``axis`` names the space the stretch acts on. Shared by every demo of a 2-D change of basis."""
    return [Param("rotation", "Rotation", "range", rotation, min=-180, max=180, step=1, unit="°"),
            Param("scale", "Stretch", "range", scale, min=0.25, max=4, step=0.05,
                  help=f"stretch of the first {axis} axis"),
            Param("shear", "Shear", "range", 0.0, min=-2, max=2, step=0.05),
            Param("flip", "Reflect", "checkbox", False)]


@register(
    "hidden-symmetry", "Change the hidden basis: the output never notices",
    key='Faded: before the change of basis; solid: after. OV: colour marks the place on the ring; '
        'QK: the legend tells queries from keys.',
    params=[
        *basis_params(rotation=30, scale=1.5, axis="hidden"),
        Param("view", "Circuit", "select", "OV", options=("OV", "QK"),
              help="OV: a bottleneck's output; QK: attention scores"),
        Param("dual", "Keys change by Aᵀ (QK)", "checkbox", False,
              help="in the QK view, change the keys by Aᵀ instead of A⁻¹",
              active_when={"view": ["QK"]}, inactive="Only when Circuit is QK"),
    ],
    outputs=[
        Output("A", "A", "matrix", "the change of hidden basis: rotation × reflection × shear × stretch"),
        Output("orthogonal", "A orthogonal", "boolean", "whether AᵀA = I: a rotation, or a rotation and a reflection"),
        Output("max_hidden_change", "largest hidden change", "number",
               "the largest change of any hidden coordinate of the ring, from y to A⁻¹y"),
        Output("max_output_change", "largest output change", "number",
               "the largest change of any output coordinate: rounding error only", floor=0),
        Output("max_score_change", "largest score change", "number",
               "the largest change of any attention score when queries and keys both change by A⁻¹"),
        Output("max_score_change_dual", "largest score change, keys by Aᵀ", "number",
               "the same when the keys change by Aᵀ instead: rounding error only", floor=0),
    ],
)
def hidden_symmetry(rotation: float, scale: float, shear: float, flip: bool, view: str, dual: bool) -> dict:
    a = basis_change(rotation, scale, shear, flip)
    a_inv = np.linalg.inv(a)

    hidden = W_DOWN @ _RING
    hidden_new = (a_inv @ W_DOWN) @ _RING       # the new factors, multiplied as a model would
    out = W_UP @ hidden
    out_new = (W_UP @ a) @ hidden_new

    q, k = W_Q @ X_Q, W_K @ X_K
    scores = q.T @ k                             # [query, key]
    q_new, k_new, k_dual = a_inv @ q, a_inv @ k, a.T @ k
    scores_new, scores_dual = q_new.T @ k_new, q_new.T @ k_dual

    outputs = {
        "A": a,
        "orthogonal": bool(np.abs(a.T @ a - np.eye(2)).max() < 1e-9),
        "max_hidden_change": float(np.abs(hidden_new - hidden).max()),
        "max_output_change": float(np.abs(out_new - out).max()),
        "max_score_change": float(np.abs(scores_new - scores).max()),
        "max_score_change_dual": float(np.abs(scores_dual - scores).max()),
    }
    fig = _ov_figure(hidden, hidden_new, out, out_new) if view == "OV" else \
        _qk_figure(q, k, q_new, k_dual if dual else k_new, scores, scores_dual if dual else scores_new, dual)
    return {"figure": fig, "outputs": outputs}


def _ring(points, size, **extra):
    """The ring's points, each coloured by its place on the ring; out of the legend, whose swatch
    would show one colour for all (the key says what colour means)."""
    return scatter(*points, name="", marker={"color": _HUE.tolist(), "colorscale": _CYCLIC, "size": size,
                                             "cmin": 0, "cmax": 1}, showlegend=False, **extra)


def _legend_only(name, size, opacity=1.0, **marker):
    """A legend entry in ink for a mark drawn in the ring's colours: the fading and size it shows are
    the drawing's, its colour stands for every colour of the ring."""
    return {**scatter([0], [0], name=name, color=COLORS["ink"], opacity=opacity,
                      marker={"size": size, "color": COLORS["ink"], **marker}), "x": [None], "y": [None]}


def _ov_figure(hidden, hidden_new, out, out_new) -> dict:
    reach_h = max(2.5, float(np.ceil(1.1 * np.abs(hidden_new).max())))
    left = [_ring(hidden, 6, opacity=0.3), _ring(hidden_new, 8),
            _legend_only("hidden y = W<sub>down</sub>x, before", 6, opacity=0.3),
            _legend_only("new hidden A⁻¹ y, after", 8)]
    right = [scatter(*out, name="output before", mode="markers", color=COLORS["ink"], size=14, opacity=0.35),
             _ring(out_new, 6), _legend_only("output after", 6)]
    return two_panels(
        left, right, titles=("hidden layer: moves", "output: stays put"), equal_axes=(True, True),
        xaxis={"range": [-reach_h, reach_h], "title": {"text": "y₀"}},
        yaxis={"range": [-reach_h, reach_h], "title": {"text": "y₁"}},
        xaxis2={"range": [-2.5, 2.5], "title": {"text": "z₀"}}, yaxis2={"range": [-2.5, 2.5], "title": {"text": "z₁"}},
    )


def _qk_figure(q, k, q_new, k_new, scores, scores_new, dual) -> dict:
    reach = max(2.5, float(np.ceil(1.1 * max(np.abs(q_new).max(), np.abs(k_new).max(), np.abs(q).max(),
                                              np.abs(k).max()))))
    lim = max(3.0, float(np.ceil(1.1 * max(np.abs(scores).max(), np.abs(scores_new).max()))))
    left = [scatter(*q, name="queries before", color=COLORS["blue"], size=7, opacity=0.3),
            scatter(*k, name="keys before", color=COLORS["orange"], opacity=0.3,
                    marker={"symbol": "diamond", "size": 8, "color": COLORS["orange"]}),
            scatter(*q_new, name="queries A⁻¹q", color=COLORS["blue"], size=9),
            scatter(*k_new, name="keys Aᵀk" if dual else "keys A⁻¹k", color=COLORS["orange"], size=9,
                    marker={"symbol": "diamond", "size": 9, "color": COLORS["orange"]})]
    right = [scatter([-lim, lim], [-lim, lim], name="unchanged", color=COLORS["muted"], mode="lines",
                     line={"color": COLORS["muted"], "width": 1.5, "dash": "dash"}),
             scatter(scores.ravel(), scores_new.ravel(), name="one query-key pair", color=COLORS["red"], size=7,
                     opacity=0.8)]
    return two_panels(
        left, right, titles=("hidden queries and keys", "attention score: after vs before"),
        equal_axes=(True, True),
        xaxis={"range": [-reach, reach]}, yaxis={"range": [-reach, reach]},
        xaxis2={"range": [-lim, lim], "title": {"text": "score before"}},
        yaxis2={"range": [-lim, lim], "title": {"text": "score after"}},
    )
