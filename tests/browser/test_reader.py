"""What a reader meets before and around the live figure: a line that says the figure is not
live yet (what it costs, the boot's progress, a moved control catching up), the data saver,
sliders that announce their unit, swipes that scroll the page, and a paused animation that
stays paused."""

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from headspace_site.demos import REGISTRY
from support import assert_json_close
from browser_support import BOOT_MS, in_view, next_frame, opened, output_values, page_started, set_control, wait_ready

pytestmark = pytest.mark.browser

LIVE = "() => { const l = document.querySelector('figure.demo [data-role=live]'); return l.hidden ? null : l.textContent; }"


@pytest.mark.parametrize("width", [390, 1280])
def test_a_figure_says_it_is_not_live_yet_and_catches_up(browser, site_url, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    texts, tops = [], set()
    page.expose_function("seen", lambda t, top: (texts.append(t), tops.add(top)))
    # Every state of the line, and where the plot below it sits then (it must never jump).
    page.add_init_script("""new MutationObserver(() => {
        const l = document.querySelector('figure.demo [data-role=live]');
        const plot = document.querySelector('figure.demo [data-role=plot]');
        if (l) window.seen(l.hidden ? null : l.textContent, Math.round(plot.getBoundingClientRect().top + scrollY));
    }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});""")
    page.goto(f"{site_url}/posts/polariser/")
    fig = page.locator("figure.demo")
    first = page.evaluate(LIVE)
    assert first is not None, "the line is hidden before Python is ready"
    assert page.locator('figure.demo [data-role="live"]').get_attribute("role") == "status"
    set_control(fig, "theta", 73)  # before Python is ready
    wait_ready(page)
    page.wait_for_function("() => document.querySelector('figure.demo').dataset.renderCount === '1'", timeout=BOOT_MS)
    assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 73})["outputs"])
    page.wait_for_function(f"({LIVE})().startsWith('Live:')")
    said = " | ".join(t for t in texts if t)
    assert "MB" in (first + said) and "build" in (first + said), said
    assert "Catching up" in said and re.search(r"\(\w[\w ]*, \d/4\)", said), said
    assert page.locator('figure.demo [data-role="live"]').get_attribute("role") is None  # live: not announced
    assert len(tops) == 1, f"the plot moved as the line changed: tops {sorted(tops)}, said {said}"
    context.close()


#: The opacity of a figure's drawing, its outputs and its line, as drawn now.
OPACITY = """f => Object.fromEntries(['plot', 'live'].map(r => [r, Number(getComputedStyle(f.querySelector(`[data-role=${r}]`)).opacity)])
  .concat([['outputs', Number(getComputedStyle(f.querySelector('.demo-outputs')).opacity)]]))"""


@pytest.mark.parametrize("reader", [(390, "dark"), (1280, "light")], ids=["390-dark", "1280-light"])
def test_a_figure_waiting_for_python_is_dimmed_and_says_why(browser, site_url, reader):
    """Issue 49.11: a setting the build did not answer waits for Python, and meanwhile the drawing
    and outputs of the last setting stood undimmed beside the new slider value. Now they are dimmed
    while the line above them, at full strength, says the figure is catching up; Python's drawing
    of the setting comes at full strength."""
    width, scheme = reader
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  reduced_motion="reduce", service_workers="block")
    held = []
    context.route("**/pyodide/**", lambda route: held.append(route))  # Python has not come yet
    page = context.new_page()
    try:
        page.goto(f"{site_url}/posts/polariser/")
        fig = page.locator("figure.demo").first
        page.wait_for_function("f => window.headspace && window.headspace.wired(f)", arg=fig.element_handle())
        fig.scroll_into_view_if_needed()
        assert fig.evaluate(OPACITY) == {"plot": 1, "live": 1, "outputs": 1}
        set_control(fig, "theta", 73)  # off the build's grid: only Python can draw it
        page.wait_for_function("f => f.dataset.life === 'asking'", arg=fig.element_handle())
        page.wait_for_function(f"f => ({OPACITY})(f).plot < 0.5", arg=fig.element_handle())  # after its transition
        seen = fig.evaluate(OPACITY)
        assert seen["plot"] < 0.5 and seen["outputs"] < 0.5 and seen["live"] == 1, seen
        line = fig.locator('[data-role="live"]')
        assert line.is_visible() and "Catching up" in line.inner_text(), line.inner_text()
        context.unroute("**/pyodide/**")
        for route in held:
            route.continue_()
        wait_ready(page)
        page.wait_for_function("f => f.dataset.life === 'live'", arg=fig.element_handle(), timeout=BOOT_MS)
        page.wait_for_function(f"f => ({OPACITY})(f).plot === 1", arg=fig.element_handle())
        assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 73})["outputs"])
    finally:
        context.close()


def test_sliders_announce_their_unit(page, site_url):
    page.goto(f"{site_url}/posts/polariser/")
    theta = page.locator('figure.demo input[name="theta"]')
    assert theta.get_attribute("aria-valuetext") == f"{theta.get_attribute('value')}°"
    wait_ready(page)
    set_control(page.locator("figure.demo"), "theta", 73)
    assert theta.get_attribute("aria-valuetext") == "73°"


def test_data_saver_waits_for_the_reader(browser, site_url):
    context = browser.new_context()
    context.add_init_script("Object.defineProperty(navigator, 'connection', {value: {saveData: true}})")
    # A SharedWorker's requests are invisible to Playwright; the dedicated fallback loads the same files.
    context.add_init_script("window.HEADSPACE_WORKER = 'dedicated'")
    page = context.new_page()
    runtime = []
    context.on("request", lambda r: "/pyodide/" in r.url and runtime.append(r.url))
    try:
        page.goto(f"{site_url}/posts/polariser/")
        page_started(page)  # where the boot starts without a data saver
        assert page.locator("figure.demo").get_attribute("data-status") == "static"  # "loading" once it boots
        assert runtime == [], f"Python's runtime was fetched under the data saver: {runtime[:3]}"
        said = page.evaluate(LIVE)
        assert "Data saver" in said and " MB, once" in said, said
        assert page.locator("figure.demo").get_attribute("data-status") == "static"
        fig = page.locator("figure.demo")
        set_control(fig, "theta", 40)  # the reader asks for it
        page.wait_for_function("() => document.querySelector('figure.demo').dataset.renderCount === '1'", timeout=BOOT_MS)
        assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 40})["outputs"])
        assert runtime
    finally:
        context.close()


@pytest.mark.parametrize("where", ["text", "plot"])
def test_a_swipe_scrolls_the_page_wherever_it_starts(browser, site_url, where):
    context = browser.new_context(viewport={"width": 390, "height": 740}, is_mobile=True, has_touch=True,
                                  reduced_motion="reduce")
    page = context.new_page()
    try:
        page.goto(f"{site_url}/posts/polariser/")
        wait_ready(page)
        fig = page.locator("figure.demo")
        fig.locator(".demo-plot").tap()  # a finger on the plot: plotly draws it; swipes must still scroll
        page.wait_for_function("() => document.querySelector('figure.demo .main-svg')", timeout=BOOT_MS)
        target = fig.locator(".demo-plot .nsewdrag").first if where == "plot" else page.locator("article p").first
        target.scroll_into_view_if_needed()
        box = target.bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 150)
        before = page.evaluate("() => scrollY")
        cdp = context.new_cdp_session(page)  # a finger: down, 15 moves of 20 px upwards, up
        cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for k in range(1, 16):
            cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y - 20 * k}]})
            next_frame(page)  # a finger's moves a frame apart
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        try:
            page.wait_for_function("y => scrollY - y > 150", arg=before, timeout=5_000)
        except PlaywrightTimeout:
            moved = page.evaluate("() => scrollY") - before
            raise AssertionError(f"a swipe starting on the {where} scrolled the page by {moved} px") from None
        layout = page.evaluate("() => { const l = document.querySelector('figure.demo [data-role=plot]')._fullLayout;"
                               " return [l.dragmode, l.xaxis.fixedrange, l.yaxis.fixedrange]; }")
        assert layout == [False, True, True]
    finally:
        context.close()


def test_a_paused_animation_stays_paused(browser, site_url):
    with opened(browser, f"{site_url}/posts/composition-and-subspaces/", viewport={"width": 1100, "height": 800}) as page:
        wait_ready(page)
        played = 'figure.demo:has([data-role="play"])'  # the first figure with a play button
        fig = page.locator(played).first
        fig.scroll_into_view_if_needed()
        button = fig.locator('[data-role="play"]')
        page.wait_for_function("b => b.getAttribute('aria-pressed') === 'true'", arg=button.element_handle(), timeout=BOOT_MS)
        button.click()  # the reader pauses it
        assert button.get_attribute("aria-pressed") == "false"
        page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
        in_view(page, played, visible=False)  # the page's observer has seen it leave (and stopped it)
        fig.scroll_into_view_if_needed()
        in_view(page, played)  # and come back: a restart would say Pause at once
        assert button.get_attribute("aria-pressed") == "false", "the animation restarted by itself"


def test_a_turned_phone_gets_the_figure_laid_out_for_its_new_width(browser, site_url):
    """The column's width comes from a ResizeObserver (a slider move reads no layout): when it
    crosses a drawing width after Python has drawn, Python lays the figure out again for the new
    width, and the next move is drawn at that width too."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(f"{site_url}/posts/polariser/")
    wait_ready(page)
    fig = page.locator("figure.demo").first
    drawn_width = "() => Number(document.querySelector('figure.demo [data-role=plot] svg.live').getAttribute('width'))"
    count = "() => Number(document.querySelector('figure.demo').dataset.renderCount)"
    set_control(fig, "theta", 31)
    page.wait_for_function(f"() => ({count})() >= 1", timeout=BOOT_MS)
    before, wide = page.evaluate(count), page.evaluate(drawn_width)
    page.set_viewport_size({"width": 390, "height": 740})
    page.wait_for_function(f"() => ({count})() > {before} && ({drawn_width})() === 330", timeout=BOOT_MS)
    assert wide > 330
    before = page.evaluate(count)
    set_control(fig, "theta", 50)
    page.wait_for_function(f"() => ({count})() > {before}", timeout=BOOT_MS)
    assert page.evaluate(drawn_width) == 330
    assert_json_close(output_values(fig), REGISTRY["polarizer"].run({"theta": 50})["outputs"])
    context.close()
