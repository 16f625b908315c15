"""The SVG each figure is drawn as (the engine, headspace_site.figure.svg), read back and checked
against the figure it draws, for every figure the site shows, wide and narrow.

Where things land: the plot areas come from the figure's margins and domains (plotly's
geometry); an explicit range spans its plot area, equal-scale axes keep equal scales about
their centres, autoranged cells and bars fill theirs; every marker, line vertex, bar and heatmap
cell lies on its axes' one linear map, and every tick label sits at its value on that map. What
it looks like: markers, lines and bars in their trace's colours, heatmap cells in the colour
their value takes on the trace's scale, lines broken where the data has gaps. What it says: the
title, axis titles, annotations and legend entries are the figure's, in their places; no other
text is drawn.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

from headspace_site.figure import svg as static_svg
from headspace_site.demos import REGISTRY
from headspace_site.figure.fit import WIDTHS, fit

SVG = "{http://www.w3.org/2000/svg}"
TOL = 0.6  # px: the SVG writes coordinates to 0.1 px
BASELINE = static_svg.FONT / 3  # a label's baseline sits about a third of its font size below its point
DRAWINGS = {"wide": static_svg.WIDTH, "narrow": 360, **{f"w{w}": w for w in WIDTHS}}


# --------------------------------------------------------------------------- what the figure says

def plain(text) -> str:
    """Text as plotly shows it: <br> a space, other markup removed."""
    return re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", " ", str(text)))


def number(text: str) -> float | None:
    try:
        return float(text.replace("\u2212", "-"))
    except ValueError:
        return None


def rgba(color: str) -> tuple:
    color = color.strip().lower()
    if re.fullmatch(r"#[0-9a-f]{6}", color):
        return tuple(int(color[i:i + 2], 16) for i in (1, 3, 5)) + (1.0,)
    m = re.fullmatch(r"rgba?\(([^)]*)\)", color)
    assert m, f"not a colour: {color!r}"
    parts = [float(p) for p in m.group(1).split(",")]
    return tuple(parts[:3]) + (parts[3] if len(parts) > 3 else 1.0,)


def on_scale(scale, t: float) -> tuple:
    """(r, g, b, alpha) at ``t`` on a plotly colour scale, interpolated in RGB."""
    t = min(1.0, max(0.0, t))
    for (a, ca), (b, cb) in zip(scale, scale[1:]):
        if a <= t <= b:
            u = (t - a) / ((b - a) or 1)
            return tuple(x + u * (y - x) for x, y in zip(rgba(ca), rgba(cb)))
    raise AssertionError(f"{t} is off the scale {scale}")


def assert_paint(drawn: str | None, want, what: str) -> None:
    """``drawn`` (an SVG paint) shows colour ``want`` (a CSS colour or an rgba tuple); the demos'
    ink is drawn as currentColor so that dark mode recolours it; with no colour given, any."""
    if want is None:
        return
    if isinstance(want, str) and want.lower() == static_svg.INK:
        assert drawn == "currentColor", f"{what}: ink drawn as {drawn!r}"
        return
    assert drawn and re.fullmatch(r"#[0-9a-fA-F]{6}|rgba?\([^)]*\)", drawn), f"{what}: painted {drawn!r}, not a colour"
    got, want = rgba(drawn), (rgba(want) if isinstance(want, str) else want)
    assert all(abs(g - w) <= 1 for g, w in zip(got[:3], want[:3])), f"{what}: {drawn} is not {want}"


def marker_colours(trace, n) -> list:
    """Each point's marker colour: a colour, or a number through the marker's colour scale."""
    marker = trace.get("marker") or {}
    color = marker.get("color", (trace.get("line") or {}).get("color"))
    colors = color if isinstance(color, list) else [color] * n
    numbers = [c for c in colors if isinstance(c, (int, float))]
    if numbers:
        lo, hi = marker.get("cmin", min(numbers)), marker.get("cmax", max(numbers))
        colors = [on_scale(marker["colorscale"], (c - lo) / ((hi - lo) or 1)) for c in colors]
    return colors


def png_pixels(href: str) -> list[list[tuple]]:
    """Rows of RGBA pixels of an embedded PNG (8-bit RGBA, unfiltered rows, as static_svg writes)."""
    data = base64.b64decode(href.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(data):
        (size,), kind = struct.unpack(">I", data[at:at + 4]), data[at + 4:at + 8]
        chunks[kind] = chunks.get(kind, b"") + data[at + 8:at + 8 + size]
        at += 12 + size
    width, height, depth, kind = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, kind) == (8, 6)
    raw = zlib.decompress(chunks[b"IDAT"])
    rows = [raw[r * (1 + 4 * width):(r + 1) * (1 + 4 * width)] for r in range(height)]
    assert all(row[0] == 0 for row in rows)
    return [[tuple(row[1 + 4 * c:5 + 4 * c]) for c in range(width)] for row in rows]


# --------------------------------------------------------------------------- the axes, as drawn

class Axis:
    """One axis: its plot-area span (plotly's geometry), its categories, and the (value, pixel)
    pairs the drawing gives it, from which its linear map is fitted."""

    def __init__(self, key: str, spec: dict, fig: dict, width: int):
        lay = fig["layout"]
        m = {"l": 80, "r": 80, "t": 100, "b": 80, **lay.get("margin", {})}
        d0, d1 = spec.get("domain", [0, 1])
        self.key, self.spec, self.vertical = key, spec, key.startswith("y")
        if self.vertical:  # (pixel of the low end, pixel of the high end) of the domain
            h = lay["height"] - m["t"] - m["b"]
            self.span = (lay["height"] - m["b"] - d0 * h, lay["height"] - m["b"] - d1 * h)
        else:
            w = width - m["l"] - m["r"]
            self.span = (m["l"] + d0 * w, m["l"] + d1 * w)
        # plotly widens the left margin to fit long y tick labels: the x domains' left end moves
        self.loose_start = not self.vertical and any(
            isinstance(v, dict) and v.get("automargin") for k, v in lay.items() if k.startswith("yaxis"))
        self.categories: list = []
        self.pairs: list[tuple[float, float, str]] = []
        self.slots: list[float] = []  # positions of heatmap cells and bar slots (one unit wide)
        self.points = False  # whether markers or lines are drawn on it
        self.map = None

    @property
    def reversed(self) -> bool:
        r = self.spec.get("range")
        return self.spec.get("autorange") == "reversed" or bool(r and r[0] > r[1])

    @property
    def ascending(self) -> bool:
        """Whether pixels grow with the value (x not reversed, or y reversed)."""
        return self.vertical == self.reversed

    def note(self, values) -> None:
        for v in values:
            if isinstance(v, str) and v not in self.categories:
                self.categories.append(v)

    def pos(self, v) -> float:
        return float(self.categories.index(v)) if isinstance(v, str) else float(v)

    def pair(self, value, px: float, what: str) -> None:
        self.pairs.append((self.pos(value), float(px), what))

    def edges(self, lo: float, hi: float) -> tuple[float, float]:
        """The values at the lower and the higher pixel of an interval [lo, hi]."""
        return (lo, hi) if self.ascending else (hi, lo)

    def fit(self, fixed: bool) -> None:
        """The axis's map from what is drawn on it; where all of it sits at one value, plotly's map
        from the range (``fixed``: an explicit range no equal scale moves)."""
        values = np.array([p[0] for p in self.pairs])
        if len(set(values.tolist())) >= 2:
            b, a = np.polyfit(values, [p[1] for p in self.pairs], 1)
        else:
            assert fixed, f"{self.key}: one value drawn, and no range to place it by"
            (r0, r1), (s0, s1) = self.spec["range"], self.span
            b = (s1 - s0) / (r1 - r0)
            a = s0 - b * r0
        self.map = lambda v: a + b * self.pos(v)
        self.slope = b
        worst = max(self.pairs, key=lambda p: abs(self.map(p[0]) - p[1]))
        assert abs(self.map(worst[0]) - worst[1]) <= TOL, (
            f"{self.key}: {worst[2]} at {worst[1]:.1f} px, where the axis puts {worst[0]:g} at "
            f"{self.map(worst[0]):.1f} px")
        assert (b > 0) == self.ascending, f"{self.key}: drawn the wrong way round"

    def extent(self) -> tuple[float, float]:
        """(lower pixel, higher pixel) the axis is drawn over."""
        if "range" in self.spec:
            return tuple(sorted(self.map(v) for v in self.spec["range"]))
        if self.slots and not self.points:
            return tuple(sorted(self.map(v) for v in self.cell_range()))
        if self.loose_start:
            return min(p[1] for p in self.pairs), self.span[1]
        return tuple(sorted(self.span))

    def cell_range(self) -> tuple[float, float]:
        """From the low edge of the first slot to the high edge of the last (plotly's autorange)."""
        return min(self.slots) - 0.5, max(self.slots) + 0.5


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    return root


def floats(el, *names) -> list[float]:
    return [float(el.get(n)) for n in names]


def markers(g) -> list[tuple]:
    """A trace group's markers in point order, as (cx, cy, r, fill, ring stroke): ``<circle>``s, or
    one ``<path class="markers">`` of zero-length round-capped strokes (a disc of the stroke's
    width at each ``M x y h0``), which static_svg draws when every marker has one size and colour."""
    out = [(*floats(c, "cx", "cy", "r"), c.get("fill"), c.get("stroke")) for c in g.findall(SVG + "circle")]
    for p in g.findall(SVG + "path"):
        if p.get("class") != "markers":
            continue
        assert not out, "markers drawn both as circles and as a path"
        assert p.get("stroke-linecap") == "round" and p.get("fill") == "none", "a marker path must draw round dots"
        d = p.get("d")
        dots = re.findall(r"M(-?[\d.]+) (-?[\d.]+)h0", d)
        assert "".join(f"M{x} {y}h0" for x, y in dots) == d, f"a marker path is only dots: {d[:80]}"
        r = float(p.get("stroke-width")) / 2
        out += [(float(x), float(y), r, p.get("stroke"), None) for x, y in dots]
    return out


class Drawing:
    """One figure drawn at one width, read back: its trace groups and the text around them."""

    def __init__(self, fig: dict, kind: str):
        self.fig, self.width = fig, DRAWINGS[kind]
        self.root = parse(static_svg.render(fig, self.width, uid="t", css_class=kind))
        self.lay = lay = fig["layout"]
        assert self.root.get("class") == f"static-figure {kind}"
        _, _, w, h = (float(v) for v in self.root.get("viewBox").split())
        assert w == self.width and h >= lay["height"], self.root.get("viewBox")
        self.view_height = h
        children = list(self.root)
        self.groups = [g for g in children if g.tag == SVG + "g" and g.get("clip-path")]
        self.outside = [el for el in children if el.tag == SVG + "text"]
        self.order = {id(el): i for i, el in enumerate(children)}
        self.children = children
        self.used: list = []  # legend texts already matched to a trace
        assert len(self.groups) == len(fig["data"]), "one clipped group per trace"
        self.axes: dict[str, Axis] = {}
        for tr in fig["data"]:
            for key, values in self.trace_values(tr):
                self.axis(key).note(values)

    def axis(self, ref: str) -> Axis:
        key = ("yaxis" if ref.startswith("y") else "xaxis") + ref[1:]
        if key not in self.axes:
            self.axes[key] = Axis(key, dict(self.lay.get(key, {})), self.fig, self.width)
        return self.axes[key]

    @staticmethod
    def trace_values(tr):
        xa, ya = tr.get("xaxis", "x"), tr.get("yaxis", "y")
        if tr.get("type") == "heatmap":
            z = tr["z"]
            return [(xa, tr.get("x") or list(range(len(z[0])))), (ya, tr.get("y") or list(range(len(z))))]
        return [(xa, [v for v in tr.get("x") or [] if v is not None]),
                (ya, [v for v in tr.get("y") or [] if v is not None])]

    def counter(self, axis: Axis) -> Axis:
        anchor = axis.spec.get("anchor")
        if anchor and anchor != "free":
            return self.axis(anchor)
        letter, other = ("y", "x") if axis.vertical else ("x", "y")
        for tr in self.fig["data"]:
            if self.axis(tr.get(letter + "axis", letter)).key == axis.key:
                return self.axis(tr.get(other + "axis", other))
        raise AssertionError(f"{axis.key} has no trace")


# --------------------------------------------------------------------------- the checks

def check_scatter(tr, g, xa: Axis, ya: Axis, name: str) -> None:
    mode = tr.get("mode", "lines+markers")
    xs, ys = tr.get("x") or [], tr.get("y") or []
    marker = tr.get("marker") or {}
    arrow = "markers" in mode and marker.get("symbol") == "arrow"
    arrow_size = (lambda k: marker["size"][k] if isinstance(marker.get("size"), list) else marker.get("size", 6))
    if "lines" in mode:
        runs, run = [], []
        for k, (x, y) in enumerate(zip(xs, ys)):
            if x is None or y is None:
                runs.append(run)
                run = []
            else:
                run.append((k, x, y))
        runs = [r for r in runs + [run] if len(r) > 1]
        # A head on each step of nonzero length: a step from a point to itself has no direction to
        # point in, and the drawing shows none (three-polarizers' field after the last, when the
        # middle one is out: a reader unticks it, or an article places it so).
        tips = [(x, y) for r in runs for i, (k, x, y) in enumerate(r)
                if arrow and i and arrow_size(k) and (x, y) != r[i - 1][1:]]
        heads = g.findall(SVG + "polygon")
        assert len(heads) == len(tips), f"{name}: {len(tips)} arrowheads drawn as {len(heads)}"
        for head, (x, y) in zip(heads, tips):  # the head's tip is the point; the line stops short of it
            px, py = map(float, head.get("points").split()[0].split(","))
            xa.pair(x, px, f"{name} arrow tip ({x}, {y})")
            ya.pair(y, py, f"{name} arrow tip ({x}, {y})")
        lines = g.findall(SVG + "polyline")
        assert len(lines) == len(runs), f"{name}: {len(runs)} unbroken runs of the line drawn as {len(lines)} polylines"
        color = (tr.get("line") or {}).get("color") or (marker.get("color") if isinstance(marker.get("color"), str) else None)
        for line, run in zip(lines, runs):
            drawn = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
            assert len(drawn) == len(run), f"{name}: {len(run)} vertices drawn as {len(drawn)}"
            for i, ((k, x, y), (px, py)) in enumerate(zip(run, drawn)):
                if arrow and i and arrow_size(k):
                    continue  # backed off from the tip, checked above
                xa.pair(x, px, f"{name} vertex ({x}, {y})")
                ya.pair(y, py, f"{name} vertex ({x}, {y})")
            assert_paint(line.get("stroke"), color, f"{name} line")
            dashed = (tr.get("line") or {}).get("dash", "solid") != "solid"
            assert bool(line.get("stroke-dasharray")) == dashed, f"{name}: dash"
            assert (line.get("stroke-dasharray") or "") == static_svg.dasharray(
                (tr.get("line") or {}).get("dash", "solid"), (tr.get("line") or {}).get("width", 2)), f"{name}: dashes"
        xa.points = ya.points = True
    if "markers" in mode and marker.get("symbol") != "arrow":
        points = [(k, x, y) for k, (x, y) in enumerate(zip(xs, ys)) if x is not None and y is not None]
        sizes = marker.get("size", 6)
        colours = marker_colours(tr, len(xs))
        points = [(k, x, y) for k, x, y in points if (sizes[k] if isinstance(sizes, list) else sizes)]
        drawn = markers(g)
        assert len(drawn) == len(points), f"{name}: {len(points)} markers drawn as {len(drawn)}"
        for (cx, cy, r, fill, ring), (k, x, y) in zip(drawn, points):
            xa.pair(x, cx, f"{name} marker ({x}, {y})")
            ya.pair(y, cy, f"{name} marker ({x}, {y})")
            size = sizes[k] if isinstance(sizes, list) else sizes
            assert abs(r - size / 2) <= 0.06, f"{name}: marker of size {size} drawn with r={r}"
            assert_paint(fill, colours[k], f"{name} marker {k}")
            if (marker.get("line") or {}).get("color"):
                assert_paint(ring, marker["line"]["color"], f"{name} marker ring")
        xa.points = ya.points = True


def check_bar(tr, g, xa: Axis, ya: Axis, name: str) -> None:
    horizontal = tr.get("orientation") == "h"
    cat, val = (ya, xa) if horizontal else (xa, ya)
    cats, vals = (tr["y"], tr["x"]) if horizontal else (tr["x"], tr["y"])
    rects = g.findall(SVG + "rect")
    assert len(rects) == len(vals), f"{name}: {len(vals)} bars drawn as {len(rects)}"
    colors = (tr.get("marker") or {}).get("color", "#2f6fde")
    for k, (rect, c, v) in enumerate(zip(rects, cats, vals)):
        x, y, w, h = floats(rect, "x", "y", "width", "height")
        (c0, c1), (v0, v1) = ((y, y + h), (x, x + w)) if horizontal else ((x, x + w), (y, y + h))
        cat.slots.append(cat.pos(c))
        lo, hi = cat.edges(cat.pos(c) - 0.4, cat.pos(c) + 0.4)  # plotly's bargap 0.2 leaves 0.8 of a slot
        cat.pair(lo, c0, f"{name} bar {c!r} edge")
        cat.pair(hi, c1, f"{name} bar {c!r} edge")
        lo, hi = val.edges(min(0, v), max(0, v))
        val.pair(lo, v0, f"{name} bar {c!r} = {v}")
        val.pair(hi, v1, f"{name} bar {c!r} = {v}")
        assert_paint(rect.get("fill"), colors[k] if isinstance(colors, list) else colors, f"{name} bar {c!r}")
    texts = [t.text for t in g.findall(SVG + "text")]
    assert texts == [plain(t) for t in tr.get("text") or []][:len(vals)], f"{name}: bar labels {texts}"


def check_heatmap(tr, g, xa: Axis, ya: Axis, name: str) -> list | None:
    """Cells placed and coloured; an image is checked after the fit: its pixels are returned."""
    z = tr["z"]
    xs, ys = tr.get("x") or list(range(len(z[0]))), tr.get("y") or list(range(len(z)))
    flat = [v for row in z for v in row if v is not None]
    zmin, zmax = tr.get("zmin", min(flat)), tr.get("zmax", max(flat))
    scale = tr["colorscale"]

    def colour(v):
        return on_scale(scale, (v - zmin) / ((zmax - zmin) or 1))

    xa.slots += [xa.pos(v) for v in xs]
    ya.slots += [ya.pos(v) for v in ys]
    image = g.find(SVG + "image")
    if image is not None:
        x, y, w, h = floats(image, "x", "y", "width", "height")
        for axis, values, lo_px, hi_px in ((xa, xs, x, x + w), (ya, ys, y, y + h)):
            at = [axis.pos(v) for v in values]
            lo, hi = axis.edges(min(at) - 0.5, max(at) + 0.5)
            axis.pair(lo, lo_px, f"{name} image edge")
            axis.pair(hi, hi_px, f"{name} image edge")
        pixels = png_pixels(image.get("href"))
        assert (len(pixels), len(pixels[0])) == (len(z), len(z[0])), f"{name}: one pixel a cell"
        return pixels
    cells = [(i, j, v) for i, row in enumerate(z) for j, v in enumerate(row)
             if v is not None and colour(v)[3] >= 0.02]
    rects = g.findall(SVG + "rect")
    assert len(rects) == len(cells), f"{name}: {len(cells)} visible cells drawn as {len(rects)} rectangles"
    for rect, (i, j, v) in zip(rects, cells):
        x, y, w, h = floats(rect, "x", "y", "width", "height")
        xa.pair(xs[j], x + w / 2, f"{name} cell ({i}, {j})")
        ya.pair(ys[i], y + h / 2, f"{name} cell ({i}, {j})")
        want = colour(v)
        assert_paint(rect.get("fill"), want, f"{name} cell ({i}, {j}) = {v}")
        assert abs(float(rect.get("fill-opacity", 1)) - want[3]) <= 0.01, f"{name} cell ({i}, {j}): opacity"
    return None


def check_cells_after_fit(tr, g, xa: Axis, ya: Axis, name: str, pixels) -> None:
    """Heatmap cells span one unit of their axes, less the gap; an image's pixels are the cells,
    in the order the axes put them."""
    z = tr["z"]
    for rect in g.findall(SVG + "rect"):  # plotly's gaps are pixels between cells
        w, h = float(rect.get("width")) + tr.get("xgap", 0), float(rect.get("height")) + tr.get("ygap", 0)
        assert abs(w - abs(xa.slope)) <= 2 * TOL and abs(h - abs(ya.slope)) <= 2 * TOL, f"{name}: cell size {w} x {h}"
    if pixels is None:
        return
    xs, ys = tr.get("x") or list(range(len(z[0]))), tr.get("y") or list(range(len(z)))
    cols = sorted(range(len(xs)), key=lambda j: xa.map(xs[j]))   # left to right
    rows = sorted(range(len(ys)), key=lambda i: ya.map(ys[i]))   # top to bottom
    flat = [v for row in z for v in row if v is not None]
    zmin, zmax = tr.get("zmin", min(flat)), tr.get("zmax", max(flat))
    for r, i in enumerate(rows):
        for c, j in enumerate(cols):
            got, v = pixels[r][c], z[i][j]
            if v is None:
                assert got[3] == 0, f"{name}: an empty cell ({i}, {j}) is painted"
                continue
            want = on_scale(tr["colorscale"], (v - zmin) / ((zmax - zmin) or 1))
            assert all(abs(a - b) <= 1 for a, b in zip(got[:3], want[:3])) and abs(got[3] - 255 * want[3]) <= 1, \
                f"{name}: cell ({i}, {j}) = {v} drawn as {got}, not {want}"


def check_geometry(d: Drawing) -> None:
    """Explicit ranges span their plot areas; equal scales are equal, centred, inside their
    domains; autoranged cells and bars fill their plot areas and other data lies inside."""
    anchored = {d.axis(a.spec["scaleanchor"]).key for a in d.axes.values() if a.spec.get("scaleanchor")}
    for a in d.axes.values():
        lo_end, hi_end = a.span
        if a.spec.get("scaleanchor"):
            b = d.axis(a.spec["scaleanchor"])
            ratio = a.spec.get("scaleratio", 1)
            assert abs(abs(a.slope) - ratio * abs(b.slope)) <= 1e-3 * abs(a.slope), f"{a.key}: scale not kept equal to {b.key}"
            fills = []
            for ax in (a, b):
                mid = sum(ax.spec["range"]) / 2
                assert abs(ax.map(mid) - sum(ax.span) / 2) <= TOL, f"{ax.key}: not centred on its domain"
                drawn, room = abs(ax.slope) * abs(ax.spec["range"][1] - ax.spec["range"][0]), abs(ax.span[1] - ax.span[0])
                assert drawn <= room + TOL, f"{ax.key}: drawn past its domain"
                fills.append(drawn >= room - TOL)
            assert any(fills), f"{a.key}/{b.key}: neither fills its domain"
        elif "range" in a.spec and a.key not in anchored:
            r0, r1 = a.spec["range"]
            if not a.loose_start:
                assert abs(a.map(r0) - lo_end) <= TOL, f"{a.key}: range start {r0} at {a.map(r0):.1f} px, not {lo_end:.1f}"
            assert abs(a.map(r1) - hi_end) <= TOL, f"{a.key}: range end {r1} at {a.map(r1):.1f} px, not {hi_end:.1f}"
        elif "range" not in a.spec and a.slots and not a.points:
            first, last = a.cell_range()[::-1] if a.reversed else a.cell_range()  # at span[0], span[1]
            if not a.loose_start:
                assert abs(a.map(first) - lo_end) <= TOL, f"{a.key}: cells do not start at the plot area's edge"
            assert abs(a.map(last) - hi_end) <= TOL, f"{a.key}: cells do not end at the plot area's edge"
        elif "range" not in a.spec:  # plotly pads an autorange a little: the data fills most of it
            low, high = a.extent()
            pixels = [p[1] for p in a.pairs]
            assert low - TOL <= min(pixels) and max(pixels) <= high + TOL, f"{a.key}: data drawn outside the plot area"
            assert min(pixels) - low <= 0.15 * (high - low) and high - max(pixels) <= 0.15 * (high - low), \
                f"{a.key}: the data fills {min(pixels):.0f}..{max(pixels):.0f} px of {low:.0f}..{high:.0f}"


def check_clips(d: Drawing) -> None:
    """Each trace is clipped to a rectangle that holds its whole plot area (else data vanishes)."""
    clips = {el.get("id"): el.find(SVG + "rect") for el in d.root.iter(SVG + "clipPath")}
    for k, (tr, g) in enumerate(zip(d.fig["data"], d.groups)):
        rect = clips[re.fullmatch(r"url\(#(.+)\)", g.get("clip-path")).group(1)]
        x, y, w, h = floats(rect, "x", "y", "width", "height")
        (x0, x1), (y0, y1) = d.axis(tr.get("xaxis", "x")).extent(), d.axis(tr.get("yaxis", "y")).extent()
        assert x <= x0 + TOL and x1 - TOL <= x + w and y <= y0 + TOL and y1 - TOL <= y + h, \
            f"trace {k} clipped to ({x}, {y}, {w}, {h}), its plot area is ({x0:.1f}..{x1:.1f}, {y0:.1f}..{y1:.1f})"


def texts(els) -> list[tuple[str, float, float, str, str]]:
    """(text, x, y, anchor, transform); a text of several lines (tspans placed at an x) reads as one,
    spaced; a run set lower or higher (<sub>, <sup>) reads on, as plotly's text does."""
    def read(el):
        lines = [t for t in el if t.get("x") is not None]
        if lines:
            return " ".join("".join(t.itertext()).strip() for t in lines if "".join(t.itertext()).strip())
        return "".join(el.itertext())
    return [(read(el),
             float(el.get("x")), float(el.get("y")), el.get("text-anchor", "start"),
             el.get("transform") or "") for el in els]


def check_ticks(d: Drawing) -> list[str]:
    """Every tick label sits at its value on its axis; returns the labels seen."""
    seen = []
    for a in d.axes.values():
        if a.spec.get("showticklabels", True) is False:
            continue
        other = d.counter(a)
        lo, hi = a.extent()
        olo, ohi = other.extent()
        if a.vertical:
            found = [(t, y - BASELINE) for t, x, y, anchor, tf in texts(d.outside)
                     if anchor == "end" and not tf and lo - 1 <= y - BASELINE <= hi + 1 and 0 < olo - x <= 30]
        else:
            found = [(t, x) for t, x, y, anchor, tf in texts(d.outside)
                     if anchor == "middle" and not tf and lo - 1 <= x <= hi + 1 and 0 < y - ohi <= 30]
            if a.spec.get("tickangle") in (-90, 90):  # labels on end, hanging from their tick
                found = [(t, x - 4) for t, x, y, anchor, tf in texts(d.outside)
                         if anchor == "end" and tf.startswith("rotate(-90") and lo - 1 <= x - 4 <= hi + 1 and 0 < y - ohi <= 12]
        if "tickvals" in a.spec:
            labels = a.spec.get("ticktext") or [None] * len(a.spec["tickvals"])
            want = list(zip(a.spec["tickvals"], labels))
        elif a.categories:
            want = [(c, c) for c in a.categories]
        else:
            want = []
            numeric = [(t, p) for t, p in found if number(t) is not None]
            assert len(numeric) >= 2, f"{a.key}: {len(numeric)} tick labels"
            for t, p in numeric:
                assert abs(p - a.map(number(t))) <= TOL, f"{a.key}: tick label {t} at {p:.1f} px, not {a.map(number(t)):.1f}"
            seen += [t for t, _ in numeric]
        for v, label in want:
            at = a.map(v)
            if not lo - 0.5 <= at <= hi + 0.5:
                continue
            match = [(t, p) for t, p in found if (plain(label) == t if label is not None else number(t) == pytest.approx(v))]
            assert any(abs(p - at) <= TOL for _, p in match), \
                f"{a.key}: no tick label {label if label is not None else v!r} at {at:.1f} px (found {match})"
            seen += [t for t, p in match if abs(p - at) <= TOL]
    return seen


def check_text(d: Drawing, ticks: list[str]) -> None:
    """Titles, axis titles, annotations and legend entries are the figure's, in their places,
    and the drawing says nothing else."""
    lay, outside = d.lay, texts(d.outside)
    m = {"l": 80, "r": 80, "t": 100, "b": 80, **lay.get("margin", {})}
    said = list(ticks)

    def find(content, where, what):
        hits = [t for t in outside if t[0] == content and where(*t[1:])]
        assert hits, f"{what} {content!r} is not drawn in its place (drawn: {[t for t in outside if t[0] == content]})"
        said.append(content)
        return hits[0]

    title = (lay.get("title") or {}).get("text") if isinstance(lay.get("title"), dict) else lay.get("title")
    if title:
        find(plain(title), lambda x, y, anchor, tf: anchor == "middle" and abs(x - d.width / 2) <= 1 and y < m["t"], "the title")
    for a in d.axes.values():
        spec_title = a.spec.get("title")
        text = spec_title.get("text") if isinstance(spec_title, dict) else spec_title
        if not text:
            continue
        lo, hi = a.extent()
        olo, ohi = d.counter(a).extent()
        if a.vertical:
            find(plain(text), lambda x, y, anchor, tf: tf.startswith("rotate(-90") and abs(y - (lo + hi) / 2) <= 1 and x < olo,
                 f"{a.key} title")
        else:
            find(plain(text), lambda x, y, anchor, tf: anchor == "middle" and abs(x - (lo + hi) / 2) <= 1 and y > ohi,
                 f"{a.key} title")
    for note in lay.get("annotations", []):
        if not note.get("text"):
            continue
        try:
            x = (m["l"] + note["x"] * (d.width - m["l"] - m["r"]) if note.get("xref") == "paper"
                 else d.axis(note.get("xref", "x")).map(note["x"]))
            y = (lay["height"] - m["b"] - note["y"] * (lay["height"] - m["t"] - m["b"]) if note.get("yref") == "paper"
                 else d.axis(note.get("yref", "y")).map(note["y"]))
        except (KeyError, ValueError, TypeError):
            continue  # on an axis nothing is drawn on
        x, y = x + note.get("xshift", 0), y - note.get("yshift", 0)
        if note.get("showarrow"):
            x, y = x + note.get("ax", -10), y + note.get("ay", -30)
        anchor = {"left": "start", "right": "end"}.get(note.get("xanchor"), "middle")
        below = {"bottom": (-6, 0), "top": (6, 16)}.get(note.get("yanchor"), (0, 8))  # baseline from the point
        if note.get("yanchor") == "bottom":  # a note of several lines grows upwards from its last line
            up = 1.3 * (note.get("font") or {}).get("size", 12) * len(re.split(r"<br\s*/?>", note["text"])[1:])
            below = (below[0] - up - 0.1, below[1] - up + 0.1)
        find(plain(note["text"]), lambda tx, ty, a, tf: a == anchor and abs(tx - x) <= 1 and below[0] <= ty - y <= below[1],
             "annotation")
    if lay.get("showlegend", True):
        names = [(plain(t["name"]), t) for t in d.fig["data"] if t.get("showlegend", True) and t.get("name")]
        legend = lay.get("legend", {})
        if legend.get("yref") == "container":  # fit() places the legend's top edge in the whole drawing
            line_y = (1 - legend.get("y", 1.0)) * lay["height"]
        else:
            line_y = lay["height"] - m["b"] - legend.get("y", 1.0) * (lay["height"] - m["t"] - m["b"])
        for name, tr in names:
            el = next((el for el in d.outside if "".join(el.itertext()) == name and id(el) not in map(id, d.used)), None)
            assert el is not None, f"legend entry {name!r} is not drawn"
            d.used.append(el)
            said.append(name)
            x, y = float(el.get("x")), float(el.get("y"))
            swatch = d.children[d.order[id(el)] - 1]
            first = marker_colours(tr, 1)[0]  # plotly's legend shows the first point's colour
            assert swatch.tag in (SVG + "line", SVG + "circle"), f"legend entry {name!r} has no swatch"
            if swatch.tag == SVG + "line":
                assert "lines" in tr.get("mode", "lines+markers"), f"legend {name!r}: a line for a trace without one"
                sx, sy = float(swatch.get("x2")), float(swatch.get("y1"))
                assert_paint(swatch.get("stroke"), (tr.get("line") or {}).get("color") or first, f"legend {name!r}")
                line = tr.get("line") or {}   # plotly's sample: the trace's width and dashes (measured live)
                assert float(swatch.get("stroke-width")) == line.get("width", 2), f"legend {name!r}: sample width"
                assert (swatch.get("stroke-dasharray") or "") == static_svg.dasharray(line.get("dash", "solid"),
                                                                                   line.get("width", 2)), \
                    f"legend {name!r}: sample dashes {swatch.get('stroke-dasharray')}"
            else:
                sx, sy = float(swatch.get("cx")) + float(swatch.get("r")), float(swatch.get("cy"))
                assert_paint(swatch.get("fill"), first, f"legend {name!r}")
            assert 0 < x - sx <= 16 and abs(sy - (y - BASELINE)) <= 1, f"legend {name!r}: swatch not beside its text"
            assert 0 <= x < d.width and 0 < y <= d.view_height, f"legend {name!r} outside the drawing at ({x}, {y})"
            if legend.get("yanchor", "auto") == "top":
                assert y - BASELINE >= line_y - 1, f"legend {name!r} above its anchor"
            elif legend.get("yanchor") == "bottom":
                assert y <= line_y + 1, f"legend {name!r} below its anchor"
    for tr in d.fig["data"]:  # a heatmap's colour bar: its title above it, its tick labels beside it, top down
        if tr.get("type") != "heatmap" or not tr.get("showscale", True):
            continue
        bar = tr.get("colorbar") or {}
        title = (bar.get("title") or {}).get("text") if isinstance(bar.get("title"), dict) else bar.get("title")
        right = d.width - m["r"]
        for line in re.split(r"<br\s*/?>", title) if title else []:   # a wide title wraps (fit.readable_colorbars)
            find(plain(line), lambda x, y, anchor, tf: right < x and y < lay["height"] - m["b"], "colour bar title")
        listed = bar.get("ticktext")
        labels = [t for t in outside if right < t[1] and (t[0] in listed if listed else number(t[0]) is not None)]
        assert labels and len(labels) == len(listed or labels), f"colour bar: labels {labels}"
        if not listed:  # its own ticks: larger values higher up
            assert sorted(labels, key=lambda t: -t[2]) == sorted(labels, key=lambda t: number(t[0])), "colour bar: order"
        said += [t[0] for t in labels]
    extra = [t[0] for t in outside if t[0] not in said and t[0].strip()]   # a blank note (no-break spaces) says nothing
    assert extra == [], f"text the figure does not hold: {extra}"


def check_drawing(fig: dict, kind: str) -> None:
    d = Drawing(fig, kind)
    images = {}
    for k, (tr, g) in enumerate(zip(fig["data"], d.groups)):
        xa, ya = d.axis(tr.get("xaxis", "x")), d.axis(tr.get("yaxis", "y"))
        name = f"trace {k} ({tr.get('name') or tr.get('type', 'scatter')})"
        images[k] = {"heatmap": check_heatmap, "bar": check_bar}.get(tr.get("type"), check_scatter)(tr, g, xa, ya, name)
    anchored = {d.axis(a.spec["scaleanchor"]).key for a in d.axes.values() if a.spec.get("scaleanchor")}
    for a in d.axes.values():
        if a.pairs:
            a.fit(fixed="range" in a.spec and not a.spec.get("scaleanchor") and a.key not in anchored and not a.loose_start)
    for k, (tr, g) in enumerate(zip(fig["data"], d.groups)):
        if tr.get("type") == "heatmap":
            check_cells_after_fit(tr, g, d.axis(tr.get("xaxis", "x")), d.axis(tr.get("yaxis", "y")), f"trace {k}", images[k])
    d.axes = {k: a for k, a in d.axes.items() if a.map is not None}
    check_geometry(d)
    check_clips(d)
    check_text(d, check_ticks(d))


# --------------------------------------------------------------------------- what is checked

DEMOS_JSON = Path(__file__).resolve().parents[2] / "site" / "data" / "demos.json"
NOT_BUILT = "(site not built)"


def site_figures() -> dict[str, tuple[str, dict]]:
    """Every figure the site shows: the renders the build made (each demo at its defaults and every
    shortcode's parameters, as Hugo read them), by key, as (demo name, its parameters). Before a
    build, one placeholder that fails when run: collecting the tests needs no build."""
    if not DEMOS_JSON.exists():
        return {NOT_BUILT: ("", {})}
    renders = json.loads(DEMOS_JSON.read_text())["renders"]
    return {key: (key[:key.index("{")], render["params"]) for key, render in sorted(renders.items())}


def site_figure(key: str) -> tuple[str, dict]:
    if key == NOT_BUILT:
        pytest.fail(f"{DEMOS_JSON} is missing; run scripts/build (scripts/test does)")
    return FIGURES[key]


FIGURES = site_figures()

#: Drawings no demo makes yet: vertical bars below zero, reversed axes, gaps in a line, markers
#: coloured through a scale, a heatmap of transparent cells with gaps.
SHAPES = {
    "bars-and-gaps": {"data": [
        {"type": "bar", "x": ["a", "b", "c"], "y": [2.0, -1.0, 0.5], "marker": {"color": ["#d1495b", "#2f6fde", "#1f2933"]},
         "text": ["2", "-1", "0.5"], "name": "bars", "showlegend": False},
        {"type": "scatter", "mode": "lines", "x": [0, 1, None, 1, 2], "y": [1.5, 1.0, None, 0.0, -0.5], "name": "broken",
         "line": {"color": "#2e9e6a", "width": 2, "dash": "dot"}, "xaxis": "x2", "yaxis": "y2"},
        {"type": "scatter", "mode": "markers", "x": [0, 1, 2], "y": [0, 1, 4], "name": "hue",
         "marker": {"color": [0, 0.5, 1], "colorscale": [[0, "#000000"], [1, "#ff0000"]], "size": 8},
         "xaxis": "x2", "yaxis": "y2"}],
        "layout": {"height": 300, "margin": {"l": 40, "r": 10, "t": 40, "b": 60}, "title": {"text": "bars & gaps"},
                   "legend": {"orientation": "h", "y": -0.2, "yanchor": "top"},
                   "xaxis": {"domain": [0, 0.45]}, "yaxis": {"title": {"text": "height"}},
                   "xaxis2": {"domain": [0.55, 1], "anchor": "y2", "autorange": "reversed", "title": {"text": "x"}},
                   "yaxis2": {"anchor": "x2", "range": [-1, 5]}}},
    "faded-cells": {"data": [
        {"type": "heatmap", "z": [[0, 0.5, None], [1, 0.25, 0.75]], "x": ["p", "q", "r"], "zmin": 0, "zmax": 1,
         "colorscale": [[0, "rgba(47,111,222,0)"], [1, "rgba(47,111,222,1)"]], "xgap": 2, "ygap": 2}],
        "layout": {"height": 240, "margin": {"l": 40, "r": 10, "t": 20, "b": 40}, "yaxis": {"autorange": "reversed"}}},
}


@pytest.mark.parametrize("kind", ["narrow", "wide"])
@pytest.mark.parametrize("key", sorted(FIGURES))
def test_the_drawing_shows_the_figure(key, kind):
    name, overrides = site_figure(key)
    check_drawing(REGISTRY[name].run(overrides)["figure"], kind)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("key", sorted(FIGURES))
def test_the_drawing_shows_the_figure_laid_out_for_its_width(key, width):
    """What the page shows: each figure as figure.fit.fit lays it out for each drawing width."""
    name, overrides = site_figure(key)
    check_drawing(fit(REGISTRY[name].run(overrides)["figure"], width), f"w{width}")


@pytest.mark.parametrize("kind", ["narrow", "wide"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_shapes_no_demo_draws_yet(shape, kind):
    check_drawing(SHAPES[shape], kind)


@pytest.mark.parametrize("kind", ["narrow", "wide"])
def test_an_arrow_of_zero_length_draws_no_head(kind):
    """Three polarisers with the middle one out, crossed: no field after the last, an arrow from the
    origin to itself, drawn without a head."""
    fig = REGISTRY["three-polarizers"].run({"middle": False})["figure"]
    zero = [tr for tr in fig["data"] if tr.get("name") == "field after 3"]
    assert zero and zero[0]["x"] == [0.0, 0.0] and zero[0]["y"] == [0.0, 0.0]
    check_drawing(fig, kind)


def test_heatmap_cells_take_their_colour_from_the_scale():
    fig = {"data": [{"type": "heatmap", "z": [[0, 1], [0.5, 0.25]], "zmin": 0, "zmax": 1,
                     "colorscale": [[0, "#000000"], [1, "#ffffff"]]}], "layout": {"height": 200}}
    fills = [r.get("fill") for g in parse(static_svg.render(fig)).iter(SVG + "g") for r in g.iter(SVG + "rect")]
    assert fills == ["rgb(0,0,0)", "rgb(255,255,255)", "rgb(128,128,128)", "rgb(64,64,64)"]


def test_a_short_hex_scale_paints_as_plotly_paints_it():
    """``#000`` to ``#fff`` is black to white, as plotly and the page's in-place drawing read it (the
    build's drawing once painted every cell of such a scale grey)."""
    fig = {"data": [{"type": "heatmap", "z": [[0, 1], [0.5, 0.25]], "zmin": 0, "zmax": 1,
                     "colorscale": [[0, "#000"], [1, "#fff"]]}], "layout": {"height": 200}}
    fills = [r.get("fill") for g in parse(static_svg.render(fig)).iter(SVG + "g") for r in g.iter(SVG + "rect")]
    assert fills == ["rgb(0,0,0)", "rgb(255,255,255)", "rgb(128,128,128)", "rgb(64,64,64)"]


def test_a_drawing_bug_is_seen(monkeypatch):
    """The checks can fail: one marker drawn two pixels lower is reported with its value."""
    fig = {"data": [{"type": "scatter", "mode": "markers", "x": list(range(11)), "y": list(range(11)), "marker": {"size": 4}}],
           "layout": {"height": 200, "margin": {"l": 40, "r": 10, "t": 10, "b": 30}}}
    check_drawing(fig, "wide")
    dots = re.findall(r"M(-?[\d.]+) (-?[\d.]+)h0", static_svg.render(fig))  # one path: every marker one size
    x, y = dots[5]
    moved = static_svg.render(fig).replace(f"M{x} {y}h0", f"M{x} {float(y) + 2:g}h0")
    monkeypatch.setattr(static_svg, "render", lambda *args, **kw: moved)
    with pytest.raises(AssertionError, match=r"yaxis: trace 0 \(scatter\) marker \(5, 5\)"):
        check_drawing(fig, "wide")


def test_text_is_escaped():
    fig = {"data": [], "layout": {"title": {"text": "<script>x</script> & E<sub>x</sub>"}}}
    svg = static_svg.render(fig)
    assert "<script>" not in svg and "&amp;" in svg


def test_maths_is_set_as_maths():
    """<sub> and <sup> are lowered and raised smaller runs, as plotly draws them; unbalanced markup
    is dropped, never passed through."""
    svg = static_svg.render({"data": [], "layout": {"title": {"text": "W<sub>OV</sub> d<sup>−1/2</sup>"}}})
    assert '<tspan baseline-shift="sub" font-size="70%">OV</tspan>' in svg
    assert '<tspan baseline-shift="super" font-size="70%">−1/2</tspan>' in svg
    title = next(t for t in parse(svg).iter(SVG + "text") if t.get("font-size") == "14")
    assert "".join(title.itertext()) == "WOV d−1/2"
    assert "<tspan" not in static_svg.render({"data": [], "layout": {"title": {"text": "a<sub>b"}}})


def test_a_shape_in_a_panels_domain_stays_in_that_panel():
    """A line from 0 to 1 of "y2 domain" spans the lower panel alone, not the gap and the other
    panel (norm-symmetry's dashed marker once ran through the axis title between its panels)."""
    fig = {"data": [{"type": "scatter", "x": [0, 1], "y": [0, 1]},
                    {"type": "scatter", "x": [0, 1], "y": [0, 1], "xaxis": "x2", "yaxis": "y2"}],
           "layout": {"height": 400, "margin": {"l": 40, "r": 10, "t": 20, "b": 40},
                      "xaxis": {"domain": [0, 1], "anchor": "y"}, "yaxis": {"domain": [0.6, 1], "anchor": "x"},
                      "xaxis2": {"domain": [0, 1], "anchor": "y2"}, "yaxis2": {"domain": [0, 0.4], "anchor": "x2"},
                      "shapes": [{"type": "line", "xref": "x2", "yref": "y2 domain", "x0": 0.5, "x1": 0.5,
                                  "y0": 0, "y1": 1, "line": {"color": "#e07b24", "width": 1.5}}]}}
    line = next(el for el in parse(static_svg.render(fig)).iter(SVG + "line") if el.get("stroke") == "#e07b24")
    top, bottom = 20 + 0.6 * 340, 20 + 340     # the lower panel: 40 % of the 340 px plot, at its bottom
    assert sorted([float(line.get("y1")), float(line.get("y2"))]) == pytest.approx([top, bottom], abs=0.1)


def test_plotly_dashes_and_zero_lines():
    """The static drawing draws what plotly draws (measured on the gallery, live): dash steps of at
    least 3 px times the line's width ("dot" at 1.5 px is 3 3, plotly's 3px,3px; the static drawing
    drew 2 3), and a zero line where the range holds 0 at one end (singular-routes' and
    three-polarizers' bars from 0, where plotly drew one and the static drawing none)."""
    assert [static_svg.dasharray(d, w) for d, w in (("dot", 1.5), ("dash", 2.5), ("dashdot", 4))] == \
        ["3 3", "9 9", "12 4 4 4"]
    fig = {"data": [{"type": "bar", "x": ["a", "b"], "y": [1, 2]}], "layout": {"height": 200, "yaxis": {"range": [0, 2]}}}
    assert static_svg.render(fig).count('class="zero"') == 1


@pytest.mark.parametrize("seed", range(40))
def test_a_lines_points_are_the_point_by_point_pixels(seed):
    """The numpy way through a trace's points (``_points``, ``Axis.add``, ``_polyline``) against the
    obvious one, value by value: the same pixels and the same text, for numbers of every kind, gaps
    (None), NaN and categories."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    pick = rng.integers(0, 8, size=(2, n))
    def value(kind, k):
        return {0: None, 1: float("nan"), 2: int(rng.integers(-50, 50)), 3: bool(k % 2),
                4: f"c{k % 3}"}.get(kind, float(rng.normal() * 10.0 ** rng.integers(-3, 4)))
    categorical = rng.random() < 0.2
    xs = [value(k if categorical or k != 4 else 5, i) for i, k in enumerate(pick[0])]
    if not (rng.random() < 0.5):
        xs = [value(5, i) for i in range(n)]  # a clean line: the fast path
    ys = [value(5 if k in (1, 4) and seed % 2 else k if k != 4 else 5, i) for i, k in enumerate(pick[1])]
    if seed % 4 == 0:
        xs, ys = [value(5, i) for i in range(n)], [value(5 if k == 4 else int(k), i) for i, k in enumerate(rng.integers(2, 8, n))]
    spec = {} if seed % 3 else {"range": [-20, 20]}
    xa, ya = static_svg.Axis("xaxis", dict(spec), 80, 560, False), static_svg.Axis("yaxis", dict(spec), 300, 40, True)
    slow_x, slow_y = static_svg.Axis("xaxis", dict(spec), 80, 560, False), static_svg.Axis("yaxis", dict(spec), 300, 40, True)
    for axis, slow, values in ((xa, slow_x, xs), (ya, slow_y, ys)):
        axis.add(values)
        for v in values:  # what add did value by value before it took numpy's way
            if isinstance(v, str):
                slow.categories += [] if v in slow.categories else [v]
            elif "range" not in spec and v is not None and isinstance(v, (int, float)) and np.isfinite(v):
                slow.values += [float(v), float(v)]
        axis.finish()
        slow.finish()
        assert axis.range == slow.range and axis.categories == slow.categories
    try:
        want = [(k, slow_x.px(u), slow_y.px(v)) for k, (u, v) in enumerate(zip(xs, ys)) if u is not None and v is not None]
    except ValueError:  # a category on a number axis: both ways refuse it
        with pytest.raises(ValueError):
            static_svg._points(xs, ys, xa, ya)
        return
    got = static_svg._points(xs, ys, xa, ya)
    assert [k for k, *_ in got] == [k for k, *_ in want]
    assert np.array_equal(np.array([p[1:] for p in got]).reshape(-1, 2), np.array([p[1:] for p in want]).reshape(-1, 2), equal_nan=True)
    if want:
        assert static_svg._polyline(got) == " ".join(f"{x:.1f},{y:.1f}" for _, x, y in want)
