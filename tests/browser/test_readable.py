"""Every figure reads well at 390, 768 and 1280 px in both colour schemes, as the build drew it
and as plotly draws it once live: no two texts overlap, no text leaves the figure, every text
meets WCAG AA contrast against the pixels behind it, and nothing is wider than the column unless
it is a scroll region (the checks are in readable.py). And the build's drawing and plotly's are
one figure: the same size, the same axis ranges, the same texts in the same places."""

from __future__ import annotations

import json

import pytest

from readable import COLLECT, DRAWING_SIZE
from browser_support import figure_pages, go_live

pytestmark = pytest.mark.browser

#: Where a text may move between the build's drawing and plotly's (px): fonts differ by a pixel or two.
SAME_PLACE_PX = 6


@pytest.mark.parametrize("view", [(390, "light"), (390, "dark"), (768, "light"), (768, "dark"), (1280, "light"), (1280, "dark")],
                         ids=lambda p: f"{p[0]}-{p[1]}")
def test_every_figure_is_readable(live_walk, view):
    """Every figure page as built and live (tests/browser/live_walk.py: the walk test_accessibility.py's
    live-page test reads too)."""
    found = live_walk(*view).readable
    assert found == {}, "figures that do not read well:\n" + json.dumps(found, indent=1, ensure_ascii=False)


@pytest.mark.parametrize("width", [390, 1280])
def test_the_build_draws_the_figure_plotly_draws(browser, site_url, width):
    """Before Python and after, the reader sees one figure: plotly's first drawing has the size of
    the build's drawing, draws the axis ranges the build drew, and puts every text the build
    wrote in the same place."""
    ctx = browser.new_context(viewport={"width": width, "height": 900}, reduced_motion="reduce")
    page = ctx.new_page()
    moved = {}
    try:
        for path in figure_pages():
            page.goto(site_url + path)
            figs = page.locator("figure.demo")
            before = [{**figs.nth(i).evaluate(COLLECT), "size": figs.nth(i).evaluate(DRAWING_SIZE)} for i in range(figs.count())]
            go_live(page)
            for i in range(figs.count()):
                fig = figs.nth(i)
                where = f"{path}#{fig.get_attribute('id')} at {width} px"
                after = fig.evaluate(COLLECT)
                (bw, bh), (aw, ah) = before[i]["size"], fig.evaluate(DRAWING_SIZE)
                assert abs(bw - aw) <= 1 and abs(bh - ah) <= 1, f"{where}: built {bw:.0f} x {bh:.0f} px, plotly draws {aw:.0f} x {ah:.0f}"
                ranges = fig.evaluate("""f => { const p = f.querySelector('[data-role=plot]'); const out = {};
                    for (const [k, v] of Object.entries(p._fullLayout)) if (/^[xy]axis\\d*$/.test(k)) out[k] = v.range; return out; }""")
                pre = json.loads(fig.locator('script[data-role="prerender"]').text_content())
                drawn_at = fig.evaluate("f => f.querySelector('[data-role=plot]')._fullLayout.width")
                for key, spec in pre["layouts"][str(drawn_at)].items():
                    if key in ranges and "range" in spec and not isinstance(spec["range"][0], str):
                        assert ranges[key] == pytest.approx(spec["range"], abs=1e-6), f"{where}: {key} drawn {ranges[key]}, built {spec['range']}"
                centre = lambda t: (t["box"][0] + t["box"][2] / 2, t["box"][1] + t["box"][3] / 2)
                live = [(t["text"], centre(t)) for t in after["texts"]]
                for t in before[i]["texts"]:
                    x, y = centre(t)
                    near = [c for text, c in live if text == t["text"] and abs(c[0] - x) <= SAME_PLACE_PX and abs(c[1] - y) <= SAME_PLACE_PX]
                    # a wrapped title: the build writes each line as its own text, plotly one text of
                    # several lines (COLLECT joins them); the line is in place inside that text's box
                    near += [lt for lt in after["texts"] if lt["text"] != t["text"] and f" {t['text']} " in f" {lt['text']} "
                             and lt["box"][0] - SAME_PLACE_PX <= x <= lt["box"][0] + lt["box"][2] + SAME_PLACE_PX
                             and lt["box"][1] - SAME_PLACE_PX <= y <= lt["box"][1] + lt["box"][3] + SAME_PLACE_PX]
                    if not near:
                        moved.setdefault(where, []).append(f"{t['text']!r} at ({x:.0f}, {y:.0f})")
    finally:
        ctx.close()
    assert moved == {}, "texts the build drew that plotly draws elsewhere (or not at all):\n" + json.dumps(moved, indent=1, ensure_ascii=False)
