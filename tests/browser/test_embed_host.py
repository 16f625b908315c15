"""A blogger's embed (issue 35, point 10): a light blog read on a dark phone asks for a light
figure (?theme=light) and gets one; a bad embed address names every bad setting, in the
control's words, at the top of the figure; and the frame takes its content's height at a
phone's width and a laptop's, before and after the figure goes live."""

from __future__ import annotations

import functools
import http.server
import threading
from urllib.parse import urlparse

import pytest

from headspace_site.demos import REGISTRY
from sitebuild.browser import PHONE
from support import assert_json_close
from browser_support import figure_in, output_values

pytestmark = pytest.mark.browser

BAD = "three-polarizers/?theta2=400&thetta=4&middle=7&theme=blue"


@pytest.fixture(scope="module")
def blog(tmp_path_factory, site_url):
    """A light blog on a second origin: one figure asks for the light scheme, one for dark, one
    follows the reader, one has a bad address."""
    root = tmp_path_factory.mktemp("blog")
    site = f"http://127.0.0.1:{urlparse(site_url).port}"
    frame = '<iframe id="{id}" src="{site}/embed/{src}" title="{id}" width="100%" height="150" style="border:0" data-headspace></iframe>'
    frames = "\n".join(frame.format(id=i, site=site, src=src) for i, src in [
        ("light", "polarizer/?theta=45&theme=light"), ("dark", "polarizer/?theme=dark"),
        ("auto", "polarizer/?theme=auto"), ("bad", BAD)])
    (root / "index.html").write_text(f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>A light blog</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"></head><body style="background:#fff;color:#111">
<h1>My post</h1>{frames}<script async src="{site}/embed.js"></script></body></html>""")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_port}/"
    server.shutdown()


def luminance(css_colour: str) -> float:
    r, g, b = (int(x) for x in css_colour[css_colour.index("(") + 1:css_colour.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def frames_by_id(page) -> dict:
    return {f.frame_element().get_attribute("id"): f for f in page.frames[1:]}


def colours(frame) -> tuple[float, float]:
    """The luminance of the figure's background and of its text."""
    got = frame.evaluate("""() => { const f = document.querySelector('figure.demo');
        return [getComputedStyle(document.body).backgroundColor, getComputedStyle(f).color]; }""")
    return luminance(got[0]), luminance(got[1])


def fits(page, frame_id: str):
    """The iframe's height is its content's (embed.js, told by the frame), within 2 px."""
    iframe = page.locator(f"#{frame_id}")
    frame = iframe.element_handle().content_frame()
    measure = "() => [document.body.getBoundingClientRect().height, document.documentElement.scrollHeight]"
    # The frame reports each change of its height; wait for the host to take the frame's height as
    # it is now, and look again: a change meanwhile is reported too, so wait for that one.
    for _ in range(5):
        body, _scrolled = frame.evaluate(measure)
        page.wait_for_function("([id, h]) => Math.abs(document.getElementById(id).getBoundingClientRect().height - h) <= 2",
                               arg=[frame_id, body], timeout=10_000)
        if frame.evaluate(measure)[0] == body:
            break
    height = iframe.evaluate("f => f.getBoundingClientRect().height")
    body, scrolled = frame.evaluate(measure)
    assert abs(height - body) <= 2 and scrolled <= height + 2, (frame_id, height, body, scrolled)


@pytest.mark.parametrize("reader", ["dark-phone", "light-laptop"])
def test_the_theme_a_host_asks_for_and_a_frame_that_fits(browser, blog, reader):
    options = {**PHONE, "color_scheme": "dark"} if reader == "dark-phone" else {
        "viewport": {"width": 1280, "height": 900}, "color_scheme": "light"}
    context = browser.new_context(reduced_motion="reduce", **options)
    page = context.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    try:
        page.goto(blog)
        frames = frames_by_id(page)
        for frame_id in ("light", "dark", "auto", "bad"):
            figure_in(frames[frame_id])
        bg, fg = colours(frames["light"])
        assert bg > 0.9 and fg < 0.3, f"?theme=light on a {reader}: background {bg:.2f}, text {fg:.2f}"
        bg, fg = colours(frames["dark"])
        assert bg < 0.15 and fg > 0.8, f"?theme=dark on a {reader}: background {bg:.2f}, text {fg:.2f}"
        bg, _ = colours(frames["auto"])
        assert (bg < 0.15) == (reader == "dark-phone"), "?theme=auto follows the reader's scheme"
        # plotly's drawing follows too: its text takes the frame's colour
        fig = frames["light"].locator("figure.demo")
        assert fig.locator('input[name="theta"]').input_value() == "45"  # theme is not a figure's setting
        assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 45})["outputs"])
        for frame_id in ("light", "dark", "auto", "bad"):
            fits(page, frame_id)
        assert errors == [], errors
    finally:
        context.close()


def test_a_bad_embed_address_names_every_bad_setting_at_the_top(browser, site_url):
    context = browser.new_context(**PHONE, color_scheme="dark")
    page = context.new_page()
    try:
        page.goto(f"{site_url}/embed/{BAD}")
        fig = figure_in(page.main_frame)
        box = fig.locator('[data-role="error"]')
        assert fig.get_attribute("data-status") == "error" and box.is_visible()
        text = box.inner_text()
        items = box.locator("li").all_inner_texts()
        assert len(items) == 4, items
        # each named in words: the control's label, the link's text, what was expected
        assert any(i.startswith("Middle polariser θ₂ (theta2=400 in the link)") and "between 0 and 180" in i for i in items), items
        assert any(i.startswith("Middle polariser in (middle=7 in the link)") and "true or false" in i for i in items), items
        assert any("thetta=4" in i and "no parameter 'thetta'" in i and "First polariser θ₁ (theta1)" in i for i in items), items
        assert any("theme=blue" in i and "light, dark or auto" in i for i in items), items
        assert "[" not in text and "parameter 'theta2'" not in text, text  # no Python list, no code name first
        # at the top: above every control and the plot
        top = box.evaluate("b => b.getBoundingClientRect().top")
        first_control = fig.locator(".demo-controls [name]").first.evaluate("c => c.getBoundingClientRect().top")
        assert top < first_control and box.evaluate("b => b === b.parentElement.firstElementChild")
        assert_json_close(output_values(fig), REGISTRY["three-polarizers"].run({})["outputs"])
    finally:
        context.close()


def test_the_good_settings_of_a_link_are_applied(page, site_url):
    page.goto(f"{site_url}/embed/three-polarizers/?theta1=20&theta2=400")
    fig = figure_in(page.main_frame)
    assert fig.get_attribute("data-status") == "error"
    assert "the link's other settings" in fig.locator('[data-role="error"]').inner_text()
    assert fig.locator('input[name="theta1"]').input_value() == "20"
    assert_json_close(output_values(fig), REGISTRY["three-polarizers"].run({"theta1": 20})["outputs"])
