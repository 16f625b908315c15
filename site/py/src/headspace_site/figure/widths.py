"""The widths a figure is drawn at and where each shows, from one table (``widths.json`` beside
this module).

Why: Python lays a figure out for a few drawing widths, the page draws at the widest that fits its
plot box, and the build's CSS shows the build's drawing of that width before any script runs. The
three read one table: ``fit`` takes ``WIDTHS`` and ``STACK_BELOW`` from here, Hugo mounts the same
file for the page (``figure/widths.js``), and ``css`` writes the media queries the page's
stylesheet holds (through ``site/data/contract.json``). Media queries, not container queries: the
HTML checker cannot read the latter, so the table says how each kind of page's plot box grows with
the viewport, and the queries are where it reaches each width.

>>> drawing_width(366), drawing_width(637), drawing_width(860), drawing_width(300)
(330, 600, 840, 330)
>>> shown_from("article"), shown_from("embed")
([(0, 330), (39, 600), (64, 840)], [(0, 330), (39, 600), (54.5, 840)])
"""

from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["TABLE", "WIDTHS", "STACK_BELOW", "PAGES", "drawing_width", "plot_box", "shown_from", "css"]

# Read beside this file, not through importlib.resources: the browser's trimmed standard library
# leaves out importlib.readers.
TABLE: dict = json.loads(Path(__file__).with_name("widths.json").read_text(encoding="utf-8"))
#: The widths a figure is drawn at (px).
WIDTHS: tuple[int, ...] = tuple(TABLE["widths"])
#: Below this drawing width, two panels side by side are stacked.
STACK_BELOW: int = TABLE["stack_below"]
#: The kinds of page a figure sits in, each with its plot box (``plot_box``).
PAGES: tuple[str, ...] = tuple(TABLE["plot_box"])
REM = 16  # px: media queries in rem are of the browser's initial font size


def drawing_width(px: float) -> int:
    """The width to draw at in a plot box ``px`` wide: the widest of ``WIDTHS`` that fits, else
    the narrowest (``figure/widths.js`` is the page's copy of this lookup, tested against it)."""
    return max([w for w in WIDTHS if w <= px], default=WIDTHS[0])


def plot_box(page: str, viewport_px: float) -> float:
    """The plot box's width (px) on a ``page`` of the table at a viewport ``viewport_px`` wide.

    >>> plot_box("article", 390), plot_box("article", 1280), plot_box("gallery", 1280)
    (366.0, 860.8, 604.8)
    """
    if page not in TABLE["plot_box"]:
        raise ValueError(f"page: expected one of {', '.join(PAGES)}, got {page!r}")
    rem = viewport_px / REM
    piece = [p for p in TABLE["plot_box"][page]["pieces"] if p["from"] <= rem][-1]
    column = rem if piece["column"] is None else min(rem, piece["column"])
    return round((column - piece["less"]) * REM, 6)


def shown_from(page: str) -> list[tuple[float, int]]:
    """Where the drawing a ``page`` shows changes: (viewport in rem, its width from there on),
    from a viewport of 0. A width starts to fit where a piece of the plot box starts or where its
    box reaches it; between those points the drawn width cannot change."""
    pieces = TABLE["plot_box"][page]["pieces"]
    points = sorted({p["from"] for p in pieces} | {math.ceil(round((w / REM + p["less"]) * 100, 6)) / 100
                                                   for p in pieces for w in WIDTHS})
    out: list[tuple[float, int]] = []
    for rem in points:
        width = drawing_width(plot_box(page, rem * REM))
        if not out or width != out[-1][1]:
            out.append((int(rem) if rem == int(rem) else rem, width))
    return out


def css() -> str:
    """The stylesheet's rules that show the build's drawing of each page's width (the page's
    stylesheet hides every ``.static-figure`` but Python's live one, ``svg.static-figure.live``).
    Each kind of page hides the others' drawing and shows its own from each of its ``shown_from``
    viewports on, the later rule winning; a scoped kind's selectors outrank an article's.

    >>> css().splitlines()[0]
    '.static-figure:not(.live){display:none}.static-figure.w330{display:block}'
    """
    lines = []
    for page in PAGES:
        scope = TABLE["plot_box"][page]["scope"]
        scope = f"{scope} " if scope else ""
        for rem, width in shown_from(page):
            rule = f"{scope}.static-figure:not(.live){{display:none}}{scope}.static-figure.w{width}{{display:block}}"
            lines.append(rule if rem == 0 else f"@media (min-width:{rem}rem){{{rule}}}")
    return "\n".join(lines)
