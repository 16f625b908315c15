"""Colours, read once in Python (``headspace_site.figure.colour``) and carried in one form.

- ``rgba`` reads ``#rgb`` as plotly does (it used to turn it grey, so a
  heatmap with such a scale was grey in the build's drawing and coloured once live), and refuses
  what it cannot read, naming it.
- Every figure a demo returns carries each colour as ``#rrggbb`` or ``rgba(r,g,b,a)``: the two forms
  plotly and the engine's SVG write. The house colours are in that form already (the page finds the ink by its text).
"""

from __future__ import annotations

import random
import re

import pytest

from headspace_site.demos import REGISTRY
from headspace_site.figure.colour import canonical, canonical_figure, rgba, scale_colour
from headspace_site.figure.style import COLORS
from support import sample_params

CANONICAL = re.compile(r"#[0-9a-f]{6}|rgba\(\d{1,3},\d{1,3},\d{1,3},(0|0?\.\d+|\d(\.\d+)?e-\d+)\)")


def test_short_hex_is_read_as_plotly_reads_it():
    assert rgba("#f80") == (255, 136, 0, 1.0) == rgba("#ff8800")
    assert rgba("#FFF") == (255, 255, 255, 1.0)
    assert scale_colour([[0, "#f80"], [1, "#08f"]], 0.5) == (127.5, 136.0, 127.5, 1.0)


def test_an_unreadable_colour_is_named():
    for bad in ("grey", "#ff80", "rgb(1, 2)", "hsl(0, 0%, 50%)"):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            rgba(bad)
    with pytest.raises(ValueError, match=r"figure color: colour: .*got 'teal'"):
        canonical_figure({"data": [{"marker": {"color": "teal"}}]})


def test_canonical_forms():
    fig = {"data": [{"type": "heatmap", "colorscale": [[0, "#F80"], [1, "rgb(0, 0, 255)"]], "z": [[1, 2]],
                     "marker": {"color": ["white", 0.5, "rgba(0, 0, 0, 0.25)"]}}],
           "layout": {"annotations": [{"font": {"color": "black"}}], "paper_bgcolor": "transparent"}}
    canonical_figure(fig)
    assert fig["data"][0]["colorscale"] == [[0, "#ff8800"], [1, "#0000ff"]]
    assert fig["data"][0]["marker"]["color"] == ["#ffffff", 0.5, "rgba(0,0,0,0.25)"]
    assert fig["layout"] == {"annotations": [{"font": {"color": "#000000"}}], "paper_bgcolor": "rgba(0,0,0,0)"}


def test_house_colours_are_canonical():
    for name, colour in COLORS.items():
        if isinstance(colour, str):
            assert canonical(colour) == colour, name


def _colours(node, path="figure"):
    if isinstance(node, list):
        for i, item in enumerate(node):
            if isinstance(item, (dict, list)):
                yield from _colours(item, f"{path}[{i}]")
        return
    for k, v in node.items():
        if k.endswith("color") and isinstance(v, (str, list)):
            yield from ((f"{path}.{k}", c) for c in (v if isinstance(v, list) else [v]) if isinstance(c, str))
        elif k == "colorscale" and isinstance(v, list):
            yield from ((f"{path}.{k}", c) for _, c in v)
        elif isinstance(v, (dict, list)):
            yield from _colours(v, f"{path}.{k}")


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_figure_carries_canonical_colours(name):
    demo, rng = REGISTRY[name], random.Random(f"colours-{name}")
    for params in [{}, sample_params(demo, rng)]:
        for where, colour in _colours(demo.run(params)["figure"]):
            assert CANONICAL.fullmatch(colour), f"{name}: {where} is {colour!r}"


@pytest.mark.parametrize("scale", [[[0, "rgba(47,111,222,0)"], [1, "rgba(47,111,222,1)"]],   # attention-explorer's
                                   [[0, "#f7fbff"], [1, "#08306b"]],
                                   [[0, "#000000"], [0.5, "#ff0000"], [1, "#ffffff"]]])        # two segments
def test_heatmap_pixels_are_scale_colour_cell_by_cell(scale):
    """The drawing's heatmap bytes (svg._cell_pixels, all cells at once, with a shorter way for a
    one-segment scale) against scale_colour cell by cell; a missing cell (None) is transparent."""
    import numpy as np
    from headspace_site.figure.svg import _cell_pixels
    rng = random.Random(11)
    for trial in range(20):
        rows, cols = rng.randint(1, 12), rng.randint(1, 12)
        z = [[round(rng.gauss(0, 2), rng.choice([3, 12])) for _ in range(cols)] for _ in range(rows)]
        if trial % 4 == 3:
            z[rng.randrange(rows)][rng.randrange(cols)] = None
        zmin, zmax = (-1.0, 1.0) if trial % 2 else (min(v for r in z for v in r if v is not None),
                                                     max(v for r in z for v in r if v is not None))
        want = [[[0, 0, 0, 0] if v is None else
                 [round(c) for c in scale_colour(scale, (v - zmin) / ((zmax - zmin) or 1))[:3]]
                 + [round(255 * scale_colour(scale, (v - zmin) / ((zmax - zmin) or 1))[3])] for v in row] for row in z]
        got = _cell_pixels(z, scale, zmin, zmax)
        assert got.dtype == np.uint8 and got.tolist() == want, trial
