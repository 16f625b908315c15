"""The product of two heads through their singular values: which routes carry the signal.

Writer ``A = U_A diag(sigma) V_A^T`` and reader ``B = U_B diag(tau) V_B^T`` act in a stream of
``R = 4`` dimensions, with ``U_A = V_A = V_B = I``. The reader's input directions ``U_B`` are the
writer's output directions turned by ``turn`` degrees in the planes (e_1, e_2) and (e_3, e_4).
Singular values fall off as ``sigma_i = exp(-decay (i - 1))``; ``tau`` is the same list (``order =
"same"``) or reversed. Then ``AB = U_A M V_B^T`` with the route matrix

    M = diag(sigma) G diag(tau),   G_ij = v_i . u_j = cos(angle(v_i, u_j)),

so ``||AB||_F = ||M||_F``: entry ``M_ij`` is the strength of the route from the writer's i-th output
direction to the reader's j-th input direction. The figure shows ``|M|`` and the chain

    ||AB||_F <= ||sigma * tau||_2 <= ||A||_F ||B||_F.

Outputs:

- ``routes``: M, writer's directions by reader's.
- ``frobenius``, ``svd_bound``: ``composition_score(A, B, metric)``; the Frobenius score divides by
  the last link of the chain, ``svd_bound`` by the middle one.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["singular-routes"].run({"turn": 0, "decay": 0, "order": "same"})["outputs"]
>>> round(out["frobenius"], 12), round(out["svd_bound"], 12)      # the identity: 4^-1/2, and 1
(0.5, 1.0)
"""

from __future__ import annotations

import numpy as np

from headspace.composition import composition_score

from headspace_site.figure.style import COLORS, SCORE_SCALE, named_colorbar, two_panels
from headspace_site.figure.registry import Output, Param, register

R = 4
_LABELS = [str(i + 1) for i in range(R)]
_NORMS = ["‖AB‖", "bound", "‖A‖‖B‖"]


def heads(turn: float, decay: float, order: str):
    """``(A, B, sigma, tau, G)`` for the dials: writer, reader, their singular values, the cosines G."""
    sigma = np.exp(-decay * np.arange(R))
    tau = sigma if order == "same" else sigma[::-1]
    c, s = np.cos(np.deg2rad(turn)), np.sin(np.deg2rad(turn))
    G = np.kron(np.eye(R // 2), np.array([[c, -s], [s, c]]))      # U_B: turned in planes (1, 2), (3, 4)
    return np.diag(sigma), G @ np.diag(tau), sigma, tau, G


@register(
    "singular-routes", "The product of two heads, route by route",
    key='Bars: the chain of norms the scores divide by; grid: the size of each route from writer direction i to reader direction j.',
    params=[
        Param("turn", "Turn the reader", "range", 0, min=0, max=90, step=5, unit="°",
              help="turns the reader's input directions away from the writer's output directions, in pairs"),
        Param("decay", "Singular value decay λ", "range", 0.5, min=0.0, max=2.0, step=0.1,
              help="both heads' singular values fall off as exp(−λ (i − 1))"),
        Param("order", "Reader's order", "select", "same", options=("same", "reversed"),
              help="same: the reader's loudest input direction meets the writer's loudest output"),
    ],
    outputs=[
        Output("routes", "routes M", "matrix",
               "what each of the writer's output directions (row) sends along each of the reader's input "
               "directions (column): σᵢ cos(angle) τⱼ",
               labels=("writer 1", "writer 2", "writer 3", "writer 4"),
               columns=("reader 1", "reader 2", "reader 3", "reader 4")),
        Output("frobenius", "Frobenius score", "number", "the product's size over the largest any heads of these sizes reach: ‖AB‖ / (‖A‖ ‖B‖)"),
        Output("svd_bound", "SVD-bound score", "number",
               "‖AB‖ over the largest it can be for these singular values, ‖σ τ‖"),
    ],
)
def singular_routes(turn: float, decay: float, order: str) -> dict:
    A, B, sigma, tau, G = heads(turn, decay, order)
    M = sigma[:, None] * G * tau[None, :]
    norms = [float(np.linalg.norm(M)), float(np.linalg.norm(sigma * np.sort(tau)[::-1])),
             float(np.linalg.norm(sigma) * np.linalg.norm(tau))]
    outputs = {"routes": np.round(M, 12) + 0.0,
               "frobenius": float(composition_score(A, B, "frobenius")),
               "svd_bound": float(composition_score(A, B, "svd_bound"))}
    heat = {"type": "heatmap", "z": np.round(np.abs(M), 6).tolist(), "x": _LABELS, "y": _LABELS,
            "zmin": 0.0, "zmax": 1.0, "colorscale": SCORE_SCALE, "name": "|M|",
            "colorbar": named_colorbar("|M|", {0: "0", 0.5: "0.5", 1: "1"}),
            "hovertemplate": "writer %{y} → reader %{x}: %{z:.2f}<extra></extra>"}
    bars = {"type": "bar", "x": _NORMS, "y": np.round(norms, 6).tolist(), "name": "norms",
            "marker": {"color": [COLORS["blue"], COLORS["green"], COLORS["muted"]]},
            "text": [f"{v:.2f}" for v in norms], "textposition": "outside", "cliponaxis": False,
            "hovertemplate": "%{x}: %{y:.3f}<extra></extra>"}
    # the grid on the right, beside its colour bar
    fig = two_panels([bars], [heat], titles=("the chain of norms", "routes |M|"), height=380,
                     xaxis={"fixedrange": True}, yaxis={"range": [0, 4.6], "fixedrange": True},
                     xaxis2={"title": {"text": "reader's input j"}, "zeroline": False, "fixedrange": True},
                     yaxis2={"title": {"text": "writer's output i"}, "autorange": "reversed", "zeroline": False,
                             "fixedrange": True})
    fig["layout"]["showlegend"] = False
    return {"figure": fig, "outputs": outputs}
