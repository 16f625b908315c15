"""The static SVG each prerendered figure carries: well-formed, and drawing
what the figure holds (checked by counting the elements it must produce)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from sitebuild import static_svg
from headspace.demos import REGISTRY

SVG = "{http://www.w3.org/2000/svg}"


def parse(fig) -> ET.Element:
    return ET.fromstring(static_svg.render(fig, uid="t"))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_default_figure_renders(name):
    root = parse(REGISTRY[name].run({})["figure"])
    assert root.tag == SVG + "svg" and root.get("class") == "static-figure wide"
    assert len(list(root.iter())) > 10


def test_markers_are_drawn_one_circle_per_point():
    fig = REGISTRY["polarizer"].run({"theta": 30})["figure"]
    points = sum(len(t["x"]) for t in fig["data"] if t.get("mode") == "markers")
    circles = [c for c in parse(fig).iter(SVG + "circle") if float(c.get("r")) > 0]
    legend_dots = sum(1 for t in fig["data"] if t.get("mode") == "markers" and t.get("name"))
    assert len(circles) == points + legend_dots


def test_heatmap_cells_take_their_colour_from_the_scale():
    fig = {"data": [{"type": "heatmap", "z": [[0, 1], [0.5, 0.25]], "zmin": 0, "zmax": 1,
                     "colorscale": [[0, "#000000"], [1, "#ffffff"]]}], "layout": {"height": 200}}
    fills = [r.get("fill") for g in parse(fig).iter(SVG + "g") for r in g.iter(SVG + "rect")]  # not the clip rect
    assert fills == ["rgb(0,0,0)", "rgb(255,255,255)", "rgb(128,128,128)", "rgb(64,64,64)"]


def test_points_land_inside_the_plot_area():
    fig = {"data": [{"type": "scatter", "mode": "markers", "x": [0, 10], "y": [0, 10], "marker": {"size": 4}}],
           "layout": {"height": 300, "margin": {"l": 50, "r": 10, "t": 20, "b": 30}}}
    (a, b) = [c for c in parse(fig).iter(SVG + "circle")]
    # y grows downwards in SVG: the larger value sits higher (smaller cy)
    assert 50 <= float(a.get("cx")) < float(b.get("cx")) <= static_svg.WIDTH - 10
    assert 20 <= float(b.get("cy")) < float(a.get("cy")) <= 300 - 30


def test_text_is_escaped():
    fig = {"data": [], "layout": {"title": {"text": "<script>x</script> & E<sub>x</sub>"}}}
    svg = static_svg.render(fig)
    assert "<script>" not in svg and "&amp;" in svg
