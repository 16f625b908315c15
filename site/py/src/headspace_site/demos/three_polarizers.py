"""The three-polariser paradox: adding a filter lets more light through.

Light leaving the first polariser (angle theta1) is polarised along
``e1 = (cos theta1, sin theta1)``. Each later polariser is the rank-1 projector
``P(theta) = u u^T`` (see ``headspace_site.optics``), so the field that leaves the
last one is ``M e1`` with ``M = P(theta3) P(theta2) P(theta1)`` (rightmost acts
first), and the intensity that survives, as a fraction of what left the first,
is ``|M e1|^2 = cos^2(theta2 - theta1) cos^2(theta3 - theta2)``. Without the
middle filter it is ``cos^2(theta3 - theta1)`` (Malus's law).

>>> from headspace_site.demos import REGISTRY
>>> demo = REGISTRY["three-polarizers"]
>>> round(demo.run({"middle": False})["outputs"]["transmission"], 12)   # crossed at 0 and 90
0.0
>>> round(demo.run({})["outputs"]["transmission"], 12)                  # 45 degrees between them
0.25
"""

from __future__ import annotations

import numpy as np

from .. import optics
from headspace_site.figure.style import COLORS, arrow, figure, line_through, scatter, segments
from headspace_site.figure.registry import Output, Param, register


def _unit(deg: float) -> np.ndarray:
    return np.array([np.cos(np.deg2rad(deg)), np.sin(np.deg2rad(deg))])


@register(
    "three-polarizers", "Three polarisers: the middle one lets light through",
    key="Dashed lines: the polarisers' axes; solid arrows: the field after each; bars: the intensity after each (the first is 1).",
    params=[
        Param("theta1", "First polariser θ₁", "range", 0, min=0, max=180, step=1, unit="°"),
        Param("theta2", "Middle polariser θ₂", "range", 45, min=0, max=180, step=1, unit="°"),
        Param("theta3", "Last polariser θ₃", "range", 90, min=0, max=180, step=1, unit="°"),
        Param("middle", "Middle polariser in", "checkbox", True),
    ],
    outputs=[
        Output("matrix", "Jones matrix of the stack", "matrix",
               "the product of the filters' matrices, last times first: what the stack does to a field"),
        Output("transmission", "transmitted fraction", "number",
               "the intensity after the last filter, as a fraction of what left the first"),
    ],
)
def three_polarizers(theta1: float, theta2: float, theta3: float, middle: bool) -> dict:
    angles = [theta1, theta2, theta3] if middle else [theta1, theta3]
    jones = [optics.jones_polarizer(a) for a in angles]
    m = np.eye(2)
    fields = [_unit(theta1)]                    # the field after each polariser, light of unit intensity
    for p in jones:
        m = p @ m
    for p in jones[1:]:
        fields.append(p @ fields[-1])
    transmission = float(fields[-1] @ fields[-1])

    names = ["1", "2", "3"] if middle else ["1", "3"]
    colours = {"1": COLORS["blue"], "2": COLORS["orange"], "3": COLORS["green"]}
    traces = [line_through(a, 1.25, f"polariser {n} at {a:g}°", colours[n], dash="dash")
              for a, n in zip(angles, names)]
    if not middle:
        traces.append(line_through(theta2, 1.25, "polariser 2 (removed)", COLORS["muted"], dash="dot"))
    starts, ends = np.array(fields[:-1]).T, np.array(fields[1:]).T
    traces.append(segments(starts, ends, name="projection", color=COLORS["muted"], width=1.5))
    for f, n in zip(fields, names):
        traces.append(arrow(f, f"field after {n}", colours[n]))
    intensity = [float(f @ f) for f in fields]
    bars = {"type": "bar", "x": [f"after {n}" for n in names], "y": [round(i, 6) for i in intensity],
            "marker": {"color": [colours[n] for n in names]}, "text": [f"{i:.3f}" for i in intensity],
            "textposition": "outside", "name": "intensity", "showlegend": False, "xaxis": "x2", "yaxis": "y2",
            "hoverinfo": "skip"}
    fig = figure(traces + [bars], height=380)
    fig["layout"].update({
        "xaxis": {"domain": [0.0, 0.58], "range": [-1.3, 1.3], "title": {"text": "E<sub>x</sub>"}},
        "yaxis": {"range": [-1.3, 1.3], "scaleanchor": "x", "scaleratio": 1, "title": {"text": "E<sub>y</sub>"}},
        "xaxis2": {"domain": [0.68, 1.0], "anchor": "y2"},
        "yaxis2": {"anchor": "x2", "range": [0, 1.2], "title": {"text": "intensity (first = 1)"}},
        "legend": {"orientation": "h", "y": -0.2, "yanchor": "top"},
        "margin": {**fig["layout"]["margin"], "b": 80},
    })
    return {"figure": fig, "outputs": {"matrix": m, "transmission": transmission}}
