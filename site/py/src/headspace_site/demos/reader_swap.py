"""Axiom 3 against Axiom 4: a change of basis that keeps a writer and swaps two of its readers.

In a stream of four dimensions, a writer of rank 1 ``A = x w^T`` reads along ``x = e_4`` and writes
along ``w = e_1``; two readers of rank 1 share their output side ``y = e_3``: ``B = r y^T`` and
``D = r' y^T``, where ``r`` lies ``angle_b`` from ``w`` and ``r'`` lies ``angle_d`` from it, on the
other side, in the plane of ``e_1`` and ``e_2``. Rescaled so that ``w^T r' = w^T r`` (which changes
no score), and with ``f``, ``g`` in that plane such that ``f^T r = g^T r' = 1`` and
``f^T r' = g^T r = 0``, the change of basis

    T = S = I + (r' - r)(f - g)^T,    its own inverse,

keeps the writer (``S A S = A``) and swaps the readers as QK readers (``S B S^T = D``). A score of
the two heads alone then gives (A, B) after the change what it gave (A, D) before: Axiom 4 keeps
their order only if they tie. Outputs:

- ``before``, ``after``: the Frobenius score of the writer with B and with D, before and after;
- ``order_kept``: whether every score drawn keeps the order of the two readers;
- ``writer_change``: the largest entry of ``|S A S - A|``: rounding only;
- ``swap_error``: the largest entry of ``|S B S^T - D|``: rounding only.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["reader-swap"].run({"angle_b": 20, "angle_d": 60})["outputs"]
>>> [round(v, 3) for v in out["before"]], [round(v, 3) for v in out["after"]], out["order_kept"]
([0.94, 0.5], [0.5, 0.94], False)
>>> out["writer_change"] < 1e-12 and out["swap_error"] < 1e-12
True
>>> REGISTRY["reader-swap"].run({"angle_b": 40, "angle_d": 40})["outputs"]["order_kept"]   # a tie survives
True
"""

from __future__ import annotations

import numpy as np

from headspace.composition import composition_score

from headspace_site.figure.names import METRIC_NAMES
from headspace_site.figure.registry import Output, Param, register
from headspace_site.figure.style import COLORS, scatter, two_panels

METRICS = ("frobenius", "svd_bound", "subspace")
_E = np.eye(4)
X, W, Y = _E[3], _E[0], _E[2]   # the writer reads along x and writes along w; the readers write along y


def construction(angle_b: float, angle_d: float) -> dict:
    """The writer ``A``, the readers ``B`` and ``D`` and the swap ``S``, as ``{name: [4, 4] array}``."""
    for name, a in (("angle_b", angle_b), ("angle_d", angle_d)):
        if not 0 < a < 90:
            raise ValueError(f"{name} must lie strictly between 0 and 90 degrees, so that the reader reads some "
                             f"of what the writer writes and the two readers are independent; got {a!r}")
    a, b = np.deg2rad(angle_b), np.deg2rad(angle_d)
    r = np.array([np.cos(a), np.sin(a), 0.0, 0.0])
    r2 = np.array([np.cos(b), -np.sin(b), 0.0, 0.0]) * (np.cos(a) / np.cos(b))   # w^T r' = w^T r
    fg = np.linalg.inv(np.stack([r, r2])[:, :2].T)                              # rows f, g in the e_1, e_2 plane
    f, g = np.pad(fg[0], (0, 2)), np.pad(fg[1], (0, 2))
    S = np.eye(4) + np.outer(r2 - r, f - g)
    return {"A": np.outer(X, W), "B": np.outer(r, Y), "D": np.outer(r2, Y), "S": S}


def _order(x: float, y: float) -> int:
    """1, 0 or -1 as x is above, level with or below y; level within rounding (a tie stays a tie)."""
    return 0 if abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y)) else (1 if x > y else -1)


def _scores(A, B, D) -> dict:
    return {m: (float(composition_score(A, B, m)), float(composition_score(A, D, m))) for m in METRICS}


@register(
    "reader-swap", "A change of basis that keeps a writer and swaps two of its readers",
    key="Each score of the writer with reader B and with reader D, before and after the change of basis S: "
        "the two trade places.",
    params=[
        Param("angle_b", "Reader B's angle", "range", 20, min=5, max=85, step=1, unit="°",
              help="the angle between what the writer writes and what reader B reads"),
        Param("angle_d", "Reader D's angle", "range", 60, min=5, max=85, step=1, unit="°",
              help="the angle between what the writer writes and what reader D reads"),
    ],
    outputs=[
        Output("before", "Frobenius, before", "vector", "the writer's Frobenius score with B and with D, before "
               "the change of basis", labels=("with B", "with D")),
        Output("after", "Frobenius, after S", "vector", "the same after the change of basis S: the two swap",
               labels=("with B", "with D")),
        Output("order_kept", "order kept", "boolean",
               "whether every score drawn ranks B and D the same way before and after: only when they tie"),
        Output("writer_change", "writer's change", "number",
               "the largest change of any entry of the writer under S: rounding error only", floor=0),
        Output("swap_error", "B after S minus D", "number",
               "the largest entry of S B Sᵀ − D: B becomes D, to rounding", floor=0),
    ],
)
def reader_swap(angle_b: float, angle_d: float) -> dict:
    c = construction(angle_b, angle_d)
    A, B, D, S = c["A"], c["B"], c["D"], c["S"]
    A2, B2, D2 = S @ A @ S, S @ B @ S.T, S @ D @ S.T        # S is its own inverse: T^-1 A T and T^-1 B T^-T
    before, after = _scores(A, B, D), _scores(A2, B2, D2)
    names = [METRIC_NAMES[m] for m in METRICS]

    def panel(scores, legend):
        """Each score a row: the writer with B and with D (scatter rounds numbers; the rows are names)."""
        return [{**scatter([scores[m][0] for m in METRICS], [0] * len(METRICS), name="writer with reader B",
                           color=COLORS["blue"], size=11, showlegend=legend, legendgroup="B"), "y": names},
                {**scatter([scores[m][1] for m in METRICS], [0] * len(METRICS), name="writer with reader D",
                           color=COLORS["orange"], size=11, showlegend=legend, legendgroup="D"), "y": names}]

    rows = {"type": "category", "range": [len(METRICS) - 0.5, -0.5], "showgrid": False}   # room above the top row
    axis = {"range": [-0.03, 1.05], "title": {"text": "score"}, "fixedrange": True}
    fig = two_panels(panel(before, True), panel(after, False), titles=("before", "after the change of basis S"),
                     height=300, xaxis=axis, xaxis2=dict(axis), yaxis=dict(rows), yaxis2=dict(rows))
    kept = all(_order(*before[m]) == _order(*after[m]) for m in METRICS)
    return {"figure": fig, "outputs": {
        "before": list(before["frobenius"]), "after": list(after["frobenius"]), "order_kept": bool(kept),
        "writer_change": float(np.abs(A2 - A).max()), "swap_error": float(np.abs(B2 - D).max())}}
