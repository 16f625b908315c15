"""Every figure reads well at 390, 768 and 1280 px in both colour schemes, as the build drew it
and as plotly draws it once live: no two texts overlap, no text leaves the figure, every text
meets WCAG AA contrast against the pixels behind it, and nothing is wider than the column unless
it is a scroll region (the checks are in readable.py). And the build's drawing and plotly's are
one figure: the same size, the same axis ranges, the same texts in the same places."""

from __future__ import annotations

import json

import pytest

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


@pytest.mark.parametrize("view", [(390, "light"), (1280, "light")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_the_build_draws_the_figure_plotly_draws(live_walk, view):
    """Before Python and after, the reader sees one figure: plotly's first drawing has the size of
    the build's drawing, draws the axis ranges the build drew, and puts every text the build
    wrote in the same place (every figure page as built, then live: tests/browser/live_walk.py)."""
    figures = live_walk(*view).figures
    built = {(f.path, f.index): f for f in figures if not f.live}
    moved, checked = {}, 0
    for fig in (f for f in figures if f.live):
        before = built[fig.path, fig.index]
        where = f"{fig.path}#{fig.id} at {view[0]} px"
        (bw, bh), (aw, ah) = before.size, fig.size
        assert abs(bw - aw) <= 1 and abs(bh - ah) <= 1, f"{where}: built {bw:.0f} x {bh:.0f} px, plotly draws {aw:.0f} x {ah:.0f}"
        for key, spec in fig.prerender["layouts"][str(fig.drawn_at)].items():
            if key in fig.ranges and "range" in spec and not isinstance(spec["range"][0], str):
                assert fig.ranges[key] == pytest.approx(spec["range"], abs=1e-6), f"{where}: {key} drawn {fig.ranges[key]}, built {spec['range']}"
        centre = lambda t: (t["box"][0] + t["box"][2] / 2, t["box"][1] + t["box"][3] / 2)  # noqa: E731
        after = fig.drawn["texts"]
        live = [(t["text"], centre(t)) for t in after]
        for t in before.drawn["texts"]:
            x, y = centre(t)
            near = [c for text, c in live if text == t["text"] and abs(c[0] - x) <= SAME_PLACE_PX and abs(c[1] - y) <= SAME_PLACE_PX]
            # a wrapped title: the build writes each line as its own text, plotly one text of
            # several lines (COLLECT joins them); the line is in place inside that text's box
            near += [lt for lt in after if lt["text"] != t["text"] and f" {t['text']} " in f" {lt['text']} "
                     and lt["box"][0] - SAME_PLACE_PX <= x <= lt["box"][0] + lt["box"][2] + SAME_PLACE_PX
                     and lt["box"][1] - SAME_PLACE_PX <= y <= lt["box"][1] + lt["box"][3] + SAME_PLACE_PX]
            if not near:
                moved.setdefault(where, []).append(f"{t['text']!r} at ({x:.0f}, {y:.0f})")
        checked += 1
    assert checked == len(built) > 0, f"{checked} figures live of {len(built)} as built"
    assert moved == {}, "texts the build drew that plotly draws elsewhere (or not at all):\n" + json.dumps(moved, indent=1, ensure_ascii=False)
