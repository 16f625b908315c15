"""Figures embedded in another site, opened from a link in a state, and the
menu under every figure (link, embed code, data, Python), driven as a reader
drives them: by keyboard where a reader can."""

from __future__ import annotations

import contextlib
import csv
import functools
import http.server
import io
import json
import threading
from urllib.parse import urlparse

import pytest

from headspace_site.demos import REGISTRY
from headspace_site.figure.style import COLORS
from support import assert_json_close
from browser_support import BOOT_MS, SETTLED, figure_in, open_menu, output_values, set_control, wait_ready

pytestmark = pytest.mark.browser

INK = COLORS["ink"]


@pytest.fixture(scope="module")
def host(tmp_path_factory, site_url):
    """A blog on a second origin (another host name and port: another site) that embeds three
    figures: one with a parameter in its URL, one with a bad parameter, one at its defaults."""
    root = tmp_path_factory.mktemp("host")
    port = urlparse(site_url).port
    site = f"http://127.0.0.1:{port}"
    (root / "index.html").write_text(f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>A blog post</title><link rel="icon" href="data:,"></head><body>
<h1>My post about polarisers</h1>
<iframe id="set" src="{site}/embed/polarizer/?theta=45" title="Polariser" width="100%" height="150" style="border:0" data-headspace></iframe>
<iframe id="bad" src="{site}/embed/three-polarizers/?theta2=400" title="Three polarisers" width="100%" height="150" style="border:0" data-headspace></iframe>
<iframe id="plain" src="{site}/embed/bottleneck/" title="Bottleneck" width="100%" height="150" style="border:0" data-headspace></iframe>
<script async src="{site}/embed.js"></script>
</body></html>""")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://localhost:{server.server_port}"  # "localhost", not 127.0.0.1: another site
    server.shutdown()


def initiator(request) -> str:
    """The URL of the document whose frame made ``request`` ("" where Playwright cannot tell)."""
    try:
        return request.frame.url
    except Exception:  # noqa: BLE001 - a worker's request may have no frame
        return ""


def run_snippet(snippet: str, name: str) -> dict:
    """Run a figure's Python snippet natively (quietly) and return its ``result``."""
    scope: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(snippet, name, "exec"), scope)
    return scope["result"]


def test_a_blog_embeds_three_figures(browser, host, site_url):
    context = browser.new_context(viewport={"width": 900, "height": 900}, reduced_motion="reduce")
    page = context.new_page()
    errors, requests = [], []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append((initiator(r), r.url)))
    try:
        page.goto(f"{host}/")
        frames = {f.name or f.url: f for f in page.frames[1:]}
        by_demo = {urlparse(f.url).path.split("/")[2]: f for f in frames.values()}
        assert set(by_demo) == {"polarizer", "three-polarizers", "bottleneck"}

        # The parameter in the URL is applied: controls and outputs are Python's for theta = 45.
        fig = figure_in(by_demo["polarizer"])
        assert fig.get_attribute("data-status") == "ready"
        assert fig.locator('input[name="theta"]').input_value() == "45"
        assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 45})["outputs"])

        # The bad one names the parameter and keeps its defaults; its controls still work.
        fig = figure_in(by_demo["three-polarizers"])
        message = fig.locator('[data-role="error"]')
        assert fig.get_attribute("data-status") == "error" and message.is_visible()
        assert "theta2" in message.text_content() and "between 0 and 180" in message.text_content()
        assert_json_close(output_values(fig), REGISTRY["three-polarizers"].run({})["outputs"])
        set_control(fig, "theta2", 30)
        by_demo["three-polarizers"].wait_for_function("() => document.querySelector('figure.demo').dataset.status === 'ready'")
        assert message.is_hidden()

        fig = figure_in(by_demo["bottleneck"])
        assert fig.get_attribute("data-status") == "ready"

        # Each frame told the host its height, and embed.js sized the iframe to it.
        for frame_id in ("set", "bad", "plain"):
            iframe = page.locator(f"#{frame_id}")
            page.wait_for_function(f"() => document.getElementById('{frame_id}').style.height !== ''")
            height = iframe.evaluate("f => f.getBoundingClientRect().height")
            content = iframe.element_handle().content_frame().evaluate("() => document.body.getBoundingClientRect().height")
            assert abs(height - content) <= 2 and height > 300, (frame_id, height, content)

        assert errors == [], f"console errors: {errors}"
        # The host asked for its page; everything else (the frames, their workers) went to the site.
        site_origin = f"http://127.0.0.1:{urlparse(site_url).port}"
        from_frames = [u for frame_url, u in requests if frame_url.startswith(site_origin)]
        assert any("/pyodide/" in u for _, u in requests) and from_frames, "the frames' requests were seen"
        off = [u for _, u in requests if not u.startswith((site_origin, "data:", "blob:")) and u != f"{host}/"]
        assert off == [], f"requests left the site's origin: {off}"
    finally:
        context.close()


def test_an_unknown_parameter_is_named(page, site_url):
    page.goto(f"{site_url}/embed/polarizer/?thetta=45")
    fig = figure_in(page.main_frame)
    text = fig.locator('[data-role="error"]').text_content()
    assert "no parameter 'thetta'" in text and "theta" in text, text
    assert_json_close(output_values(fig), REGISTRY["polarizer"].run({})["outputs"])


def shared_text(fig) -> str:
    return fig.locator('[data-role="share"] textarea').input_value()


def test_link_to_this_state_reopens_it(page, site_url):
    page.goto(f"{site_url}/posts/polariser/")
    wait_ready(page)
    fig = page.locator("figure.demo").first
    history = page.evaluate("() => history.length")
    for count, theta in enumerate((20, 40, 73), start=1):
        set_control(fig, "theta", theta)
        page.wait_for_function(f"() => document.querySelector('figure.demo').dataset.renderCount === '{count}'")
    assert page.evaluate("() => history.length") == history, "moving a control must not add history entries"
    open_menu(page, fig, "link")
    link = shared_text(fig)
    assert urlparse(link).query == "theta=73" and urlparse(link).fragment == fig.get_attribute("id")

    page.goto("about:blank")
    page.set_viewport_size({"width": 800, "height": 500})
    page.goto(link)
    fig = page.locator(f"#{urlparse(link).fragment}")
    page.wait_for_function(f"() => ({SETTLED})(document.getElementById('{urlparse(link).fragment}'))", timeout=BOOT_MS)
    assert fig.get_attribute("data-status") == "ready"
    assert fig.locator('input[name="theta"]').input_value() == "73"
    assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 73})["outputs"])
    top = fig.evaluate("f => f.getBoundingClientRect().top")
    assert -5 <= top < 500, f"the linked figure is scrolled into view (top {top})"


def test_embed_code_data_and_python_by_keyboard(page, site_url, tmp_path):
    page.goto(f"{site_url}/posts/polariser/")
    wait_ready(page)
    fig = page.locator("figure.demo").first
    set_control(fig, "theta", 61)
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.renderCount === '1'")
    want = REGISTRY["polarizer"].run({"theta": 61})["outputs"]

    open_menu(page, fig, "embed")
    code = shared_text(fig)
    assert code.startswith(f'<iframe src="{site_url}/embed/polarizer/?theta=61" title="')
    assert "data-headspace" in code and f'<script async src="{site_url}/embed.js"></script>' in code
    assert page.evaluate("() => document.activeElement.tagName") == "TEXTAREA"  # focus moves to what to copy

    with page.expect_download() as info:
        open_menu(page, fig, "json")
    data = json.loads(open(info.value.path()).read())
    assert data["demo"] == "polarizer" and data["params"] == {"theta": 61}
    assert_json_close(data["outputs"], want)

    with page.expect_download() as info:
        open_menu(page, fig, "csv")
    assert info.value.suggested_filename == "polarizer-jones.csv"
    rows = list(csv.reader(io.StringIO(open(info.value.path()).read())))
    assert_json_close([[float(x) for x in r] for r in rows], want["jones"])

    fig.locator('[data-action="copy"]').focus()
    page.keyboard.press("Enter")  # copied, or (clipboard refused) selected with a hint: either way it says so
    page.wait_for_function("() => document.querySelector('[data-role=share-status]').textContent !== ''")

    open_menu(page, fig, "cite")
    bibtex = shared_text(fig)
    assert bibtex.startswith("@misc{headspace-polarizer,") and bibtex.rstrip().endswith("}")
    assert f"\\url{{{site_url}/posts/polariser/?theta=61#demo-polarizer-1}}" in bibtex
    assert "Settings: theta = 61." in bibtex

    open_menu(page, fig, "python")
    snippet = shared_text(fig)
    assert f"pip install {site_url}/download/headspace-" in snippet
    assert_json_close(run_snippet(snippet, "polarizer")["outputs"], want)


def test_every_python_snippet_reproduces_its_figure(page, site_url, demos_data):
    """The Python menu of every figure in the gallery, run natively, gives the outputs on the page."""
    page.goto(f"{site_url}/gallery/")
    figures = page.locator("figure.demo")
    assert figures.count() == len(demos_data["registry"])
    for fig in figures.all():
        fig.locator(".demo-menu > summary").click()
        fig.locator('.demo-menu button[data-action="python"]').click()
        name = fig.get_attribute("data-demo")
        assert_json_close(run_snippet(shared_text(fig), name)["outputs"], output_values(fig), path=name)


def test_two_tabs_share_one_python(browser, site_url):
    """Pages of the site open together talk to one interpreter (a SharedWorker)."""
    context = browser.new_context(reduced_motion="reduce")
    try:
        first = context.new_page()
        first.goto(f"{site_url}/posts/polariser/")
        wait_ready(first)
        second = context.new_page()
        second.goto(f"{site_url}/gallery/")
        wait_ready(second)
        marks = second.evaluate("() => window.headspace.marks")
        assert marks["workerKind"] == "shared" and marks["sharedWith"] == 2, marks
        fig = second.locator('figure.demo[data-demo="polarizer"]')
        set_control(fig, "theta", 12)
        second.wait_for_function("() => document.querySelector('figure.demo[data-demo=polarizer]').dataset.renderCount === '1'")
        assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 12})["outputs"])
        # The first page needed no models; the interpreter it booted imported the demos without
        # them. The second page's model demos must still see every checkpoint.
        fig = second.locator('figure.demo[data-demo="composition-scores"]')
        set_control(fig, "step", 600)
        second.wait_for_function("() => { const f = document.querySelector('figure.demo[data-demo=composition-scores]');"
                                 " return f.dataset.renderCount === '1' || f.dataset.status === 'error'; }")
        assert fig.get_attribute("data-status") == "ready", fig.locator('[data-role="error"]').text_content()
        params = second.evaluate("f => window.headspace.params(f)", fig.element_handle())
        assert params["step"] == 600
        assert_json_close(output_values(fig), REGISTRY["composition-scores"].run(params)["outputs"])
    finally:
        context.close()


def test_ink_follows_the_colour_scheme(browser, site_url):
    """Neutral "ink" marks take the page's text colour in the dark scheme, on live draws and when the
    reader's scheme changes: the engine draws them as currentColor (CSS follows the scheme), and
    plotly, once a pointer is on the plot, gets the page's colour in their place (draw.js)."""
    context = browser.new_context(color_scheme="dark", reduced_motion="reduce")
    page = context.new_page()
    try:
        page.goto(f"{site_url}/embed/hidden-symmetry/")
        wait_ready(page)
        fig = page.locator("figure.demo")
        set_control(fig, "rotation", 40)
        page.wait_for_function("() => document.querySelector('figure.demo').dataset.renderCount === '1'")
        live = "document.querySelector('[data-role=plot] svg.live')"
        assert "currentColor" in page.evaluate(f"() => {live}.outerHTML")
        colours = f"() => [getComputedStyle({live}).color, getComputedStyle(document.body).color]"
        dark = page.evaluate(colours)
        page.emulate_media(color_scheme="light")
        light = page.evaluate(colours)
        assert dark[0] == dark[1] and light[0] == light[1] and dark[0] != light[0], (dark, light)
        page.emulate_media(color_scheme="dark")
        fig.locator("[data-role=plot]").hover()  # plotly draws the figure, for its hover values
        page.wait_for_function("() => document.querySelector('[data-role=plot] .main-svg')")
        plot = "() => JSON.stringify(document.querySelector('[data-role=plot]').data)"
        fg = page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--fg').trim()")
        assert fg.lower() != INK and fg in page.evaluate(plot) and INK not in page.evaluate(plot).lower()
        page.emulate_media(color_scheme="light")
        page.wait_for_function(f"() => JSON.stringify(document.querySelector('[data-role=plot]').data).includes('{INK}')")
        assert fg not in page.evaluate(plot)
    finally:
        context.close()


@pytest.mark.parametrize("demo, query, params", [
    ("attention-explorer", "tokens=1,2,3,1,2,3", {"tokens": "1,2,3,1,2,3"}),
    ("metric-lab", "rank=3.0&decay=.5&order=reversed", {"rank": 3, "decay": 0.5, "order": "reversed"})])
def test_a_links_settings_are_written_as_python_writes_them(page, site_url, demo, query, params):
    """The page writes no value as text: once Python accepts a link's settings, each control
    named holds Python's text (``Param.control``, sent back with the result), so ``1,2,3`` reads
    ``1 2 3`` and ``3.0`` reads ``3``; a number as a number box writes it (``.5``) is a number."""
    page.goto(f"{site_url}/embed/{demo}/?{query}")
    fig = figure_in(page.main_frame)
    assert fig.get_attribute("data-status") == "ready"
    controls = REGISTRY[demo].controls(params)
    for name in params:
        el = fig.locator(f'.demo-controls [name="{name}"]')
        held = el.evaluate("el => el.tagName === 'SELECT' ? el.selectedIndex : el.value")
        want = controls[name]["option"] if "option" in controls[name] else controls[name]["text"]
        assert held == want, f"{demo}.{name} holds {held!r}; Python wrote {want!r}"
        assert el.is_disabled() == (not controls[name]["active"])
