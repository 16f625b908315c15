"""The static drawing every figure shows before plotly has loaded, and for good when JavaScript
is off: with scripts disabled, each figure shows the SVG drawn for the widest of the
drawing widths its plot box holds (the media queries headspace_site.figure.widths.css writes from
figure/widths.json), visible, uncovered, inside its figure, at close to the scale it was drawn for,
and saying what the figure says; and each kind of page changes drawing exactly where that table
says its plot box reaches the next width."""

from __future__ import annotations

import re

import pytest

from headspace_site.figure import widths
from headspace_site.figure.widths import WIDTHS, drawing_width

pytestmark = pytest.mark.browser

VIEWPORTS = {"wide": {"width": 1100, "height": 900}, "narrow": {"width": 390, "height": 844}}

#: Everything the page can tell about each figure and its two drawings, read in one go.
READ = """figs => figs.map(fig => {
  const box = el => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const plot = fig.querySelector('[data-role="plot"]');
  return {
    id: fig.id, demo: fig.dataset.demo, fig: box(fig), plot: box(plot),
    prerender: JSON.parse(fig.querySelector('script[data-role="prerender"]').textContent),
    svgs: [...plot.querySelectorAll(':scope > svg.static-figure')].map(svg => ({
      cls: svg.getAttribute('class'), display: getComputedStyle(svg).display, box: box(svg),
      viewBox: svg.getAttribute('viewBox').split(' ').map(Number),
      texts: [...svg.querySelectorAll('text')].map(t => ({
        // lines are tspans placed at an x; a lowered or raised run (<sub>, <sup>) reads on within its line
        text: [...t.querySelectorAll(':scope > tspan[x]')].map(l => l.textContent).join(' ') || t.textContent, box: box(t), fill: getComputedStyle(t).fill, opacity: getComputedStyle(t).opacity})),
    })),
  };
})"""

#: For every figure, in order: does its drawing sit on top at the middle of what shows of it, once
#: scrolled into view (centred, when it is not wholly on screen already): one call a page.
ON_TOP = """figs => figs.map(fig => {
  const svg = [...fig.querySelectorAll('svg.static-figure')].find(s => getComputedStyle(s).display !== 'none');
  if (!svg) return null;
  const seen = svg.getBoundingClientRect();
  if (seen.top < 0 || seen.left < 0 || seen.bottom > innerHeight || seen.right > innerWidth) fig.scrollIntoView({block: 'center', inline: 'center'});
  const r = svg.getBoundingClientRect();
  const hit = document.elementFromPoint(r.x + r.width / 2, r.y + Math.min(r.height, innerHeight - r.y) / 2);
  return hit && hit.closest('svg.static-figure') === svg;
})"""


def plain(text) -> str:
    """Text as a figure shows it: <br> a space, other markup removed, runs of spaces one (as SVG
    text renders them, and as the minified page holds them)."""
    return " ".join(re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>", " ", str(text))).split())


def said(figure) -> tuple[set[str], set[str]]:
    """(what the drawing must say: title, axis titles, annotations, legend entries;
    what it may say besides numbers: those, tick texts, categories, bar labels)."""
    lay = figure["layout"]
    title = lay.get("title")
    must = {plain(title.get("text") if isinstance(title, dict) else title or "")}
    may = set()
    for key, axis in lay.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            t = axis.get("title")
            must.add(plain(t.get("text") if isinstance(t, dict) else t or ""))
            may |= {plain(v) for v in axis.get("ticktext", [])}
    must |= {plain(n["text"]) for n in lay.get("annotations", []) if n.get("text")}
    if lay.get("showlegend", True):
        must |= {plain(t["name"]) for t in figure["data"] if t.get("showlegend", True) and t.get("name")}
    for t in figure["data"]:
        may |= {plain(v) for key in ("x", "y", "text") for v in t.get(key) or [] if isinstance(v, str)}
        if t.get("type") == "heatmap" and t.get("showscale", True):  # its colour bar: a title, listed labels
            bar = t.get("colorbar") or {}
            title = (bar.get("title") or {}).get("text") if isinstance(bar.get("title"), dict) else bar.get("title") or ""
            must |= {plain(line) for line in re.split(r"<br\s*/?>", title)}   # a wrapped title: a line each
            may |= {plain(v) for v in bar.get("ticktext", [])}
    must.discard("")
    return must, may | must


def figure_pages(site_root, demos_data) -> list[str]:
    """The gallery, every article with a figure, and every embed page."""
    articles = [f"/posts/{p.parent.name}/" for p in sorted((site_root / "posts").glob("*/index.html"))
                if 'class="demo"' in p.read_text() or "class=demo" in p.read_text()]
    return ["/gallery/", *articles, *(f"/embed/{name}/" for name in sorted(demos_data["registry"]))]


def number(text: str) -> bool:
    return re.fullmatch(r"[\u2212-]?\d+(\.\d+)?(e[-+]?\d+)?%?", text) is not None


@pytest.mark.parametrize("kind", sorted(VIEWPORTS))
def test_every_figure_shows_its_static_drawing_without_javascript(browser, site_url, demos_data, kind):
    from conftest import PUBLIC
    context = browser.new_context(java_script_enabled=False, viewport=VIEWPORTS[kind], reduced_motion="reduce")
    page = context.new_page()
    seen = set()
    try:
        for path in figure_pages(PUBLIC, demos_data):
            page.goto(site_url + path)
            assert page.locator("html").evaluate("() => !!window.Plotly") is False  # the page's scripts did not run
            figs = page.locator("figure.demo")
            found = figs.evaluate_all(READ)
            on_top = figs.evaluate_all(ON_TOP)   # after READ: it scrolls
            for i, f in enumerate(found):
                where = f"{path} #{f['id']} at {VIEWPORTS[kind]['width']} px"
                seen.add(f["demo"])
                # One drawing per width the figure may be drawn at; the one for this column shows.
                want = f"static-figure w{drawing_width(f['plot']['w'])}"
                assert sorted(s["cls"] for s in f["svgs"]) == sorted(f"static-figure w{w}" for w in WIDTHS), \
                    f"{where}: drawings {[s['cls'] for s in f['svgs']]}"
                (svg,) = [s for s in f["svgs"] if s["cls"] == want]
                for off in (s for s in f["svgs"] if s["cls"] != want):
                    assert off["display"] == "none" and off["box"]["w"] == 0, f"{where}: the {off['cls']} drawing shows too"
                assert svg["display"] != "none", f"{where}: the {want} drawing is hidden"
                box, frame, plot = svg["box"], f["fig"], f["plot"]
                assert box["w"] > 100 and box["h"] > 100, f"{where}: drawn {box['w']:.0f} x {box['h']:.0f} px"
                for outer, name in ((frame, "figure"), (plot, "plot box")):
                    assert outer["x"] - 0.5 <= box["x"] and box["x"] + box["w"] <= outer["x"] + outer["w"] + 0.5, \
                        f"{where}: the drawing spills out of its {name}"
                    assert outer["y"] - 0.5 <= box["y"] and box["y"] + box["h"] <= outer["y"] + outer["h"] + 0.5, \
                        f"{where}: the drawing spills out of its {name}"
                assert box["x"] + box["w"] <= VIEWPORTS[kind]["width"], f"{where}: wider than the screen"
                _, _, vw, vh = svg["viewBox"]
                scale = min(box["w"] / vw, box["h"] / vh)
                assert 0.8 <= scale <= 1.25, f"{where}: a {vw:.0f} px drawing shown at {scale:.2f} of its size"
                assert on_top[i], f"{where}: something covers the drawing"
                # What the figure says as laid out for this width (figure.fit drops cell values that do not fit).
                width = want.split("w")[-1]
                must, may = said({"data": f["prerender"]["figure"]["data"], "layout": f["prerender"]["layouts"][width]})
                texts = [{**t, "text": plain(t["text"])} for t in svg["texts"] if t["text"].strip()]
                missing = must - {t["text"] for t in texts}
                assert not missing, f"{where}: the drawing does not say {sorted(missing)}"
                strange = [t["text"] for t in texts if t["text"] not in may and not number(t["text"])]
                assert not strange, f"{where}: the drawing says {strange}, which the figure does not"
                for t in texts:
                    b = t["box"]
                    assert b["w"] > 0 and b["h"] > 0 and t["fill"] != "none" and float(t["opacity"]) > 0, \
                        f"{where}: {t['text']!r} is not rendered"
                    # Drawn where it can be read: its middle inside the drawing (a long title may run
                    # past the edges of a phone's drawing, as plotly's would)
                    cx, cy = b["x"] + b["w"] / 2, b["y"] + b["h"] / 2
                    assert box["x"] <= cx <= box["x"] + box["w"] and box["y"] <= cy <= box["y"] + box["h"], \
                        f"{where}: {t['text']!r} lies outside the drawing"
    finally:
        context.close()
    assert seen == set(demos_data["registry"]), f"figures never checked: {set(demos_data['registry']) - seen}"


#: A page of each kind the table of drawing widths describes.
KIND_PAGES = {"article": "/posts/polariser/", "gallery": "/gallery/", "embed": "/embed/polarizer/"}


@pytest.mark.parametrize("kind", widths.PAGES)
def test_the_drawing_changes_where_the_table_says(browser, site_url, kind):
    """Either side of each viewport where the table's plot box reaches the next width, the plot box
    is as wide as the table says and the build's drawing of Python's width for it shows."""
    context = browser.new_context(java_script_enabled=False, viewport={"width": 800, "height": 900})
    page = context.new_page()
    try:
        page.goto(site_url + KIND_PAGES[kind])
        for rem, _ in widths.shown_from(kind)[1:]:
            for viewport in (int(rem * widths.REM) - 1, int(rem * widths.REM) + 1):
                page.set_viewport_size({"width": viewport, "height": 900})
                (f,) = page.locator("figure.demo").first.evaluate_all(READ)
                where = f"{KIND_PAGES[kind]} at {viewport} px"
                assert f["plot"]["w"] == pytest.approx(widths.plot_box(kind, viewport), abs=0.5), where
                shown = [s["cls"] for s in f["svgs"] if s["display"] != "none"]
                assert shown == [f"static-figure w{drawing_width(f['plot']['w'])}"], where
    finally:
        context.close()
