"""How each circuit transforms when a toy 2-D residual stream changes basis, and what stays fixed.

In the paper's column vectors the residual stream ``x`` becomes ``T x``. A writer's OV circuit
then becomes ``T W_OV T^-1`` (it reads and writes the stream), a reader's QK circuit ``T^-T W_QK
T^-1`` (a bilinear form ``x_q^T W_QK x_k`` must give the same attention score), and their composite
(K-composition: the reader's keys are what the writer wrote) ``W_QK W_OV`` becomes ``T^-T (W_QK
W_OV) T^-1``. The embedding ``W_E`` (columns are tokens) becomes ``T W_E``, so the token-space
composite ``W_E^T W_QK W_OV W_E`` does not change: every T cancels.

``T = R(rotation) F H(shear) S(stretch)``, the same family as ``hidden-symmetry``
(``hidden_symmetry.basis_change``). Outputs:

- ``T``: the matrix.
- ``ov_after``, ``qk_after``, ``composite_after``: the three residual-space matrices after T.
- ``token_change``: the largest change of any entry of the token-space composite; zero to rounding.
- ``frobenius_before``, ``frobenius_after``: the Frobenius composition score
  ``||W_QK W_OV|| / (||W_QK|| ||W_OV||)`` of the pair, which does change.

>>> from headspace_site.demos import REGISTRY
>>> out = REGISTRY["transform-rules"].run({"scale": 3.0})["outputs"]
>>> out["token_change"] < 1e-12, round(out["frobenius_before"], 3) != round(out["frobenius_after"], 3)
(True, True)
"""

from __future__ import annotations

import numpy as np

from headspace_site.figure.style import figure, named_colorbar
from headspace_site.figure.registry import Output, register
from .hidden_symmetry import basis_change, basis_params
from .residual_basis import CELL_INK

#: The toy: one writer's OV circuit, one reader's QK circuit, three tokens' embeddings (columns).
W_OV = np.array([[0.9, 0.4], [-0.3, 0.5]])
W_QK = np.array([[0.2, 1.1], [0.7, -0.4]])
W_E = np.array([[1.0, 0.0, 0.7], [0.0, 1.0, 0.7]])
DIVERGING = [[0.0, "#2166ac"], [0.5, "#f7f7f7"], [1.0, "#b2182b"]]


def frobenius_pair(qk: np.ndarray, ov: np.ndarray) -> float:
    """``||qk ov||_F / (||qk||_F ||ov||_F)``."""
    return float(np.linalg.norm(qk @ ov) / (np.linalg.norm(qk) * np.linalg.norm(ov)))


def transformed(T: np.ndarray) -> dict:
    """Every matrix of the toy before and after T: ``{name: (before, after)}``."""
    Ti = np.linalg.inv(T)
    ov, qk = T @ W_OV @ Ti, Ti.T @ W_QK @ Ti
    E = T @ W_E
    return {"W_OV": (W_OV, ov), "W_QK": (W_QK, qk), "W_QK W_OV": (W_QK @ W_OV, qk @ ov),
            "W_Eᵀ W_QK W_OV W_E": (W_E.T @ W_QK @ W_OV @ W_E, E.T @ qk @ ov @ E)}


@register(
    "transform-rules", "How OV, QK and their product move under a change of residual basis",
    key='Each row: one matrix before and after the change of basis T; each entry printed, red positive, blue negative, shaded by its row\'s largest.',
    params=basis_params(rotation=0, scale=2.0, axis="residual"),
    outputs=[
        Output("T", "T", "matrix", "the change of residual basis: rotation × reflection × shear × stretch"),
        Output("ov_after", "<i>W</i><sub>OV</sub> after", "matrix", "the writer's OV circuit in the new basis: <i>T W</i><sub>OV</sub><i>T</i><sup>−1</sup>"),
        Output("qk_after", "<i>W</i><sub>QK</sub> after", "matrix", "the reader's QK circuit in the new basis: <i>T</i><sup>−T</sup><i>W</i><sub>QK</sub><i>T</i><sup>−1</sup>"),
        Output("composite_after", "<i>W</i><sub>QK</sub><i>W</i><sub>OV</sub> after", "matrix", "their product in the new basis: <i>T</i><sup>−T</sup><i>W</i><sub>QK</sub><i>W</i><sub>OV</sub><i>T</i><sup>−1</sup>"),
        Output("token_change", "largest token-space change", "number",
               "the largest change of any entry of <i>W</i><sub>E</sub><sup>T</sup><i>W</i><sub>QK</sub><i>W</i><sub>OV</sub><i>W</i><sub>E</sub>: rounding error only", floor=0),
        Output("frobenius_before", "Frobenius before", "number", "the pair's Frobenius composition score before T"),
        Output("frobenius_after", "Frobenius after", "number", "the same score after the change of basis T"),
    ],
)
def transform_rules(rotation: float, scale: float, shear: float, flip: bool) -> dict:
    T = basis_change(rotation, scale, shear, flip)
    mats = transformed(T)
    token_before, token_after = mats["W_Eᵀ W_QK W_OV W_E"]
    outputs = {"T": T, "ov_after": mats["W_OV"][1], "qk_after": mats["W_QK"][1],
               "composite_after": mats["W_QK W_OV"][1],
               "token_change": float(np.abs(token_after - token_before).max()),
               "frobenius_before": frobenius_pair(W_QK, W_OV),
               "frobenius_after": frobenius_pair(mats["W_QK"][1], mats["W_OV"][1])}
    return {"figure": _figure(mats, outputs), "outputs": outputs}


RULES = {"W_OV": "T (·) T⁻¹", "W_QK": "T⁻ᵀ (·) T⁻¹", "W_QK W_OV": "T⁻ᵀ (·) T⁻¹", "W_Eᵀ W_QK W_OV W_E": "fixed"}
#: Each matrix as the figure sets it: maths, not a code name.
SHOWN = {"W_OV": "W<sub>OV</sub>", "W_QK": "W<sub>QK</sub>", "W_QK W_OV": "W<sub>QK</sub>W<sub>OV</sub>",
         "W_Eᵀ W_QK W_OV W_E": "W<sub>E</sub><sup>T</sup>W<sub>QK</sub>W<sub>OV</sub>W<sub>E</sub>"}


def _figure(mats: dict, outputs: dict) -> dict:
    names = list(mats)
    rows = len(names)
    gap = 0.07
    h = (1.0 - gap * (rows - 1)) / rows
    traces, notes, layout = [], [], {}
    for r, name in enumerate(names):
        lim = max(1e-9, float(max(np.abs(m).max() for m in mats[name])))
        top = 1.0 - r * (h + gap)
        for c, M in enumerate(mats[name]):
            k = 2 * r + c + 1
            ax = "" if k == 1 else str(k)
            n = M.shape[0]
            # coloured by the entry over its row's largest |entry|: one bar reads every row
            traces.append({"type": "heatmap", "z": np.round(M / lim, 4).tolist(), "xaxis": "x" + ax, "yaxis": "y" + ax,
                           "zmin": -1, "zmax": 1, "colorscale": DIVERGING, "showscale": k == 1,
                           "colorbar": named_colorbar("÷ largest", {-1: "−1", 0: "0", 1: "1"}),
                           "xgap": 2, "ygap": 2, "name": SHOWN[name], "customdata": np.round(M, 4).tolist(),
                           "text": [[f"{v:.2f}" for v in row] for row in M],
                           "hovertemplate": f"{SHOWN[name]}" + " [%{y}, %{x}] = %{customdata:.4f}<extra></extra>"})
            layout["xaxis" + ax] = {"domain": [0.0, 0.46] if c == 0 else [0.54, 1.0], "anchor": "y" + ax,
                                    "showticklabels": False, "showgrid": False, "zeroline": False,
                                    "ticks": ""}
            layout["yaxis" + ax] = {"domain": [round(top - h, 4), round(top, 4)], "anchor": "x" + ax,
                                    "autorange": "reversed", "showticklabels": False, "showgrid": False,
                                    "zeroline": False, "ticks": ""}
            for i in range(n):
                for j in range(M.shape[1]):
                    notes.append({"x": j, "y": i, "xref": "x" + ax, "yref": "y" + ax, "text": f"{M[i, j]:.2f}",
                                  "showarrow": False, "font": {"size": 11, "color": CELL_INK}})
        notes.append({"text": f"{SHOWN[name]}: {RULES[name]}", "xref": "paper", "yref": "paper", "x": 0.5,
                      "y": round(top, 4), "xanchor": "center", "yanchor": "bottom", "showarrow": False,
                      "font": {"size": 12}})
    heads = [{"text": t, "xref": "paper", "yref": "paper", "x": x, "y": 1.0, "yshift": 18, "xanchor": "center",
              "yanchor": "bottom", "showarrow": False, "font": {"size": 13}}
             for t, x in (("before", 0.23), ("after T", 0.77))]
    title = f"Frobenius score {outputs['frobenius_before']:.3f} → {outputs['frobenius_after']:.3f}"
    fig = figure(traces, title=title, height=620, showlegend=False, annotations=heads + notes, **layout)
    fig["layout"]["margin"] = {"l": 8, "r": 8, "t": 86, "b": 10}
    return fig
