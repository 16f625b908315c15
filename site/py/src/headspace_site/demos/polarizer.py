"""A single polariser acting on unpolarised light (a cloud of random field vectors).

The cloud is the same on every call, drawn once from a seed and shipped beside this module
(``polarizer_light.json``, rewritten by ``write_light()``; a test draws it again and compares):
drawing it when the module loaded imported ``numpy.random`` on the first article's boot in the
browser, which nothing else there needs (docs/decisions/0011 has the timings).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import optics
from headspace_site.figure.style import COLORS, figure, line_through, point_cloud, scatter
from headspace_site.figure.registry import Output, Param, register

LIGHT_FILE = Path(__file__).with_name("polarizer_light.json")
LIGHT_POINTS, LIGHT_SEED = 200, 4


def draw_light() -> np.ndarray:
    """The cloud of field vectors, [2, LIGHT_POINTS], drawn from its seed.

    >>> draw_light().shape
    (2, 200)
    """
    return point_cloud(LIGHT_POINTS, seed=LIGHT_SEED)


def write_light(path: Path = LIGHT_FILE) -> Path:
    """Draw the cloud and save it (floats written exactly: JSON keeps a float's shortest repr)."""
    light = draw_light()
    path.write_text(json.dumps({"points": LIGHT_POINTS, "seed": LIGHT_SEED, "light": light.tolist()}) + "\n")
    return path


_LIGHT = np.array(json.loads(LIGHT_FILE.read_text())["light"])


@register(
    "polarizer", "A polariser is a rank-1 projection",
    key='Dots "light in": polarised every way; dots "light out": all along the polariser\'s axis, the dashed line.',
    params=[Param("theta", "Polariser angle θ", "range", 30, min=0, max=180, step=1, unit="°")],
    outputs=[
        Output("jones", "Jones matrix", "matrix",
               "the 2 × 2 matrix the filter applies to a field (<i>E</i><sub>x</sub>, <i>E</i><sub>y</sub>): a projection onto its axis"),
        Output("transmission", "transmitted fraction", "number",
               "the share of unpolarised light's intensity that gets through"),
    ],
)
def polarizer(theta: float) -> dict:
    jones = optics.jones_polarizer(theta)
    after = jones @ _LIGHT
    fig = figure([
        scatter(*_LIGHT, name="light in (unpolarised)", color=COLORS["muted"], size=4, opacity=0.6),
        scatter(*after, name="light out", color=COLORS["blue"], size=5),
        line_through(theta, 3.5, f"polariser axis θ = {theta:g}°", COLORS["orange"], dash="dash"),
    ], equal_axes=True, extent=3.5, xaxis={"title": {"text": "E<sub>x</sub>"}},
        yaxis={"title": {"text": "E<sub>y</sub>"}})
    return {"figure": fig, "outputs": {"jones": jones,
                                       "transmission": optics.transmission([jones])}}
