"""Draw a plotly figure dict as SVG: the one engine that draws every figure the page shows.

Why: the build's first paint, its answers to a reader's first moves and every move Python
computes in the browser are one drawing, made here at the page's width: the build's SVG paints
with the HTML, with no script, and a move writes into the drawing on screen only what differs
(``draw.js``), so a figure looks the same before and after Python is live. plotly.js draws a
figure only under a reader's pointer, for its hover values
(docs/decisions/0003-one-figure-engine.md). This covers what our demos use (scatter lines and
markers, bars, heatmaps, annotations, rectangle shapes, subplots by axis domain, equal-scale
axes, a legend) with plotly's margins, ranges and domains, so plotly taking over under a pointer
barely moves anything. It draws our figures, not any figure: not a plotting library.

>>> svg = render({"data": [{"type": "scatter", "x": [0, 1], "y": [0, 1], "mode": "lines"}],
...               "layout": {"height": 200}})
>>> svg.startswith('<svg class="static-figure wide"') and "<polyline" in svg
True
"""

from __future__ import annotations

import base64
import math
import re
import struct
import zlib

import numpy as np

#: Stands for the figure's own id in a static SVG's clip-path ids: demo.html replaces it, so one
#: render placed twice on a page (or once in the gallery and once in an article) has unique ids.
SVG_UID = "HSFIGURE"
WIDTH = 640  # the default width of a drawing; the page draws every figure at each of fit.WIDTHS
FONT = 12
def dasharray(dash, width: float = 2) -> str:
    """A line's dash pattern as plotly draws it (``Drawing.dashStyle``): its steps are multiples of
    the line's width, at least 3 px, so a 1.5 px dotted line and its legend sample agree.

    >>> dasharray("dot", 1.5), dasharray("dash", 2), dasharray("solid"), dasharray("5px,2px")
    ('3 3', '9 9', '', '5 2')
    """
    d = max(float(width or 1), 3.0)
    steps = {"dot": (d, d), "dash": (3 * d, 3 * d), "longdash": (5 * d, 5 * d), "dashdot": (3 * d, d, d, d),
             "longdashdot": (5 * d, 2 * d, d, 2 * d)}.get(dash)
    if steps is None:  # solid, or plotly's own list of lengths ("5px,10px")
        return " ".join(re.findall(r"[\d.]+", dash)) if isinstance(dash, str) and dash != "solid" else ""
    return " ".join(f"{v:g}" for v in steps)


from headspace_site.figure.style import COLORS
from headspace_site.figure.colour import rgba, scale_colour
from headspace_site.figure.fit import nice_ticks, text_px, tick_label as _fmt
from headspace_site.figure.outputs import escape

INK = COLORS["ink"]  # the demos' neutral colour; drawn as currentColor so dark mode recolours it


def _paint(color):
    return "currentColor" if isinstance(color, str) and color.lower() == INK else color


def _esc(text) -> str:
    """``text`` as SVG text content: escaped, markup dropped, but <sub> and <sup> kept as lowered or
    raised smaller runs, as plotly draws them (W<sub>OV</sub>: maths set as maths)."""
    text = re.sub(r"<br\s*/?>", " ", str(text))
    parts = re.split(r"(</?su[bp]>)", text)
    if text.count("<sub>") != text.count("</sub>") or text.count("<sup>") != text.count("</sup>"):
        parts = [text]
    shift = {"<sub>": "sub", "<sup>": "super"}
    return "".join(f'<tspan baseline-shift="{shift[part]}" font-size="70%">' if part in shift else
                   "</tspan>" if part in ("</sub>", "</sup>") else
                   _quoted(re.sub(r"<[^>]+>", "", part)) for part in parts)


def _quoted(text: str) -> str:
    """``html.escape(text)``: quotes too, so the text may stand in an attribute."""
    return escape(text).replace('"', "&quot;").replace("'", "&#x27;")


class Axis:
    """One plotly axis: its pixel span and a map from data to pixels."""

    def __init__(self, name: str, spec: dict, lo_px: float, hi_px: float, vertical: bool):
        self.name, self.spec, self.vertical = name, spec, vertical
        d0, d1 = spec.get("domain", [0, 1])
        self.p0 = lo_px + d0 * (hi_px - lo_px)
        self.p1 = lo_px + d1 * (hi_px - lo_px)
        self.categories: list = []
        self.values: list[float] = []
        self.range: list[float] | None = None

    def add(self, values, pad: float = 0.0):
        fixed = "range" in self.spec  # a fixed range reads no values: only the categories' order
        numbers = _numbers(values)  # no category, no None: the span in one pass
        if numbers is not None:
            if not fixed:
                numbers = numbers[np.isfinite(numbers)]
                self.values += [float(numbers.min()) - pad, float(numbers.max()) + pad] if numbers.size else []
            return
        for v in values:
            if isinstance(v, str):
                if v not in self.categories:
                    self.categories.append(v)
                v = self.categories.index(v)
            if fixed:
                continue
            if v is not None and isinstance(v, (int, float)) and math.isfinite(v):
                self.values.append(float(v) - pad)
                self.values.append(float(v) + pad)

    def pos(self, v) -> float:
        return self.categories.index(v) if isinstance(v, str) else float(v)

    def finish(self):
        if "range" in self.spec:
            lo, hi = self.spec["range"]
        elif self.values:
            lo, hi = min(self.values), max(self.values)
            if not (self.categories or self.spec.get("_heat")):  # cells and bars already pad by half a cell
                pad = 0.05 * (hi - lo or 1)
                lo, hi = lo - pad, hi + pad
        else:
            lo, hi = -1, 1
        if self.spec.get("autorange") == "reversed":
            lo, hi = hi, lo
        self.range = [lo, hi]

    def px(self, v) -> float:
        """Pixel of a data value (a number or a category)."""
        return _px(self, self.pos(v))

    def scale(self) -> float:  # pixels per data unit
        return abs(self.p1 - self.p0) / abs((self.range[1] - self.range[0]) or 1)


def _colorscale(scale, t: float) -> tuple[str, float]:
    """The colour at ``t`` in [0, 1] and its opacity (a scale may fade to transparent)."""
    r, g, b, alpha = scale_colour(scale, t)
    return f"rgb({round(r)},{round(g)},{round(b)})", alpha


def render(fig: dict, width: int = WIDTH, uid: str = "f", css_class: str = "wide", png_level: int = 9) -> str:
    """The figure as an ``<svg class="static-figure">`` string; ``uid`` prefixes its clip ids.
    ``png_level``: how hard a heatmap's PNG is deflated (zlib's 0 to 9): the build's drawings cross
    the network and are made once, so 9; a live move's never leaves the reader's browser, and
    at 9 a figure of eight 64 x 64 heatmaps spent most of its move deflating them (the same pixels
    at any level)."""
    layout, data = fig.get("layout", {}), fig.get("data", [])
    height = layout.get("height", 360)
    m = {"l": 80, "r": 80, "t": 100, "b": 80, **layout.get("margin", {})}
    yspec = layout.get("yaxis", {})
    if yspec.get("automargin") and yspec.get("ticktext") and m.get("autoexpand", True):  # plotly widens the margin to fit labels
        m["l"] = max(m["l"], 24 + 7 * max(len(str(t)) for t in yspec["ticktext"]))
    x_lo, x_hi, y_lo, y_hi = m["l"], width - m["r"], m["t"], height - m["b"]

    axes: dict[str, Axis] = {}

    def axis(ref: str, vertical: bool) -> Axis:
        key = ("yaxis" if vertical else "xaxis") + ref[1:]
        if key not in axes:
            spec = dict(layout.get(key, {}))
            axes[key] = Axis(key, spec, y_hi if vertical else x_lo, y_lo if vertical else x_hi, vertical)
            if vertical:  # keep p0 the top pixel and p1 the bottom one (domain 0 is the bottom)
                a = axes[key]
                a.p0, a.p1 = min(a.p0, a.p1), max(a.p0, a.p1)
        return axes[key]

    for tr in data:
        xa, ya = axis(tr.get("xaxis", "x"), False), axis(tr.get("yaxis", "y"), True)
        if tr.get("type") == "heatmap":
            xa.spec["_heat"] = ya.spec["_heat"] = True
            z = tr.get("z") or [[]]
            xs = tr.get("x") or list(range(len(z[0])))
            ys = tr.get("y") or list(range(len(z)))
            xa.add(xs, 0.5)
            ya.add(ys, 0.5)
        elif tr.get("type") == "bar":
            cat, val = (ya, xa) if tr.get("orientation") == "h" else (xa, ya)
            vals = tr.get("x" if tr.get("orientation") == "h" else "y") or []
            cats = tr.get("y" if tr.get("orientation") == "h" else "x") or []
            cat.add(cats, 0.5)
            val.add(list(vals) + [0])
        else:
            xa.add(tr.get("x") or [])
            ya.add(tr.get("y") or [])
    if "xaxis" not in axes:
        axis("x", False)
    if "yaxis" not in axes:
        axis("y", True)
    for a in axes.values():
        a.finish()
    # Equal scales (scaleanchor): shrink the looser axis about its centre, as constrain="domain" does.
    for a in list(axes.values()):
        anchor = a.spec.get("scaleanchor")
        if anchor:
            other = axes.get(("xaxis" if anchor.startswith("x") else "yaxis") + anchor[1:])
            if other:
                s = min(a.scale(), other.scale() * a.spec.get("scaleratio", 1))
                for ax, want in ((a, s), (other, s / a.spec.get("scaleratio", 1))):
                    span = abs(ax.range[1] - ax.range[0]) * want
                    mid = (ax.p0 + ax.p1) / 2
                    ax.p0, ax.p1 = mid - span / 2, mid + span / 2

    out = [f'<svg class="static-figure {css_class}" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'preserveAspectRatio="xMidYMin meet" role="img" aria-hidden="true" xmlns="http://www.w3.org/2000/svg" '
           f'font-family="system-ui, sans-serif" font-size="{FONT}">']

    # Grid, zero lines, tick labels, axis titles.
    for a in axes.values():
        spec = a.spec
        lo, hi = sorted(a.range)
        if "tickvals" in spec:
            ticks = list(zip(spec["tickvals"], spec.get("ticktext", [_fmt(v) for v in spec["tickvals"]])))
        elif a.categories:
            ticks = [(c, c) for c in a.categories]
        else:
            ticks = [(v, _fmt(v)) for v in nice_ticks(lo, hi, 6)]
        other_key = ("xaxis" if a.vertical else "yaxis") + (spec.get("anchor", "")[1:] if spec.get("anchor") else a.name[5:])
        other = axes.get(other_key) or next(o for o in axes.values() if o.vertical != a.vertical)
        for v, label in ticks:
            try:
                p = a.px(v)
            except (ValueError, TypeError):
                continue
            if not (min(a.p0, a.p1) - 0.5 <= p <= max(a.p0, a.p1) + 0.5):
                continue
            if spec.get("showgrid", not a.categories) and not spec.get("_heat"):
                if a.vertical:
                    out.append(f'<line class="grid" x1="{other.p0:.1f}" x2="{other.p1:.1f}" y1="{p:.1f}" y2="{p:.1f}"/>')
                else:
                    out.append(f'<line class="grid" x1="{p:.1f}" x2="{p:.1f}" y1="{other.p0:.1f}" y2="{other.p1:.1f}"/>')
            if spec.get("showticklabels", True):
                if a.vertical:
                    gap = 9 if spec.get("_heat") else 1  # where plotly puts them, by trace type
                    out.append(f'<text x="{other.p0 - gap:.1f}" y="{p + 4:.1f}" text-anchor="end">{_esc(label)}</text>')
                elif spec.get("tickangle") in (-90, 90):  # fit() turns labels that do not fit across
                    down = other.p1 + (11 if spec.get("_heat") and spec.get("type") != "category" else 6 if not spec.get("_heat") else 3)
                    out.append(f'<text x="{p + 4:.1f}" y="{down:.1f}" text-anchor="end" '
                               f'transform="rotate(-90 {p + 4:.1f} {down:.1f})">{_esc(label)}</text>')
                else:
                    out.append(f'<text x="{p:.1f}" y="{other.p1 + (20 if spec.get("_heat") else 13):.1f}" text-anchor="middle">{_esc(label)}</text>')
        # plotly draws a zero line wherever the range holds 0, its ends included (a bar axis from 0)
        if spec.get("zeroline", True) and not a.categories and not spec.get("_heat") and min(lo, hi) <= 0 <= max(lo, hi):
            p = a.px(0)
            if a.vertical:
                out.append(f'<line class="zero" x1="{other.p0:.1f}" x2="{other.p1:.1f}" y1="{p:.1f}" y2="{p:.1f}"/>')
            else:
                out.append(f'<line class="zero" x1="{p:.1f}" x2="{p:.1f}" y1="{other.p0:.1f}" y2="{other.p1:.1f}"/>')
        title = (spec.get("title") or {}).get("text") if isinstance(spec.get("title"), dict) else spec.get("title")
        if title:
            # Where plotly puts an axis title (12 px) with no standoff set: 34 px left of a y axis or
            # 43 px below an x axis (31 with no tick labels), moved clear of any tick label it would overlap.
            shown = [(p, str(label)) for p, label in ticks] if spec.get("showticklabels", True) else []
            if a.vertical:
                widest = max((text_px(label) for _, label in shown), default=0)
                x, y = max(10, other.p0 - max(34, widest + (17 if spec.get("_heat") else 9))), (a.p0 + a.p1) / 2
                out.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="middle" transform="rotate(-90 {x:.1f} {y:.1f})">{_esc(title)}</text>')
            else:
                centre, half = (a.p0 + a.p1) / 2, text_px(title) / 2
                depth = 16
                if spec.get("tickangle") in (-90, 90):  # labels on end reach down by their length
                    depth = max([6 + text_px(label) for p, label in shown if abs(a.px(p) - centre) < half + 8]
                                or [0])
                out.append(f'<text x="{centre:.1f}" y="{other.p1 + (max(43, depth + 16) if shown else 31):.1f}" text-anchor="middle">{_esc(title)}</text>')

    # Traces, in order, each clipped to its subplot.
    legend, clips = [], {}
    for tr in data:
        xa, ya = axes["xaxis" + tr.get("xaxis", "x")[1:]], axes["yaxis" + tr.get("yaxis", "y")[1:]]
        if (xa.name, ya.name) not in clips:  # one clip path per subplot: ids are unique in the page
            cid = clips[xa.name, ya.name] = f"{uid}-{len(clips)}"
            out.append(f'<clipPath id="{cid}"><rect x="{xa.p0:.1f}" y="{ya.p0 - 6:.1f}" width="{xa.p1 - xa.p0:.1f}" '
                       f'height="{ya.p1 - ya.p0 + 12:.1f}"/></clipPath>')
        out.append(f'<g clip-path="url(#{clips[xa.name, ya.name]})">')
        out.extend(_trace(tr, xa, ya, legend, png_level))
        out.append("</g>")
    for k, tr in enumerate(t for t in data if t.get("type") == "heatmap" and t.get("showscale", True)):
        out.extend(_colorbar(tr, (x_lo, x_hi, y_lo, y_hi), f"{uid}-cb{k}"))
    decorations, bottom = _decorations(layout, axes, (x_lo, x_hi, y_lo, y_hi), width, m, legend)
    out.extend(decorations)
    out.append("</svg>")
    if bottom > height:  # a legend that wraps on a narrow drawing: grow rather than clip it
        out[0] = out[0].replace(f"0 0 {width} {height}", f"0 0 {width} {bottom:.0f}").replace(
            f' height="{height}"', f' height="{bottom:.0f}"')
    return "".join(out)


_CB_LINE = 18.2   # plotly's line of a 14 px title: 1.3 em


def _colorbar(tr: dict, box, gid: str) -> list[str]:
    """A heatmap's colour bar where plotly draws it by default: 2 % of the plot's width plus 10 px
    to its right, ``thickness`` px wide, 10 px inside the plot's height (and 21 px more under a
    title), its tick labels 15 px to the right of its left edge, centred on their values."""
    x_lo, x_hi, y_lo, y_hi = box
    spec = tr.get("colorbar") or {}
    z = [v for row in tr.get("z") or [] for v in row if isinstance(v, (int, float))]
    zmin, zmax = tr.get("zmin", min(z, default=0)), tr.get("zmax", max(z, default=1))
    title = (spec.get("title") or {}).get("text") if isinstance(spec.get("title"), dict) else spec.get("title")
    lines = re.split(r"<br\s*/?>", title) if title else []
    x0, thick = x_hi + 0.02 * (x_hi - x_lo) + 10, spec.get("thickness", 30)
    top, bottom = y_lo + 10 + (21 + _CB_LINE * (len(lines) - 1) if title else 0), y_hi - 10
    scale = tr.get("colorscale") if isinstance(tr.get("colorscale"), list) else [[0, "#f7fbff"], [1, "#08306b"]]
    stops = "".join(f'<stop offset="{float(t):.4f}" stop-color="{_paint(c)}"/>' for t, c in scale)
    out = [f'<linearGradient id="{gid}" x1="0" y1="1" x2="0" y2="0">{stops}</linearGradient>',
           f'<rect x="{x0:.1f}" y="{top:.1f}" width="{thick}" height="{bottom - top:.1f}" fill="url(#{gid})"/>']
    for k, line in enumerate(lines):   # a wrapped title's lines, the last 8 px above the bar
        out.append(f'<text x="{x0:.1f}" y="{top - 8 - _CB_LINE * (len(lines) - 1 - k):.1f}" font-size="14">'
                   f'{_esc(line)}</text>')
    values = spec.get("tickvals") or nice_ticks(zmin, zmax, 5)
    texts = spec.get("ticktext") or [_fmt(v) for v in values]
    below = 8.4 if spec.get("ticklabelposition") == "outside bottom" else 0.0   # plotly's "outside bottom"
    for v, label in zip(values, texts):
        y = bottom - (v - zmin) / ((zmax - zmin) or 1) * (bottom - top)
        if top - 0.5 <= y <= bottom + 0.5:
            out.append(f'<text x="{x0 + thick + 3:.1f}" y="{y + 4 + below:.1f}">{_esc(label)}</text>')
    return out


def _trace(tr: dict, xa: "Axis", ya: "Axis", legend: list, png_level: int = 9) -> list[str]:
    """SVG elements of one trace; appends its legend entry."""
    out = []
    kind, opacity = tr.get("type", "scatter"), tr.get("opacity", 1)
    marker, line = tr.get("marker") or {}, tr.get("line") or {}
    if kind == "heatmap":
        z = tr.get("z") or []
        xs = tr.get("x") or list(range(len(z[0]) if z else 0))
        ys = tr.get("y") or list(range(len(z)))
        if "zmin" in tr and "zmax" in tr:  # the demos fix their scales: no pass over the cells
            zmin, zmax = tr["zmin"], tr["zmax"]
        else:
            flat = [v for row in z for v in row if isinstance(v, (int, float))]
            zmin = tr.get("zmin", min(flat) if flat else 0)
            zmax = tr.get("zmax", max(flat) if flat else 1)
        gx, gy = tr.get("xgap", 0) / 2, tr.get("ygap", 0) / 2
        image = _heatmap_image(z, xs, ys, xa, ya, tr.get("colorscale"), zmin, zmax, png_level) if not (gx or gy) else None
        if image:
            return [image]
        for i, row in enumerate(z):
            for j, v in enumerate(row):
                if v is None:
                    continue
                cx, cy = xa.pos(xs[j]), ya.pos(ys[i])
                px0, px1 = sorted((_px(xa, cx - 0.5), _px(xa, cx + 0.5)))
                py0, py1 = sorted((_px(ya, cy - 0.5), _px(ya, cy + 0.5)))
                color, alpha = _colorscale(tr.get("colorscale"), (v - zmin) / ((zmax - zmin) or 1))
                if alpha < 0.02:
                    continue  # the page shows through: nothing to draw
                fade = f' fill-opacity="{alpha:.2f}"' if alpha < 0.99 else ""
                out.append(f'<rect x="{px0 + gx:.1f}" y="{py0 + gy:.1f}" width="{max(0, px1 - px0 - 2 * gx):.1f}" '
                           f'height="{max(0, py1 - py0 - 2 * gy):.1f}" fill="{color}"{fade}/>')
        return out
    if kind == "bar":
        horizontal = tr.get("orientation") == "h"
        cats = tr.get("y" if horizontal else "x") or []
        vals = tr.get("x" if horizontal else "y") or []
        colors = marker.get("color", "#2f6fde")
        texts = tr.get("text") or []
        for k, (c, v) in enumerate(zip(cats, vals)):
            color = colors[k] if isinstance(colors, list) else colors
            ca, va = (ya, xa) if horizontal else (xa, ya)
            c0, c1 = sorted((_px(ca, ca.pos(c) - 0.4), _px(ca, ca.pos(c) + 0.4)))
            v0, v1 = sorted((va.px(0), va.px(v)))
            if horizontal:
                out.append(f'<rect x="{v0:.1f}" y="{c0:.1f}" width="{v1 - v0:.1f}" height="{c1 - c0:.1f}" fill="{_paint(color)}"/>')
                if k < len(texts):
                    out.append(f'<text x="{v1 + 4:.1f}" y="{(c0 + c1) / 2 + 4:.1f}">{_esc(texts[k])}</text>')
            else:
                out.append(f'<rect x="{c0:.1f}" y="{v0:.1f}" width="{c1 - c0:.1f}" height="{v1 - v0:.1f}" fill="{_paint(color)}"/>')
                if k < len(texts):
                    out.append(f'<text x="{(c0 + c1) / 2:.1f}" y="{v0 - 4:.1f}" text-anchor="middle">{_esc(texts[k])}</text>')
        return out
    pts = _points(tr.get("x") or [], tr.get("y") or [], xa, ya)
    mode = tr.get("mode", "lines+markers")
    color = line.get("color") or (marker.get("color") if isinstance(marker.get("color"), str) else "#2f6fde")
    if pts and pts[-1][0] == len(pts) - 1:  # no point left out: one run
        runs = [list(pts)]
    else:  # plotly breaks a line where a value is None
        runs = [[]]
        for i, (k, x, y) in enumerate(pts):
            if i and k != pts[i - 1][0] + 1:
                runs.append([])
            runs[-1].append((k, x, y))
    heads = []  # plotly's "arrow" marker: a head of length 0.951 and half-width 0.309 marker sizes
    if "markers" in mode and marker.get("symbol") == "arrow" and marker.get("angleref") == "previous":
        sizes = marker.get("size", 6)
        for run in runs:
            for i in range(1, len(run)):
                (_, x0, y0), (k, x1, y1) = run[i - 1], run[i]
                size = sizes[k] if isinstance(sizes, list) else sizes
                length = math.hypot(x1 - x0, y1 - y0)
                if not size or not length:
                    continue
                ux, uy = (x1 - x0) / length, (y1 - y0) / length
                bx, by = x1 - 0.951 * size * ux, y1 - 0.951 * size * uy
                heads.append(f'<polygon fill="{_paint(color)}" opacity="{opacity}" points="{x1:.1f},{y1:.1f} '
                             f'{bx - 0.309 * size * uy:.1f},{by + 0.309 * size * ux:.1f} '
                             f'{bx + 0.309 * size * uy:.1f},{by - 0.309 * size * ux:.1f}"/>')
                back = min(0.9 * size, length)  # the line stops short of the tip, as plotly's does
                run[i] = (k, x1 - back * ux, y1 - back * uy)
    for run in (r for r in runs if "lines" in mode and len(r) > 1):
        dash = dasharray(line.get("dash", "solid"), line.get("width", 2))
        out.append(f'<polyline fill="none" stroke="{_paint(color)}" stroke-width="{line.get("width", 2)}" opacity="{opacity}"'
                   + (f' stroke-dasharray="{dash}"' if dash else "")
                   + ' points="' + _polyline(run) + '"/>')
    colors = marker.get("color", color)
    values = [c for c in colors if isinstance(c, (int, float))] if isinstance(colors, list) else []
    cmin, cmax = marker.get("cmin", min(values, default=0)), marker.get("cmax", max(values, default=1))

    def colour_of(c):  # a colour, or a value coloured through the marker's colour scale
        return _colorscale(marker.get("colorscale"), (c - cmin) / ((cmax - cmin) or 1))[0] if isinstance(c, (int, float)) else c
    fills = [colour_of(c) for c in colors] if isinstance(colors, list) else None
    fill = (lambda k: fills[k]) if fills is not None else (lambda k: colour_of(colors))  # point k's colour, each found once
    out += heads
    if "markers" in mode and marker.get("symbol") != "arrow":
        sizes, ring = marker.get("size", 6), marker.get("line") or {}
        dots = [(k, x, y, sizes[k] if isinstance(sizes, list) else sizes) for k, x, y in pts]
        dots = [d for d in dots if d[3]]
        if len(dots) > 1 and not ring.get("color") and len({fill(k) for k, *_ in dots}) == 1 and len({d[3] for d in dots}) == 1:
            out.append(_dots(dots, fill(dots[0][0]), opacity))  # one size, one colour, no ring: one path
        else:
            for k, x, y, size in dots:
                stroke = f' stroke="{_paint(ring["color"])}" stroke-width="{ring.get("width", 1)}"' if ring.get("color") else ""
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size / 2:.1f}" fill="{_paint(fill(k))}" opacity="{opacity}"{stroke}/>')
    if tr.get("showlegend", True) and tr.get("name"):  # plotly's legend shows the first point's colour
        swatch = fill(0) if isinstance(colors, list) and colors and not line.get("color") else color
        legend.append((tr["name"], swatch, mode, line.get("dash"), line.get("width", 2), opacity))
    return out


def _polyline(run) -> str:
    """A line's points as SVG writes them, ``x,y`` to one decimal: one format of the whole run.

    >>> _polyline([(0, 1.0, 2.25), (1, -0.04, 3.0)])
    '1.0,2.2 -0.0,3.0'
    """
    return ("%.1f,%.1f " * len(run))[:-1] % tuple(v for _, x, y in run for v in (x, y))


def _dots(dots, color, opacity) -> str:
    """Markers of one size and colour as one path: each a zero-length stroke whose round caps draw a
    disc of the marker's size. Why: a scatter of hundreds of points as ``<circle>`` elements was
    most of a long article's markup (2,946 circles, three drawings of each figure), parsed and laid
    out before the page could answer a reader on a phone (issue 32); a dot here is about 14 bytes
    and no element. Overlapping markers of the trace are composited once, as plotly's trace
    opacity does.

    >>> _dots([(0, 1.0, 2.0, 6), (1, 3.5, 4.0, 6)], "#2f6fde", 0.8)
    '<path class="markers" fill="none" stroke="#2f6fde" stroke-width="6" stroke-linecap="round" opacity="0.8" d="M1 2h0M3.5 4h0"/>'
    """
    d = "".join(f"M{x:.1f} {y:.1f}h0".replace(".0 ", " ").replace(".0h", "h") for _, x, y, _ in dots)
    return (f'<path class="markers" fill="none" stroke="{_paint(color)}" stroke-width="{dots[0][3]:g}" '
            f'stroke-linecap="round" opacity="{opacity}" d="{d}"/>')


def _heatmap_image(z, xs, ys, xa: "Axis", ya: "Axis", scale, zmin, zmax, png_level: int = 9) -> str | None:
    """A large heatmap on evenly spaced numeric axes as one embedded PNG (one pixel per cell,
    scaled without smoothing): a few bytes a cell instead of a ``<rect>`` element a cell.
    None when the heatmap is small or its cells do not form a regular grid."""
    rows, cols = len(z), len(z[0]) if z else 0
    if rows * cols <= 100 or any(len(r) != cols for r in z):
        return None
    try:
        px = [xa.pos(x) for x in xs[:cols]]
        py = [ya.pos(y) for y in ys[:rows]]
    except (TypeError, ValueError):
        return None
    if any(abs((b - a) - 1) > 1e-9 for a, b in zip(px, px[1:])) or any(abs((b - a) - 1) > 1e-9 for a, b in zip(py, py[1:])):
        return None  # not consecutive cells: draw rectangles instead
    left, right = sorted((_px(xa, px[0] - 0.5), _px(xa, px[-1] + 0.5)))
    top, bottom = sorted((_px(ya, py[0] - 0.5), _px(ya, py[-1] + 0.5)))
    flip_x = _px(xa, px[0]) > _px(xa, px[-1])
    flip_y = _px(ya, py[0]) > _px(ya, py[-1])  # row 0 drawn lowest: write it last
    cells = _cell_pixels(z, scale, zmin, zmax)[::-1 if flip_y else 1, ::-1 if flip_x else 1]
    pixels = [row.tobytes() for row in cells]
    data = base64.b64encode(_png(pixels, cols, rows, png_level)).decode("ascii")
    return (f'<image x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" height="{bottom - top:.1f}" '
            f'preserveAspectRatio="none" style="image-rendering:pixelated" href="data:image/png;base64,{data}"/>')


def _cell_pixels(z, scale, zmin, zmax) -> np.ndarray:
    """RGBA bytes ``[rows, cols, 4]`` of a heatmap's cells on its colour scale, all cells at once (a
    cell at a time was most of a heatmap figure's drawing time), with the arithmetic of
    ``scale_colour`` cell by cell; a missing cell (None) is transparent.

    >>> _cell_pixels([[0, 1, None]], [[0, "#000000"], [1, "#ffffff"]], 0, 2).tolist()
    [[[0, 0, 0, 255], [128, 128, 128, 255], [0, 0, 0, 0]]]
    """
    if not isinstance(scale, list) or not scale:
        scale = [[0, "#f7fbff"], [1, "#08306b"]]
    v = np.array(z, dtype=float)  # a None is nan (numpy's own rule for a float array: no loop over cells here)
    t = np.clip((v - zmin) / ((zmax - zmin) or 1), 0.0, 1.0)
    colours = np.array([rgba(c) for _, c in scale], dtype=float)
    if len(scale) == 2 and scale[0][0] == 0 and scale[1][0] == 1 and not np.isnan(t).any():
        # one segment from 0 to 1 and every cell there (most heatmaps): the same arithmetic in half
        # the array operations, which is what a heatmap costs in Pyodide (eight of them a move)
        out = colours[0] + t[..., None] * (colours[1] - colours[0])
        out[..., 3] *= 255
        return np.round(out).astype(np.uint8)
    out = np.broadcast_to(colours[-1], t.shape + (4,)).copy()  # past the last stop
    done = np.isnan(t)
    for (a, b), low, high in zip(zip([s for s, _ in scale], [s for s, _ in scale[1:]]), colours, colours[1:]):
        here = ~done & (a <= t) & (t <= b)  # the first segment that holds t, as scale_colour
        u = (t[here] - a) / ((b - a) or 1)
        out[here] = low + u[:, None] * (high - low)
        done |= here
    pixels = np.concatenate([np.round(out[..., :3]), np.round(255 * out[..., 3:])], axis=-1).astype(np.uint8)
    pixels[np.isnan(v)] = 0
    return pixels


def _png(rows: list[bytes], width: int, height: int, level: int = 9) -> bytes:
    """An RGBA PNG from ``height`` rows of ``4 * width`` bytes (no filter, deflated at zlib's ``level``)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    raw = zlib.compress(b"".join(b"\0" + row for row in rows), level)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


def _decorations(layout: dict, axes: dict, box: tuple, width: int, m: dict, legend: list) -> tuple[list[str], float]:
    """Shapes, annotations, the title and the legend, drawn over the traces; and
    the lowest pixel the legend reaches."""
    x_lo, x_hi, y_lo, y_hi = box
    out, bottom = [], 0.0
    def coord(ref: str, v, vertical: bool):
        """Pixel of ``v`` in reference ``ref``: the plot area ("paper"), an axis's domain ("y2 domain":
        0 to 1 along that panel alone) or an axis's data."""
        if ref.endswith(" domain"):
            a = axes[("yaxis" if vertical else "xaxis") + ref.split(" ")[0][1:]]
            return a.p1 - v * (a.p1 - a.p0) if vertical else a.p0 + v * (a.p1 - a.p0)
        if ref == "paper":
            return y_hi - v * (y_hi - y_lo) if vertical else x_lo + v * (x_hi - x_lo)
        return axes[("yaxis" if vertical else "xaxis") + ref[1:]].px(v)

    for shape in layout.get("shapes", []):
        try:
            x0, x1 = sorted((coord(shape.get("xref", "x"), shape["x0"], False), coord(shape.get("xref", "x"), shape["x1"], False)))
            y0, y1 = sorted((coord(shape.get("yref", "y"), shape["y0"], True), coord(shape.get("yref", "y"), shape["y1"], True)))
        except (KeyError, ValueError, TypeError):
            continue
        ln = shape.get("line", {})
        stroke = f'stroke="{_paint(ln["color"])}" stroke-width="{ln.get("width", 1)}"' if ln.get("color") and ln.get("width", 1) else 'stroke="none"'
        if shape.get("type", "rect") == "line":
            out.append(f'<line x1="{x0:.1f}" y1="{y0:.1f}" x2="{x1:.1f}" y2="{y1:.1f}" {stroke}/>')
        else:
            out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
                       f'fill="{shape.get("fillcolor", "none")}" opacity="{shape.get("opacity", 1)}" {stroke}/>')

    for note in layout.get("annotations", []):
        try:
            x = coord(note.get("xref", "x"), note.get("x", 0) if note.get("xref") == "paper" else note["x"], False)
            y = coord(note.get("yref", "y"), note.get("y", 0) if note.get("yref") == "paper" else note["y"], True)
        except (KeyError, ValueError, TypeError):
            continue  # an annotation on an axis or category we did not draw
        x, y = x + note.get("xshift", 0), y - note.get("yshift", 0)
        font = note.get("font") or {}
        fill = f' style="fill:{font["color"]}"' if font.get("color") else ""
        if note.get("showarrow"):
            tx, ty = x + note.get("ax", -10), y + note.get("ay", -30)
            out.append(f'<line class="zero" x1="{x:.1f}" y1="{y:.1f}" x2="{tx:.1f}" y2="{ty:.1f}"/>')
            x, y = tx, ty
        anchor = {"left": "start", "right": "end"}.get(note.get("xanchor"), "middle")
        dy = {"bottom": -4, "top": 12}.get(note.get("yanchor"), 4)
        size = font.get("size", FONT)
        lines = re.split(r"<br\s*/?>", str(note.get("text", "")))
        step = round(1.3 * size, 1)  # plotly's line spacing; a note anchored at its bottom grows upwards
        y0 = y + dy - (step * (len(lines) - 1) if note.get("yanchor") == "bottom" else 0)
        body = _esc(lines[0]) if len(lines) == 1 else "".join(
            f'<tspan x="{x:.1f}" dy="{0 if i == 0 else step}">{_esc(line)}{" " if i < len(lines) - 1 else ""}</tspan>'
            for i, line in enumerate(lines))
        out.append(f'<text x="{x:.1f}" y="{y0:.1f}" text-anchor="{anchor}" font-size="{size}"{fill}>{body}</text>')

    title = layout.get("title", {})
    title = title.get("text") if isinstance(title, dict) else title
    if title:
        spec = layout["title"] if isinstance(layout.get("title"), dict) else {}
        height = layout.get("height", 360)
        top = (1 - spec["y"]) * height if spec.get("yref") == "container" and "y" in spec else min(22, m["t"] - 8) - 14
        lines = re.split(r"<br\s*/?>", str(title))
        body = _esc(lines[0]) if len(lines) == 1 else "".join(
            f'<tspan x="{width / 2:.1f}" dy="{0 if i == 0 else 18}">{_esc(line)}{" " if i < len(lines) - 1 else ""}</tspan>'
            for i, line in enumerate(lines))  # the space: its text reads as one line to a screen reader
        # plotly's first baseline: 0.7 em below the top for one line, at it for several (figure.fit._place_title)
        baseline = top + (14 if spec.get("yref") != "container" else 0.7 * 14 if len(lines) == 1 else 0)
        out.append(f'<text x="{width / 2:.1f}" y="{baseline:.1f}" text-anchor="middle" font-size="14">{body}</text>')

    if layout.get("showlegend", True) and legend:
        spec = layout.get("legend", {})
        rows, lx = [[]], x_lo  # lay the entries out in rows first: a legend above the plot grows upwards
        for entry in legend:
            w = 44 + (spec["entrywidth"] if spec.get("entrywidthmode") == "pixels" else 7 * len(entry[0]))
            if lx + w > width - 8 and rows[-1]:  # as figure.fit.fit counts the entries a row holds
                rows.append([])
                lx = x_lo
            rows[-1].append((lx, entry))
            lx += w
        if spec.get("yref") == "container":  # fit() places it: its top edge, in the whole drawing
            ly = (1 - spec.get("y", 1.0)) * layout.get("height", 360) + 15
        else:
            ly = y_hi - spec.get("y", 1.0) * (y_hi - y_lo)
            ly = ly - 8 - 18 * (len(rows) - 1) if spec.get("yanchor", "auto") == "bottom" else ly + 14
        for r, row in enumerate(rows):
            y = ly + (19 if spec.get("yref") == "container" else 18) * r  # plotly's rows, its swatch and text
            for x, (name, color, mode, dash, lw, alpha) in row:  # plotly's sample: the trace's width, dashes, opacity
                pattern = dasharray(dash, lw)
                swatch = (f'<line x1="{x + 5:.1f}" x2="{x + 35:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="{_paint(color)}" stroke-width="{lw:g}"'
                          + (f' stroke-dasharray="{pattern}"' if pattern else "") + "/>"
                          if "lines" in mode else f'<circle cx="{x + 20:.1f}" cy="{y:.1f}" r="4" fill="{_paint(color)}"'
                          + (f' opacity="{alpha:g}"' if alpha != 1 else "") + "/>")
                out.append(swatch + f'<text x="{x + 40:.1f}" y="{y + 4:.1f}">{_esc(name)}</text>')
                bottom = max(bottom, y + 12)
    return out, bottom


def _points(xs, ys, xa: Axis, ya: Axis) -> list[tuple[int, float, float]]:
    """A scatter trace's points as ``(index, x pixel, y pixel)``, those with a None left out.
    Why: a line of a few hundred numbers is mapped with numpy in one pass, the same arithmetic as
    ``_px`` value by value (so the same pixels), instead of two method calls a point; any other
    trace (categories, gaps, NaN) takes the point-by-point way.

    >>> a = Axis("xaxis", {"range": [0, 10]}, 0.0, 100.0, vertical=False); a.finish()
    >>> _points([0, 5, None], [1, 2, 3], a, a)
    [(0, 0.0, 10.0), (1, 50.0, 20.0)]
    """
    n = min(len(xs), len(ys))
    x, y = _numbers(xs[:n]), _numbers(ys[:n])
    if x is None or y is None or np.isnan(x).any() or np.isnan(y).any():
        return [(k, xa.px(u), ya.px(v)) for k, (u, v) in enumerate(zip(xs, ys)) if u is not None and v is not None]
    return list(zip(range(n), _pixels(xa, x).tolist(), _pixels(ya, y).tolist()))


def _numbers(values) -> np.ndarray | None:
    """``values`` as a float array if they are all numbers (a list of ints, floats or bools), else
    None: a category, a None for a gap, a nested list are each taken value by value."""
    array = np.asarray(values)
    return array.astype(float) if array.ndim == 1 and array.dtype.kind in "biuf" else None


def _pixels(axis: Axis, v: np.ndarray) -> np.ndarray:
    """``_px`` of every value in ``v``, element by element the same float operations."""
    lo, hi = axis.range
    t = (v - lo) / ((hi - lo) or 1)
    return axis.p1 - t * (axis.p1 - axis.p0) if axis.vertical else axis.p0 + t * (axis.p1 - axis.p0)


def _px(axis: Axis, v: float) -> float:
    """Pixel of a numeric position (category index or number) on ``axis``."""
    lo, hi = axis.range
    t = (float(v) - lo) / ((hi - lo) or 1)
    return axis.p1 - t * (axis.p1 - axis.p0) if axis.vertical else axis.p0 + t * (axis.p1 - axis.p0)
