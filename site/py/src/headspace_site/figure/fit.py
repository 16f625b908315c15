"""A registry figure laid out for the width it is drawn at: one rule book for every figure.

Why: a figure drawn 840 px wide and the same figure on a 360 px phone need different layouts
(two panels side by side or stacked, six ticks or three, a title on one line or two, values in
heatmap cells only where they fit). Demos describe what to draw; ``fit`` decides where it goes,
once, for every demo. The engine (``svg.py``, for the build and for Python in the browser alike)
and plotly under a reader's pointer both draw the fitted figure at the same width, with the same
explicit ranges, ticks, margins and legend, so the drawing plotly makes for hover values is the
one it replaces.

Text widths are estimated (``CHAR`` font sizes per character, a little wide for system-ui), so the
layout leaves room rather than measuring; the browser test tests/browser/test_readable.py
checks the result with the real fonts: no overlapping text, nothing outside the figure.

>>> from headspace_site.figure.style import figure, scatter
>>> fig = fit(figure([scatter([0, 1], [0, 2], name="line")], title="a title"), 330)
>>> fig["layout"]["width"], fig["layout"]["xaxis"]["range"], fig["layout"]["yaxis"]["tickvals"][:3]
(330, [-0.05, 1.05], [0.0, 0.25, 0.5])
"""

from __future__ import annotations

import functools
import math
import re

from .colour import ink_on, scale_colour
# The drawing widths, where panels stack, and which width a column draws at: one table (widths.json),
# read by the page and the build's CSS too.
from .widths import STACK_BELOW, WIDTHS, drawing_width
CHAR = 0.56  # an average character's width, in font sizes (system-ui runs 0.48 to 0.55)
FONT, TITLE_FONT = 12, 14
LEGEND_ROW, LEGEND_SYMBOL = 20, 44  # plotly: an entry's row height, its symbol and gap before the text
TITLE_LINE = 18
NOTE_LINE = 16  # a line of a 12 px annotation
X_TITLE = 50  # plotly sets an x axis title's baseline about 43 px below the axis: with descenders, 50
CATEGORY_ROW = 16  # the height a category's 12 px tick label needs
TITLE_CAP = 10  # plotly's CAP_SHIFT, 0.7 em of the title's 14 px: a line's cap height above its baseline


def plain(text) -> str:
    """Text as drawn: line breaks kept as newlines, other markup dropped."""
    text = str(text or "")
    if "<" not in text:  # most labels: no markup, no regular expressions (text_px runs per label per move)
        return text
    return re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", "\n", text))


#: Widths of a 12 px font's glyphs in system-ui (Debian's DejaVu Sans is wide), by kind: digits
#: 7.6 px, narrow punctuation 3.8, capitals 8, anything else 6.6.
_GLYPH = {**dict.fromkeys("0123456789", 7.6), **dict.fromkeys(".,:;'|!il", 3.8), "−": 10.0, "-": 4.3, " ": 3.8}


def text_px(text, size: float = FONT) -> float:
    """Estimated width of ``text`` (its longest line) at font ``size``: near what plotly measures,
    so that the build puts titles where plotly does and hides the tick labels plotly hides.

    >>> round(text_px("3000")), round(text_px("frobenius"))
    (30, 57)
    """
    return _text_px(str(text or ""), size)


@functools.lru_cache(maxsize=4096)
def _text_px(text: str, size: float) -> float:
    """Cached: ``fit`` measures the same labels (ticks, titles, legend entries) on every slider move."""
    return max((sum(_GLYPH.get(ch, 8.0 if ch.isupper() else 6.6) for ch in line)
                for line in plain(text).split("\n")), default=0) * size / 12


def _roomy(label: str) -> str:
    """``label`` with room for any number it shows: each number written with a sign and at least
    three digits before its point. A legend entry that prints a control's value ("polariser axis
    θ = 5°") then keeps its width as the value moves, so the legend stays put while a reader drags
    and the page can draw the move in place.

    >>> _roomy("axis θ = 5°"), _roomy("|W| = 1.02"), _roomy("step 3000")
    ('axis θ = -000°', '|W| = -000.00', 'step -0000')
    """
    return re.sub(r"-?(\d+)(\.\d+)?", lambda m: "-" + "0" * max(3, len(m[1])) + ("." + "0" * (len(m[2]) - 1) if m[2] else ""), label)


def wrap(text: str, room: float, size: float = TITLE_FONT) -> str:
    """``text`` broken with <br> so that no line is wider than ``room`` px (words are never split).

    >>> wrap("one two three four", 60, 10)
    'one two<br>three four'
    """
    if text_px(text, size) <= room or "<br" in text:
        return text
    lines, line = [], ""
    for word in text.split(" "):
        trial = f"{line} {word}".strip()
        if line and text_px(trial, size) > room:
            lines.append(line)
            line = word
        else:
            line = trial
    return "<br>".join(lines + [line])


def _title_text(spec) -> str:
    if isinstance(spec, dict):
        return spec.get("text") or ""
    return spec or ""


def nice_ticks(lo: float, hi: float, target: int, whole: bool = False) -> list[float]:
    """Round tick values covering [lo, hi], about ``target`` of them (1, 2 or 5 times a power of ten);
    ``whole``: whole numbers only (the rows and columns of a heatmap: there is no token 2.5).

    >>> nice_ticks(-1.05, 1.05, 5), nice_ticks(-1.05, 1.05, 2), nice_ticks(-0.5, 31.5, 7, whole=True)[:3]
    ([-1.0, -0.5, 0.0, 0.5, 1.0], [-1.0, 0.0, 1.0], [0.0, 5.0, 10.0])
    """
    lo, hi = min(lo, hi), max(lo, hi)
    span = hi - lo
    if span <= 0 or not math.isfinite(span):
        return [lo]
    mag = 10 ** math.floor(math.log10(span / max(1, target)))
    steps = [m * mag for m in (1, 2, 2.5, 5, 10, 20)]
    if whole:
        steps = [st for st in steps if st >= 1 and abs(st - round(st)) < 1e-9] or [1.0]
    firsts = [math.ceil(lo / st - 1e-9) * st for st in steps]
    counts = [int((hi - first) / st + 1e-9) + 1 for st, first in zip(steps, firsts)]
    # Only the chosen option's ticks are made (a fine step over a wide span has a hundred).
    best = min((i for i, n in enumerate(counts) if n >= 2), key=lambda i: (abs(counts[i] - target), -counts[i]),
               default=0)
    return [round(firsts[best] + i * steps[best], 12) + 0.0 for i in range(counts[best])]


def tick_label(v: float) -> str:
    """A tick's text as plotly prints it: shortest form, a true minus sign."""
    return f"{v:.6g}".replace("-", "\u2212")


def widest_tick_px(lo: float, hi: float, whole: bool = False) -> float:
    """The width of the widest tick label on [lo, hi] at any tick count ``fit`` may choose (2 to
    12): the room an axis's labels take before their count is known.

    >>> widest_tick_px(-1.05, 1.05), tick_label(-0.75)  # among 2 to 12 ticks, one count steps by 0.25
    (36.6, '−0.75')
    """
    if lo == hi:  # one label, lo itself: kept out of the cache, which holds -0.0 ("−0") and 0.0 as one
        return text_px(tick_label(lo))
    return _widest_tick_px(lo, hi, whole)


@functools.lru_cache(maxsize=256)
def _widest_tick_px(lo: float, hi: float, whole: bool) -> float:
    """Cached: every slider move lays out the figure again, and most axes keep their range."""
    return max((text_px(tick_label(v)) for n in range(2, 13) for v in nice_ticks(lo, hi, n, whole)), default=0)


class _Axis:
    """One axis of the figure: the values drawn on it, whether it is categorical, its range."""

    def __init__(self, name: str, spec: dict):
        self.name, self.spec = name, spec
        self.vertical = name.startswith("y")
        self.categories: list = []
        self.values: list[float] = []
        self.heat = False
        self.whole = True  # every position drawn is a whole number

    def add(self, values, pad: float = 0.0):
        """Note positions drawn on this axis (strings are categories, at their index); only the
        extremes are kept, since this runs on every slider move over every point."""
        values = list(values or [])
        first = next((v for v in values if v is not None), None)
        if "range" in self.spec and not self.heat and not isinstance(first, str):
            return  # the demo fixed the range: its numbers decide nothing here
        for k, v in enumerate(values):
            if isinstance(v, str):
                if v not in self.categories:
                    self.categories.append(v)
                values[k] = self.categories.index(v)
        nums = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
        if nums:
            self.values += [min(nums) - pad, max(nums) + pad]
            self.whole = self.whole and all(v.is_integer() for v in nums)

    def range(self) -> list[float]:
        """The range plotly's autorange would choose, near enough: 5 % padding around lines and
        points, none around cells and bars (they pad by half a cell already)."""
        if "range" in self.spec:
            return list(self.spec["range"])
        if self.values:
            lo, hi = min(self.values), max(self.values)
            if not (self.categories or self.heat):
                pad = 0.05 * (hi - lo or 1)
                lo, hi = lo - pad, hi + pad
        else:
            lo, hi = -1.0, 1.0
        lo, hi = round(lo, 9) + 0.0, round(hi, 9) + 0.0
        return [hi, lo] if self.spec.get("autorange") == "reversed" else [lo, hi]


def _axes(layout: dict, data: list) -> dict[str, _Axis]:
    axes: dict[str, _Axis] = {}

    def axis(ref: str, vertical: bool) -> _Axis:
        key = ("yaxis" if vertical else "xaxis") + ref[1:]
        if key not in axes:
            axes[key] = _Axis(key, layout.setdefault(key, {}))
        return axes[key]

    for tr in data:
        xa, ya = axis(tr.get("xaxis", "x"), False), axis(tr.get("yaxis", "y"), True)
        kind = tr.get("type", "scatter")
        if kind == "heatmap":
            z = tr.get("z") or [[]]
            xa.heat = ya.heat = True
            xa.add(tr.get("x") or list(range(len(z[0]) if z else 0)), 0.5)
            ya.add(tr.get("y") or list(range(len(z))), 0.5)
        elif kind == "bar":
            horizontal = tr.get("orientation") == "h"
            cat, val = (ya, xa) if horizontal else (xa, ya)
            cat.add(tr.get("y" if horizontal else "x"), 0.5)
            val.add(list(tr.get("x" if horizontal else "y") or []) + [0])
        else:
            xa.add(tr.get("x"))
            ya.add(tr.get("y"))
    for key in [k for k in layout if re.fullmatch(r"[xy]axis\d*", k)]:
        axis(("y" if key[0] == "y" else "x") + key[5:], key[0] == "y")
    return axes


def _colorbar_px(trace: dict, width: int) -> int:
    """The right margin a heatmap's colour bar needs (plotly's default place: 2 % of the plot's
    width and 10 px right of it, ``thickness`` wide, its labels 3 px beyond, its title above the
    bar from its left edge), at most 90 px (what every bar had before its labels were measured).

    >>> _colorbar_px({"colorbar": {"thickness": 12, "ticktext": ["−1", "0", "1"], "title": {"text": "÷ scale"}}}, 330)
    90
    """
    bar = trace.get("colorbar") or {}
    title = bar.get("title")
    title = title.get("text", "") if isinstance(title, dict) else title or ""
    # labels as wide as "−000.00" at least: a move that changes the data's range (another model, a
    # step) keeps the margin, so the page can redraw the figure in place
    labels = [*(bar.get("ticktext") or []), "−000.00"]
    offset = 0.02 * width + 10
    widest = max((text_px(line, TITLE_FONT) for line in re.split(r"<br\s*/?>", title)), default=0.0)
    need = max(offset + bar.get("thickness", 30) + 3 + max(map(text_px, labels)), offset + widest)
    return min(90, math.ceil(need + 6))


#: The px a colour bar's title may take on any width: from the bar's left edge (2 % of the plot plus
#: 10 px right of it) to the drawing's edge, within the 90 px right margin, at 840 px (the widest).
COLORBAR_TITLE_ROOM = 64


def readable_colorbars(figure: dict) -> dict:
    """Every titled colour bar of ``figure``, made to read on every screen (issue 49), in place: a
    title wider than ``COLORBAR_TITLE_ROOM`` wraps (plotly would push it over the plot, the build's
    drawing would cut it), and the tick labels sit just below their ticks, so the top one clears the
    title instead of touching it (plotly centres them on the tick). Trace data is one for every
    width, so this is done once per figure (``Demo.run``), not per layout.

    >>> fig = {"data": [{"type": "heatmap", "colorbar": {"title": {"text": "Δ loss (nats)"}}}]}
    >>> readable_colorbars(fig)["data"][0]["colorbar"]
    {'title': {'text': 'Δ loss<br>(nats)'}, 'ticklabelposition': 'outside bottom'}
    """
    for tr in figure.get("data", []):
        bar = tr.get("colorbar") if tr.get("type") == "heatmap" else None
        title = bar.get("title") if bar else None
        text = title.get("text", "") if isinstance(title, dict) else title or ""
        if text:
            bar["title"] = {**(title if isinstance(title, dict) else {}),
                            "text": wrap(text, COLORBAR_TITLE_ROOM, TITLE_FONT)}
            bar["ticklabelposition"] = "outside bottom"
    return figure


def _domain(spec: dict) -> list[float]:
    return list(spec.get("domain", [0.0, 1.0]))


def _side_by_side(layout: dict, axes: dict) -> bool:
    """Exactly two panels, next to each other, sharing the full height."""
    xs = [a for a in axes.values() if not a.vertical]
    ys = [a for a in axes.values() if a.vertical]
    if len(xs) != 2 or len(ys) != 2:
        return False
    (a, b) = sorted(xs, key=lambda a: _domain(a.spec)[0])
    return _domain(a.spec)[1] <= _domain(b.spec)[0] and all(_domain(y.spec) == [0.0, 1.0] or _domain(y.spec) == [0, 1] for y in ys)


#: The height of a stacked strip panel (px): a row of points on one line, with no y scale.
STRIP = 72


def _strip(y_spec: dict) -> bool:
    """A panel that is one line of points: its y axis has no labels, no title and no grid (the 1-D
    side of the projection figures). Stacked, it needs a strip, not a square."""
    return not y_spec.get("showticklabels", True) and not _title_text(y_spec.get("title")) \
        and not y_spec.get("showgrid", True)


def _stack(layout: dict, axes: dict, gap_px: float, panel_px: float) -> float:
    """Put the right panel under the left one; returns the new plot-area height."""
    left_x, right_x = sorted((a for a in axes.values() if not a.vertical), key=lambda a: _domain(a.spec)[0])
    olds = {"left": _domain(left_x.spec), "right": _domain(right_x.spec)}
    upper_px, lower_px = (STRIP if _strip(layout.get("yaxis" + x.spec.get("anchor", "y")[1:], {})) else panel_px
                          for x in (left_x, right_x))
    total = upper_px + lower_px + gap_px
    top = [round((lower_px + gap_px) / total, 4), 1.0]
    bottom = [0.0, round(lower_px / total, 4)]
    yname = {x.name: "yaxis" + (x.spec.get("anchor", "y")[1:]) for x in (left_x, right_x)}
    for x, ydom in ((left_x, top), (right_x, bottom)):
        x.spec["domain"] = [0.0, 1.0]
        layout.setdefault(yname[x.name], {})["domain"] = ydom
        layout[yname[x.name]]["anchor"] = "x" + x.name[5:]
        x.spec["anchor"] = "y" + yname[x.name][5:]

    def move(item, xkey="x", ykey="y"):
        if item.get("xref") != "paper" or item.get("yref") != "paper":
            return
        x = item.get(xkey, 0.5)
        side = "left" if x <= (olds["left"][1] + olds["right"][0]) / 2 else "right"
        d0, d1 = olds[side]
        item[xkey] = round((x - d0) / ((d1 - d0) or 1), 6)
        y0, y1 = top if side == "left" else bottom
        item[ykey] = round(y0 + item.get(ykey, 0) * (y1 - y0), 6)
    for note in layout.get("annotations", []):
        move(note)
    for shape in layout.get("shapes", []):
        for xk, yk in (("x0", "y0"), ("x1", "y1")):
            move(shape, xk, yk)
    return total


def _cells(data: list) -> dict:
    """(x axis, y axis) -> [(trace, x positions, y positions)] for every heatmap."""
    out: dict = {}
    for tr in data:
        if tr.get("type") == "heatmap":
            z = tr.get("z") or [[]]
            xs = tr.get("x") or list(range(len(z[0]) if z else 0))
            ys = tr.get("y") or list(range(len(z)))
            out.setdefault((tr.get("xaxis", "x"), tr.get("yaxis", "y")), []).append((tr, list(xs), list(ys)))
    return out


def _cell_notes(layout: dict, data: list, axes: dict, px: dict):
    """Values written in heatmap cells: coloured to read on their cell, dropped where they do not fit."""
    cells = _cells(data)
    cell_px, z_range = {}, {}  # a cell's width per x axis, the colour range per trace: once, not per note
    kept = []
    for note in layout.get("annotations", []):
        key = (note.get("xref", "x"), note.get("yref", "y"))
        hit = next(((tr, xs, ys) for tr, xs, ys in cells.get(key, []) if note.get("x") in xs and note.get("y") in ys), None)
        if hit is None:
            kept.append(note)
            continue
        tr, xs, ys = hit
        if key[0] not in cell_px:
            xa = axes["xaxis" + key[0][1:]]
            cell_px[key[0]] = px[xa.name] / max(1, abs(xa.range()[1] - xa.range()[0]))
        size = (note.get("font") or {}).get("size", FONT)
        if text_px(note.get("text", ""), size) > cell_px[key[0]] - 4:
            continue  # hover still gives the value
        z = tr["z"][ys.index(note["y"])][xs.index(note["x"])]
        if z is not None:
            if id(tr) not in z_range:
                flat = [v for row in tr["z"] for v in row if v is not None]
                z_range[id(tr)] = tr.get("zmin", min(flat)), tr.get("zmax", max(flat))
            lo, hi = z_range[id(tr)]
            colour = scale_colour(tr.get("colorscale"), (z - lo) / ((hi - lo) or 1))
            note["font"] = {**(note.get("font") or {}), "color": ink_on(colour)}
        kept.append(note)
    layout["annotations"] = kept


def _place_title(layout: dict) -> None:
    """The title's top edge 6 px below the top of the drawing. Plotly sets one line's first
    baseline ``CAP_SHIFT`` (0.7 em) below ``y`` when ``yanchor`` is top, but puts the first
    baseline of several lines at ``y`` itself, so they start lower by that much."""
    title = layout.get("title")
    if isinstance(title, dict) and title.get("yref") == "container":
        lines = str(title.get("text", "")).count("<br") + 1
        title["y"] = round(1 - (6 + (0 if lines == 1 else TITLE_CAP)) / layout["height"], 6)


def _copy(obj):
    """A copy of plain JSON data, as ``Demo.run`` returns it (dicts and lists of numbers, strings,
    None, no part shared): ``copy.deepcopy`` without its bookkeeping, 5 to 9 times faster on a
    figure's layout (fit copies one on every slider move).

    >>> layout = {"annotations": [{"x": 1, "font": {"size": 12}}]}
    >>> _copy(layout) == layout, _copy(layout)["annotations"][0]["font"] is layout["annotations"][0]["font"]
    (True, False)
    """
    if type(obj) is dict:
        return {k: _copy(v) for k, v in obj.items()}
    if type(obj) is list:
        return [_copy(v) for v in obj]
    return obj


def fit(figure: dict, width: int) -> dict:
    """``figure`` laid out to be drawn ``width`` px wide (a new dict; ``figure`` is unchanged).

    Every axis gets an explicit range and ticks spaced for its length; titles wrap; the
    legend sits between the title and the plot in rows sized to the width; two panels side by
    side stack below ``STACK_BELOW``; heatmap values stay in their cells only where they fit.
    """
    if not isinstance(width, (int, float)) or not 200 <= width <= 4000:
        raise ValueError(f"width: expected a drawing width in px between 200 and 4000, got {width!r}")
    width = int(width)
    layout = _copy(figure.get("layout", {}))
    data = [dict(tr) for tr in figure.get("data", [])]
    layout.update(width=width, autosize=False)
    margin = {"l": 44, "r": 10, "t": 30, "b": 40, **layout.get("margin", {})}
    axes = _axes(layout, data)
    xs = [a for a in axes.values() if not a.vertical]
    ys = [a for a in axes.values() if a.vertical]
    has_colorbar = any(tr.get("type") == "heatmap" and tr.get("showscale", True) for tr in data)
    bar_px = max((_colorbar_px(tr, width) for tr in data if tr.get("type") == "heatmap" and tr.get("showscale", True)),
                 default=10)

    def label_px(a: _Axis) -> float:
        """Room the tick labels of ``a`` take across it (width for a y axis, height for an x axis)."""
        if not a.spec.get("showticklabels", True):
            return 0.0
        if not a.vertical and a.spec.get("tickangle") not in (-90, 90):
            return FONT + 6  # labels side by side: one line high, however wide (not measured: a new
            # range, a token box's new sequence say, would measure every tick count's labels)
        labels = a.spec.get("ticktext") or a.categories
        widest = max(map(text_px, labels)) if labels else widest_tick_px(*a.range(), a.heat and a.whole)
        return widest + 8 if a.vertical else widest + 6

    def title_px(a: _Axis) -> float:
        return TITLE_LINE if _title_text(a.spec.get("title")) else 0.0

    # Panels: stack two side by side on a narrow drawing.
    stacked = width < STACK_BELOW and _side_by_side(layout, axes)
    if stacked:  # a panel that left its rows' or columns' names to its neighbour names them itself below it
        for a in axes.values():
            if not a.spec.get("showticklabels", True) and (a.categories or a.spec.get("ticktext")):
                a.spec["showticklabels"] = True
    # Panel titles (paper notes over a panel) wrap to their panel; each extra line needs room above.
    panel_titles = [n for n in layout.get("annotations", []) if n.get("yref") == "paper" and n.get("xref") == "paper"
                    and n.get("yanchor") == "bottom" and isinstance(n.get("text"), str)]
    for note in panel_titles:
        share = 1.0 if stacked else next((d[1] - d[0] for d in map(_domain, (a.spec for a in xs))
                                          if d[0] <= note.get("x", 0.5) <= d[1]), 1.0)
        note["text"] = wrap(note["text"], share * (width - 60 - bar_px), (note.get("font") or {}).get("size", FONT))
    notes_on_top = any(n.get("y", 0) >= 1 for n in panel_titles) or any(
        n.get("yref") == "paper" and n.get("xref") == "paper" and n.get("y", 0) >= 1 for n in layout.get("annotations", []))
    note_room = 26 + NOTE_LINE * max((n["text"].count("<br") for n in panel_titles), default=0)

    # Left and bottom margins: the decorations of the axes on those sides.
    lefts = ys if stacked else [a for a in ys if _domain(layout.get("xaxis" + a.spec.get("anchor", "x")[1:], {}))[0] <= 0.01] or ys
    margin["l"] = max(margin["l"] if not stacked else 0, max((label_px(a) + title_px(a) + 6 for a in lefts), default=20), 20)
    bottoms = [a for a in xs if _domain(layout.get("yaxis" + a.spec.get("anchor", "y")[1:], {}))[0] <= 0.01] or xs
    margin["b"] = max(24, max((max(label_px(a) + title_px(a) + 8, X_TITLE if title_px(a) else 0) for a in bottoms), default=24))
    margin["r"] = max(margin.get("r", 10), bar_px)
    # A side-by-side right panel's y labels live in the gap between the panels.
    if not stacked and _side_by_side(layout, axes):
        left_x, right_x = sorted(xs, key=lambda a: _domain(a.spec)[0])
        right_y = axes.get("yaxis" + right_x.spec.get("anchor", "y2")[1:])
        need = (label_px(right_y) + title_px(right_y) + 14) if right_y else 20
        plot_w = width - margin["l"] - margin["r"]
        gap = need / plot_w
        split = (_domain(left_x.spec)[1] + _domain(right_x.spec)[0]) / 2
        lo, hi = round(split - gap / 2, 4), round(split + gap / 2, 4)
        old_l, old_r = _domain(left_x.spec), _domain(right_x.spec)
        left_x.spec["domain"], right_x.spec["domain"] = [old_l[0], min(old_l[1], lo)], [max(old_r[0], hi), old_r[1]]
        for note in layout.get("annotations", []):  # panel titles stay centred over their panels
            if note.get("xref") == "paper" and note.get("yref") == "paper" and note.get("y", 0) >= 1:
                for old, new in ((old_l, left_x.spec["domain"]), (old_r, right_x.spec["domain"])):
                    if old[0] <= note.get("x", 0) <= old[1] and abs(note["x"] - (old[0] + old[1]) / 2) < 1e-6:
                        note["x"] = round((new[0] + new[1]) / 2, 6)

    # Title and legend, top down: title lines, legend rows, panel titles, then the plot.
    title = _title_text(layout.get("title"))
    top = 6.0
    if title:
        text = wrap(title, width - 20)
        lines = text.count("<br") + 1
        layout["title"] = {**(layout["title"] if isinstance(layout.get("title"), dict) else {}), "text": text,
                           "x": 0.5, "xanchor": "center", "y": round(1 - top / (layout.get("height", 360)), 6),
                           "yref": "container", "yanchor": "top", "font": {"size": TITLE_FONT}}
        top += lines * TITLE_LINE + 4
    entries = [tr.get("name") for tr in data if tr.get("showlegend", True) and tr.get("name")]
    rows = 0
    if layout.get("showlegend", True) and entries:
        entry = math.ceil(max(text_px(_roomy(n)) for n in entries) + LEGEND_SYMBOL)
        room = width - margin["l"] - 8
        per_row = max(1, int(room // entry))
        rows = math.ceil(len(entries) / per_row)
        layout["legend"] = {**layout.get("legend", {}), "orientation": "h", "entrywidth": entry - LEGEND_SYMBOL,
                            "entrywidthmode": "pixels", "xref": "paper", "x": 0, "xanchor": "left",
                            "yref": "container", "yanchor": "top", "y": None, "_top": top,
                            "bgcolor": "rgba(0,0,0,0)", "tracegroupgap": 0}
        top += rows * LEGEND_ROW + 2
    margin["t"] = math.ceil(top + (note_room if notes_on_top else 4))

    # Heights: keep each panel's height; stacked panels add a second panel and the gap between.
    height = layout.get("height", 360)
    panel_h = height - layout.get("margin", {}).get("t", 30) - layout.get("margin", {}).get("b", 40)
    panel_h = max(160, min(panel_h, width - margin["l"] - margin["r"]) if stacked else panel_h)
    rows_px = max((len(a.categories) * CATEGORY_ROW / (_domain(a.spec)[1] - _domain(a.spec)[0] or 1)
                   for a in ys if a.categories and not a.spec.get("tickvals") and a.spec.get("showticklabels", True)),
                  default=0)
    panel_h = max(panel_h, math.ceil(rows_px))  # every category label its own row
    if not stacked:  # a panel title between two rows of panels, wrapped on a phone: the gap holds it
        for note in panel_titles:  # and the tick labels of the panel above
            gaps = [d[0] - note["y"] for d in (_domain(a.spec) for a in ys) if d[0] > note.get("y", 1)]
            if note.get("y", 1) < 1 and gaps:
                need = FONT + 6 + NOTE_LINE * (note["text"].count("<br") + 1) + 4
                panel_h = max(panel_h, math.ceil(need / min(gaps)))
    if stacked:
        upper_x = sorted(xs, key=lambda a: _domain(a.spec)[0])[0]
        gap = label_px(upper_x) + title_px(upper_x) + (note_room + 12 if notes_on_top else 20)
        plot_h = _stack(layout, axes, gap, panel_h)
    else:
        plot_h = panel_h
    layout["height"] = height = math.ceil(margin["t"] + plot_h + margin["b"])
    if "legend" in layout and "_top" in layout["legend"]:
        layout["legend"]["y"] = round(1 - layout["legend"].pop("_top") / height, 6)
    _place_title(layout)
    layout["margin"] = {**margin, "autoexpand": False}

    # Ranges and ticks, now that every axis's length in pixels is known.
    plot_w = width - margin["l"] - margin["r"]
    px = {}
    for a in axes.values():
        d0, d1 = _domain(a.spec)
        px[a.name] = (d1 - d0) * (plot_h if a.vertical else plot_w)
    for a in axes.values():  # equal scales (scaleanchor): the looser axis is drawn shorter
        other = axes.get(("xaxis" if a.vertical else "yaxis") + a.spec.get("scaleanchor", "")[1:]) if a.spec.get("scaleanchor") else None
        if other is not None:
            per_unit = min(px[a.name] / abs(a.range()[1] - a.range()[0] or 1),
                           px[other.name] / abs(other.range()[1] - other.range()[0] or 1))
            for ax in (a, other):
                px[ax.name] = per_unit * abs(ax.range()[1] - ax.range()[0] or 1)
                ax.spec["constrain"] = "domain"  # plotly shrinks the looser axis, as the build draws it,
                # instead of widening its range (x ±5 became ±5.09)
    for a in axes.values():
        lo, hi = a.range()
        a.spec["range"] = [lo, hi]
        for key in ("autorange", "automargin"):  # the margins above already hold the labels
            a.spec.pop(key, None)
        if _title_text(a.spec.get("title")):  # the size the margins were measured for (plotly's default is 14)
            title = a.spec["title"] if isinstance(a.spec["title"], dict) else {"text": a.spec["title"]}
            title = {k: v for k, v in title.items() if k != "standoff"}  # plotly's default place, which the build draws
            a.spec["title"] = {**title, "font": {**(title.get("font") or {}), "size": FONT}}
        a.spec["tickfont"] = {**(a.spec.get("tickfont") or {}), "size": FONT}  # the size the margins hold
        labels = a.spec.get("ticktext") if a.spec.get("tickvals") else a.categories
        if a.categories:  # "1", "2" are categories here; plotly would read them as numbers
            a.spec["type"] = "category"
        if not a.vertical:  # fixed, or plotly turns labels it finds crowded and the drawing differs
            a.spec["tickangle"] = 0
        if labels and not a.vertical:  # labels that do not fit side by side turn on end
            cell = px[a.name] / max(1, len(labels))
            if max(text_px(c) for c in labels) > cell - 6:
                a.spec["tickangle"] = -90
        if a.categories and not a.spec.get("tickvals"):
            continue
        if a.spec.get("tickvals") or a.categories or not a.spec.get("showticklabels", True):
            continue
        whole = a.heat and a.whole
        labels = [tick_label(v) for v in nice_ticks(lo, hi, 5, whole)]
        spacing = (max(map(text_px, labels)) + 18) if not a.vertical else 34
        target = max(2, int(px[a.name] / spacing))
        ticks = nice_ticks(lo, hi, target, whole)
        while target > 2 and not a.vertical and len(ticks) > 1 and \
                px[a.name] * abs(ticks[1] - ticks[0]) / abs(hi - lo or 1) < max(text_px(tick_label(v)) for v in ticks) + 10:
            target -= 1  # nice_ticks may give more than asked; labels must not touch (plotly would turn them)
            ticks = nice_ticks(lo, hi, target, whole)
        a.spec["tickmode"], a.spec["tickvals"] = "array", ticks
        a.spec["ticktext"] = [tick_label(v) for v in ticks]
    for a in xs:  # plotly hides a label that would cross the drawing's edge; so does the build
        spec = a.spec
        if not spec.get("tickvals") or a.categories or spec.get("tickangle") in (-90, 90):
            continue
        (lo, hi), (d0, d1) = spec["range"], _domain(spec)
        texts = spec.get("ticktext") or [tick_label(v) for v in spec["tickvals"]]
        at = lambda v: margin["l"] + (d0 + (v - lo) / ((hi - lo) or 1) * (d1 - d0)) * plot_w
        y = axes.get("yaxis" + spec.get("anchor", "y")[1:])
        ylo = min(y.spec["range"]) if y is not None and "range" in y.spec else None
        corner = y is not None and y.spec.get("showticklabels", True) and any(  # a y label sits at the corner
            isinstance(v, (int, float)) and ylo is not None and abs(v - ylo) < 1e-9 for v in y.spec.get("tickvals") or [])
        left = margin["l"] + d0 * plot_w
        keep = [i for i, v in enumerate(spec["tickvals"])
                if isinstance(v, (int, float)) and 0 <= at(v) - text_px(texts[i]) / 2 and at(v) + text_px(texts[i]) / 2 <= width
                and not (corner and at(v) - text_px(texts[i]) / 2 < left - 1)]
        if len(keep) < len(spec["tickvals"]):
            spec["tickvals"] = [spec["tickvals"][i] for i in keep]
            spec["ticktext"] = [texts[i] for i in keep]
    if any(a.spec.get("tickangle") in (-90, 90) for a in bottoms):  # rotated labels need the room below
        layout["margin"]["b"] = math.ceil(max(label_px(a) + title_px(a) + 8 for a in bottoms))
        layout["height"] = math.ceil(margin["t"] + plot_h + layout["margin"]["b"])
        if "legend" in layout:
            layout["legend"]["y"] = round(1 - (1 - layout["legend"]["y"]) * height / layout["height"], 6)
        _place_title(layout)
    _cell_notes(layout, data, axes, px)
    return {"data": data, "layout": layout}
