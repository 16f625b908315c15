"""The drawing widths, one table (``site/py/src/headspace_site/figure/widths.json``) read three ways:
Python lays figures out for its widths (``headspace_site.figure.widths``, ``fit``), the page draws at
the widest its plot box holds (``site/assets/js/figure/widths.js``), and the build's CSS shows the
build's drawing of that width (``widths.css``, inlined by ``head.html``). Here the three agree: the
page's lookup is Python's for every box, the CSS shows Python's width at every viewport on every
kind of page, and the table's page geometry is the stylesheet's. tests/browser/test_static_figures.py
checks the same in a browser, at each viewport where the drawing changes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from headspace_site.figure import fit, widths

ROOT = Path(__file__).resolve().parents[2]
ROOMS = [r / 2 for r in range(0, 3201)]  # plot boxes 0 to 1600 px, every half pixel
VIEWPORTS = range(280, 1801)


def test_the_page_draws_at_pythons_width_for_every_plot_box():
    node = shutil.which("node")
    assert node, "node (Node 20, which the build needs) is not on PATH"
    script = ("import { drawingWidth } from './site/assets/js/figure/widths.js';"
              "import { readFileSync } from 'node:fs';"
              "console.log(JSON.stringify(JSON.parse(readFileSync(0, 'utf8')).map(drawingWidth)));")
    got = subprocess.run([node, "--import", "./tests/js/register.mjs", "--input-type=module", "-e", script],
                         input=json.dumps(ROOMS), capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert json.loads(got) == [widths.drawing_width(r) for r in ROOMS]


def test_fit_lays_out_at_the_tables_widths():
    assert fit.WIDTHS == tuple(widths.TABLE["widths"]) and fit.STACK_BELOW == widths.TABLE["stack_below"]
    assert fit.drawing_width is widths.drawing_width


def shown_by_css(text: str, page: str, viewport_px: float) -> set[int]:
    """The widths of the build's drawings the CSS ``text`` displays on a ``page`` of the table at a
    viewport: the cascade played by hand. A rule's selectors apply where its scope is the page's or
    empty (an article's rules reach every page); a scoped rule outranks an unscoped one, and among
    equals the later one wins."""
    scope = widths.TABLE["plot_box"][page]["scope"]
    state = {w: (None, -1) for w in widths.WIDTHS}  # width -> (shown?, rank)
    for line in text.splitlines():
        media = re.match(r"@media \(min-width:([\d.]+)rem\)\{(.*)\}$", line)
        if media and viewport_px < float(media[1]) * widths.REM:
            continue
        for sel, decl in re.findall(r"([^{}]+)\{display:(\w+)\}", media[2] if media else line):
            *where, what = sel.split(" ")
            where = " ".join(where)
            if where not in ("", scope):
                continue
            rank = 1 if where else 0
            shown = decl == "block"
            targets = [int(what.split(".w")[1])] if ".w" in what else list(widths.WIDTHS)
            assert what in (".static-figure:not(.live)", *(f".static-figure.w{w}" for w in widths.WIDTHS)), sel
            for w in targets:
                if rank >= state[w][1]:
                    state[w] = (shown, rank)
    return {w for w, (shown, _) in state.items() if shown}


@pytest.mark.parametrize("page", widths.PAGES)
def test_the_css_shows_the_drawing_of_pythons_width(page):
    text = widths.css()
    wrong = [(v, shown_by_css(text, page, v), widths.drawing_width(widths.plot_box(page, v))) for v in VIEWPORTS
             if shown_by_css(text, page, v) != {widths.drawing_width(widths.plot_box(page, v))}]
    assert not wrong, f"{page}: (viewport, CSS shows, Python draws) {wrong[:5]}"


def test_the_tables_geometry_is_the_stylesheets():
    """The plot box the table describes is the one main.css lays out: main's column (--measure) and
    padding; an article's figure reaches 1 rem past that padding with 1 rem of its own, from 64 rem
    --wide across, and on a phone (to 40 rem) spans the screen with 0.75 rem; a gallery's figure keeps
    the column; an embed page's main has no padding."""
    css = (ROOT / "site" / "assets" / "css" / "main.css").read_text()
    rem = lambda name: float(re.search(rf"{name}: ([\d.]+)rem", css)[1])  # noqa: E731
    main_pad, figure_out, figure_pad, phone_pad = 1.1, 1, 1, 0.75
    assert re.search(r"\nmain \{[^}]*padding: 1rem 1\.1rem", css)
    assert "figure.demo { margin: 2rem -1rem; padding: 1rem;" in css
    assert re.search(r"@media \(min-width: 64rem\) \{ figure\.demo \{ margin-left: calc\(\(var\(--measure\) - var\(--wide\)\) / 2\)", css)
    assert re.search(r"@media \(max-width: 40rem\) \{[^@]*figure\.demo \{ margin: 1\.5rem -1\.1rem; border-radius: 0; padding: 0\.75rem; \}", css)
    assert ".gallery figure.demo { margin: 2rem 0; }" in css and "body.embed main { max-width: none; padding: 0; }" in css
    want = {
        "article": [(0, None, 2 * phone_pad), (40, rem("--measure"), 2 * (main_pad - figure_out + figure_pad)),
                    # from 64 rem the figure reaches (--wide - --measure) / 2 past the column on each side
                    (64, rem("--wide"), 2 * (main_pad + figure_pad))],
        "gallery": [(0, None, 2 * (main_pad + phone_pad)), (40, rem("--measure"), 2 * (main_pad + figure_pad))],
        "embed": [(0, None, 2 * phone_pad), (40, None, 2 * figure_pad)],
    }
    got = {page: [(p["from"], p["column"], p["less"]) for p in spec["pieces"]] for page, spec in widths.TABLE["plot_box"].items()}
    assert got == {page: [(f, c, pytest.approx(less)) for f, c, less in pieces] for page, pieces in want.items()}
