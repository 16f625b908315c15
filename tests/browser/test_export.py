"""The figure as an image (issue 35, point 12): the menu's SVG and PNG are the figure as it is on
screen now, in the reader's colour scheme, captioned with its title and the link to its state;
both open as images, and the PNG shows what the SVG shows."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from sitebuild.browser import PHONE
from browser_support import open_menu, set_control, wait_ready

pytestmark = pytest.mark.browser

TITLE = "A polariser is a rank-1 projection"


def export(page, fig, kind: str) -> bytes:
    with page.expect_download() as info:
        open_menu(page, fig, kind)
    assert info.value.suggested_filename == f"{fig.get_attribute('data-demo')}.{kind}"
    return Path(info.value.path()).read_bytes()


COMPARE = """async ([svgURL, pngURL]) => {
    const load = async (url) => { const img = new Image(); img.src = url; await img.decode(); return img; };
    const [svg, png] = [await load(svgURL), await load(pngURL)];
    const w = png.naturalWidth, h = png.naturalHeight;
    const pixels = (img) => { const c = Object.assign(document.createElement('canvas'), {width: w, height: h});
        c.getContext('2d').drawImage(img, 0, 0, w, h); return c.getContext('2d').getImageData(0, 0, w, h).data; };
    const a = pixels(svg), b = pixels(png);
    let diff = 0; for (let i = 0; i < a.length; i++) diff += Math.abs(a[i] - b[i]);
    // the caption's rows (the bottom 60 px of the PNG): pixels far from the background are its text
    const bg = [b[b.length - 4], b[b.length - 3], b[b.length - 2]];
    let inked = 0;
    for (let i = b.length - w * 4 * 60; i < b.length; i += 4)
        if (Math.abs(b[i] - bg[0]) + Math.abs(b[i + 1] - bg[1]) + Math.abs(b[i + 2] - bg[2]) > 150) inked++;
    return {svgWidth: svg.naturalWidth, svgHeight: svg.naturalHeight, width: w, height: h,
            diff: diff / a.length, inked, background: (bg[0] + bg[1] + bg[2]) / 3}; }"""


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def text_of(svg: str) -> str:
    return " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))


@pytest.mark.parametrize("reader", ["laptop-light-live", "phone-dark-static"])
def test_svg_and_png_show_the_figure_and_its_title(browser, site_url, reader):
    live = reader.endswith("live")
    options = {"viewport": {"width": 1280, "height": 800}, "color_scheme": "light"} if live else {
        **PHONE, "color_scheme": "dark", "service_workers": "block"}
    context = browser.new_context(reduced_motion="reduce", accept_downloads=True, **options)
    page = context.new_page()
    try:
        if not live:  # the data saver: no Python until a control moves, the build's drawing shows
            page.add_init_script("Object.defineProperty(navigator, 'connection', {value: {saveData: true}})")
        page.goto(f"{site_url}/posts/polariser/")
        fig = page.locator("figure.demo").first
        if live:
            wait_ready(page)
            set_control(fig, "theta", 61)
            page.wait_for_function("() => document.querySelector('figure.demo').dataset.renderCount === '1'")
        else:
            page.wait_for_function("() => !document.querySelector('figure.demo [data-role=menu]').hidden")
        svg = export(page, fig, "svg").decode()
        png = export(page, fig, "png")
        link = "?theta=61#demo-polarizer-1" if live else "?theta=30#demo-polarizer-1"
        assert TITLE in text_of(svg) and link in text_of(svg).replace(" ", ""), text_of(svg)[-300:]
        # live: the drawing Python made for this setting; else the build's of the starting one
        assert ('class="static-figure live"' in svg) == live and ('class="static-figure w' in svg) == (not live)
        assert "light out" in text_of(svg)  # the legend: the figure's own text came along
        page.goto("about:blank")  # both open as images in a browser
        got = page.evaluate(COMPARE, [data_url(svg.encode(), "image/svg+xml"), data_url(png, "image/png")])
        assert got["svgWidth"] >= 330 and got["width"] == 2 * got["svgWidth"] and got["height"] == 2 * got["svgHeight"], got
        assert got["diff"] < 3, got  # the PNG is the SVG drawn: the SVG drawn at its size differs by little
        assert got["inked"] > 200, got  # the caption's title and link are drawn
        assert (got["background"] < 100) == (not live), got  # the reader's scheme: dark on the phone
    finally:
        context.close()
