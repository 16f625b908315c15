"""Colour bars read on a phone and a laptop (issue 49, point 5): no colour-bar title touches a tick
label of its bar, and none is cut by the edge of its drawing, as the build drew it and as plotly
draws it, at 390 and 1280 px. (Six figures had the title on the top label, "Frobenius" on "0.207";
Measuring's "Δ loss (nats)" ran off the drawing.) The engine's fix is
headspace_site.figure.fit.readable_colorbars."""

from __future__ import annotations

import re

import pytest

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


@pytest.mark.parametrize("view", [(390, "dark"), (1280, "light")], ids=lambda p: f"{p[0]}-{p[1]}")
def test_colour_bar_titles_clear_their_ticks_and_fit(live_walk, view):
    """Every figure page as built, then live (tests/browser/live_walk.py)."""
    bad, checked = {}, 0
    for fig in live_walk(*view).figures:
        found = bars(fig.prerender["figure"])   # live, the page draws the same settings
        if not found:
            continue
        drawn = fig.drawn
        texts = [(_plain(t["text"]), t["box"]) for t in drawn["texts"]]
        for title_lines, ticks in found:
            titles = [box for text, box in texts if text in title_lines or text == " ".join(title_lines)]
            labels = [box for text, box in texts if text in ticks]
            where = f"{fig.path} {fig.demo} #{fig.index} ({fig.state})"
            if not titles:
                bad[where] = f"title {title_lines} not drawn whole (cut or wrapped otherwise)"
                continue
            checked += 1
            for box in titles:
                if box[0] + box[2] > drawn["plot"][2] + 1 or box[0] < -1:
                    bad[where] = f"title {title_lines} leaves the drawing: {[round(v) for v in box]}"
                if any(touching(box, lab) for lab in labels):
                    bad[where] = f"title {title_lines} touches a tick label"
    assert checked >= 10, f"only {checked} colour-bar titles checked"
    assert bad == {}, bad
