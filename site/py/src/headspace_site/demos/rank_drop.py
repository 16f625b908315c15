"""Axiom 3 read by unweighted angles asks for the impossible: two writers whose order flips where their rank drops.

``axioms.axiom_3_as_posed_counterexample(eps, delta)`` builds, in three dimensions, a reader B that
reads ``R = span(e_1, e_2)`` and two writers of rank 2 for every ``eps > 0``:

* ``A_1 = x e_1^T + eps y e_3^T``: loud inside R, faint in B's kernel; principal angles (0°, 90°);
* ``A_2 = x m^T + eps y e_1^T``, m at ``90° - delta`` from R: loud almost in the kernel, faint
  inside R; angles (0°, 90° - delta), one smaller, so Axiom 3 ranks ``A_2`` above ``A_1``.

At ``eps = 0`` both drop to rank 1 and the order Axiom 3 asks for flips: ``x e_1^T`` writes inside R
(angle 0°), ``x m^T`` almost in the kernel. The figure draws two scores of both writers against eps:
``subspace`` keeps the order for every eps > 0 and jumps at 0; ``frobenius`` is continuous and ranks
``A_1`` above ``A_2`` throughout.

Outputs, each a pair (writer A_1, writer A_2) at the chosen ``eps``:

- ``subspace``, ``frobenius``: ``composition_score(A_i, B, metric)``.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["rank-drop"].run({"eps": 0.2, "delta": 10})["outputs"]
>>> [round(c, 6) for c in out["subspace"]], out["frobenius"][0] > out["frobenius"][1]
([0.5, 0.515077], True)
>>> [round(c, 6) for c in REGISTRY["rank-drop"].run({"eps": 0, "delta": 10})["outputs"]["subspace"]]
[1.0, 0.030154]
"""

from __future__ import annotations

import numpy as np

from headspace.axioms import axiom_3_as_posed_counterexample as _pair
from headspace.composition import composition_score

from headspace_site.figure.style import COLORS, scatter, two_panels
from headspace_site.figure.registry import Output, Param, register

EPS_MAX = 0.5
_GRID = np.linspace(EPS_MAX / 50, EPS_MAX, 50)              # eps > 0: the curves (eps = 0 is drawn apart)
METRICS = ("subspace", "frobenius")
_WRITERS = (("writer A₁", COLORS["blue"], "solid"), ("writer A₂", COLORS["orange"], "dash"))


def scores(eps, delta: float) -> dict:
    """``{metric: [len(eps), 2]}``: each metric of (A_1, B) and (A_2, B) at every eps, batched.

    Both writers are linear in eps, ``A_i = limit_i + eps (A_i(1) - limit_i)``, so one call builds them all.
    """
    one = _pair(1.0, delta)
    limit = np.stack([one["limit_1"], one["limit_2"]])                     # [2, 3, 3]
    faint = np.stack([one["A_1"], one["A_2"]]) - limit
    A = limit + np.asarray(eps, float).reshape(-1, 1, 1, 1) * faint       # [len(eps), 2, 3, 3]
    B = np.broadcast_to(one["B"], A.shape)
    return {m: np.asarray(composition_score(A, B, m), float) for m in METRICS}


@register(
    "rank-drop", "Two writers whose order flips where their rank drops",
    key="Each writer's score against ε, by the subspace score and by the Frobenius score; rings: at ε = 0; filled dots: the ε chosen.",
    params=[
        Param("eps", "Faint direction ε", "range", 0.2, min=0.0, max=EPS_MAX, step=0.01,
              help="how loudly each writer writes its second direction; at 0 both have rank 1"),
        Param("delta", "Tilt δ", "range", 10, min=2, max=40, step=1, unit="°",
              help="writer A₂'s loud direction lies 90° − δ from the read space"),
    ],
    outputs=[
        Output("subspace", "subspace score", "vector",
               "each writer's mean squared cosine to the read space, at the chosen ε",
               labels=("writer A₁", "writer A₂")),
        Output("frobenius", "Frobenius score", "vector",
               "each writer's ‖AB‖ / (‖A‖ ‖B‖), at the chosen ε", labels=("writer A₁", "writer A₂")),
    ],
)
def rank_drop(eps: float, delta: float) -> dict:
    every = scores(np.concatenate([[eps, 0.0], _GRID]), delta)     # the chosen eps, the limit, the curves
    now = {m: v[:1] for m, v in every.items()}
    limit = {m: v[1:2] for m, v in every.items()}
    curves = {m: v[2:] for m, v in every.items()}
    outputs = {m: [float(v) for v in now[m][0]] for m in METRICS}
    panels = []
    for k, metric in enumerate(METRICS):
        traces = []
        for i, (name, color, dash) in enumerate(_WRITERS):
            traces.append(scatter(_GRID, curves[metric][:, i], name=name, color=color, mode="lines",
                                  line={"color": color, "width": 2.5, "dash": dash},
                                  legendgroup=name, showlegend=k == 0))
            traces.append(scatter([0.0], [limit[metric][0, i]], name=f"{name} at ε = 0", mode="markers",
                                  marker={"color": "rgba(0,0,0,0)", "size": 11,   # an open ring, drawn
                                          "line": {"width": 2, "color": color}},  # alike by plotly and the SVG
                                  legendgroup=name, showlegend=False))
        traces.append(scatter([eps, eps], now[metric][0], name="chosen ε", mode="markers",
                              marker={"color": COLORS["ink"], "size": 8}, showlegend=k == 0))
        panels.append(traces)
    axis = {"range": [-0.03, EPS_MAX + 0.02], "title": {"text": "ε"}, "fixedrange": True}
    score = {"range": [-0.03, 1.05], "fixedrange": True}
    return {"figure": two_panels(*panels, titles=("subspace score", "Frobenius score"), height=400,
                                 xaxis=axis, xaxis2=dict(axis), yaxis=score, yaxis2=dict(score)),
            "outputs": outputs}
