"""Colour bars read on a phone and a laptop (issue 49, point 5): no colour-bar title touches a tick
label of its bar, and none is cut by the edge of its drawing, as the build drew it and as plotly
draws it, at 390 and 1280 px. (Six figures had the title on the top label, "Frobenius" on "0.207";
Measuring's "Δ loss (nats)" ran off the drawing.) The engine's fix is
headspace_site.figure.fit.readable_colorbars."""

from __future__ import annotations

import re

import pytest

from browser_support import each_figure, figure_pages
from readable import COLLECT

pytestmark = pytest.mark.browser

PAD = re.compile("[\u2007\u2008\u200b\\s]+")


def _plain(text: str) -> str:
    return PAD.sub(" ", re.sub(r"<[^>]+>", " ", text)).strip()


def bars(figure: dict) -> list[tuple[list[str], list[str]]]:
    """``(title lines, tick labels)`` of each titled colour bar of a figure dict."""
    out = []
    for tr in figure["data"]:
        bar = tr.get("colorbar") if tr.get("type") == "heatmap" and tr.get("showscale", True) else None
        title = (bar or {}).get("title")
        text = title.get("text", "") if isinstance(title, dict) else title or ""
        if text:
            out.append(([_plain(t) for t in re.split(r"<br\s*/?>", text)], [_plain(t) for t in bar.get("ticktext") or []]))
    return out


def touching(a, b) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return min(ax + aw, bx + bw) - max(ax, bx) > 0 and min(ay + ah, by + bh) - max(ay, by) > 0


@pytest.mark.parametrize("width", [390, 1280])
def test_colour_bar_titles_clear_their_ticks_and_fit(browser, site_url, width):
    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme="dark" if width < 500 else "light",
                              reduced_motion="reduce")
    page = ctx.new_page()
    bad, checked = {}, 0
    try:
        for path, i, fig, live, pre in each_figure(page, site_url, figure_pages()):
            found = bars(pre["figure"])   # live, the page draws the same settings
            if not found:
                continue
            drawn = fig.evaluate(COLLECT)
            texts = [(_plain(t["text"]), t["box"]) for t in drawn["texts"]]
            for title_lines, ticks in found:
                titles = [box for text, box in texts if text in title_lines or text == " ".join(title_lines)]
                labels = [box for text, box in texts if text in ticks]
                where = f"{path} {fig.get_attribute('data-demo')} #{i} ({'live' if live else 'as built'})"
                if not titles:
                    bad[where] = f"title {title_lines} not drawn whole (cut or wrapped otherwise)"
                    continue
                checked += 1
                for box in titles:
                    if box[0] + box[2] > drawn["plot"][2] + 1 or box[0] < -1:
                        bad[where] = f"title {title_lines} leaves the drawing: {[round(v) for v in box]}"
                    if any(touching(box, lab) for lab in labels):
                        bad[where] = f"title {title_lines} touches a tick label"
    finally:
        ctx.close()
    assert checked >= 10, f"only {checked} colour-bar titles checked"
    assert bad == {}, bad
