"""What a figure says, where (issue 35, points 1 and 9): a message about a control sits next to
it, announced, with the control marked invalid until fixed; no promise of going live (nor its
progress bar) beside an error; an animated figure's button says what its caption says before
Python; and with JavaScript off every control is disabled, and the figure says why."""

from __future__ import annotations

import pytest

from sitebuild.browser import PHONE
from browser_support import BOOT_MS, in_view, wait_ready, worker_caught_up

pytestmark = pytest.mark.browser

EXPLORER = 'figure.demo[data-demo="attention-explorer"]'
# Every moment an error shows beside the line's promise or its progress bar, recorded as it happens.
WATCH_ERRORS = """window.staleBesideError = [];
new MutationObserver(() => {
  for (const f of document.querySelectorAll('figure.demo')) {
    const error = f.querySelector('[data-role=error]'), line = f.querySelector('[data-role=live]');
    if (!error || error.hidden) continue;
    const bar = [...f.querySelectorAll('progress')].some(p => p.checkVisibility());
    if (bar || line.checkVisibility()) window.staleBesideError.push(line.textContent);
  }
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});"""


@pytest.mark.parametrize("reader", ["phone-dark", "laptop-light"])
def test_a_bad_token_is_named_under_its_box_and_the_box_is_marked(browser, site_url, reader):
    options = {**PHONE, "color_scheme": "dark"} if reader == "phone-dark" else {
        "viewport": {"width": 1280, "height": 800}, "color_scheme": "light"}
    context = browser.new_context(reduced_motion="reduce", **options)
    page = context.new_page()
    page.add_init_script(WATCH_ERRORS)
    try:
        page.goto(f"{site_url}/posts/transformer-circuits-primer/")
        wait_ready(page, EXPLORER)
        fig = page.locator(EXPLORER)
        box = fig.locator('input[name="tokens"]')
        box.fill("1 2 3 x9")
        page.wait_for_function(f"() => document.querySelector('{EXPLORER}').dataset.status === 'error'", timeout=30_000)
        message = fig.locator('[data-role="error"]')
        assert message.is_visible() and "token 4" in message.text_content()
        assert message.get_attribute("role") == "alert"  # announced
        assert box.get_attribute("aria-invalid") == "true"
        assert box.get_attribute("aria-errormessage") == message.get_attribute("id")
        assert message.get_attribute("id") in box.get_attribute("aria-describedby").split()
        # The reader typing in the box sees the message: within the viewport with it, just under it.
        page.wait_for_function(  # a scroll to the message, if it fell below the screen's edge
            "m => m.getBoundingClientRect().bottom <= innerHeight", arg=message.element_handle(), timeout=5_000)
        control, said, height = page.evaluate("""([c, m]) => [c.getBoundingClientRect().toJSON(),
            m.getBoundingClientRect().toJSON(), innerHeight]""", [box.element_handle(), message.element_handle()])
        assert 0 <= control["top"] and said["bottom"] <= height, (control, said, height)
        assert 0 <= said["top"] - control["bottom"] < 120, (control, said)
        assert page.evaluate("() => window.staleBesideError") == []
        box.fill("4 5 6 4 5 6")
        page.wait_for_function(f"() => document.querySelector('{EXPLORER}').dataset.status === 'ready'", timeout=30_000)
        assert message.is_hidden() and box.get_attribute("aria-invalid") is None
        assert box.get_attribute("aria-errormessage") is None
        assert message.get_attribute("id") not in (box.get_attribute("aria-describedby") or "")
    finally:
        context.close()


@pytest.mark.parametrize("address", ["/posts/polariser/?theta=500#demo-polarizer-1", "/embed/three-polarizers/?theta2=400"])
def test_no_progress_beside_a_refused_link(browser, site_url, address):
    """The link's error shows from Python's refusal on; the line's promise and its progress bar
    are gone, at every moment, not only once the reader moves a control."""
    context = browser.new_context(**PHONE, color_scheme="dark")
    page = context.new_page()
    page.add_init_script(WATCH_ERRORS)
    try:
        page.goto(site_url + address)
        page.wait_for_function("() => document.querySelector('figure.demo').dataset.status === 'error'", timeout=BOOT_MS)
        worker_caught_up(page)  # every message of the boot came before this reply: watched as they landed
        fig = page.locator("figure.demo").first
        assert fig.locator('[data-role="error"]').is_visible()
        assert fig.locator("progress").count() == 0
        assert fig.locator('[data-role="live"]').is_hidden()
        assert page.evaluate("() => window.staleBesideError") == []
    finally:
        context.close()


def test_javascript_off_leaves_no_enabled_control(browser, site_url):
    context = browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        page.goto(f"{site_url}/posts/composition-and-subspaces/")
        figures = page.locator("figure.demo")
        assert figures.count() >= 3
        # none, shown or not (issue 49.9: the share menu's hidden buttons were enabled)
        controls = page.locator("figure.demo :is(input, select, button, textarea)")
        enabled = controls.evaluate_all("els => els.filter(e => e.matches(':enabled')).map(e => e.outerHTML.slice(0, 80))")
        assert controls.count() > 10 and enabled == [], enabled
        for fig in figures.all():
            reason = fig.locator(".demo-noscript")
            assert reason.is_visible() and "JavaScript is off" in reason.text_content()
            assert fig.locator('[data-role="live"]').is_hidden()  # no promise to go live
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}])
def test_a_control_never_disagrees_with_its_figure_while_the_page_script_is_late(browser, site_url, viewport):
    """Issue 49.3: with the page script late (a slow phone), a slider could be moved to 140° while
    the figure stayed at 30°. The controls now stay inert until the script that answers them is
    there: a touch before then moves nothing, and once it is there they answer."""
    context = browser.new_context(viewport=viewport, service_workers="block")
    page = context.new_page()
    held = []
    page.route("**/js/demos.*", lambda route: held.append(route))  # the page script, held back
    try:
        page.goto(f"{site_url}/posts/polariser/", wait_until="domcontentloaded")
        fig = page.locator('figure.demo[data-demo="polarizer"]').first
        slider = fig.locator('input[name="theta"]')
        slider.scroll_into_view_if_needed()
        assert held and page.evaluate("() => window.headspace") is None  # the page script has not run
        assert slider.is_disabled()
        built = slider.input_value()
        box = slider.bounding_box()
        page.mouse.click(box["x"] + box["width"] * 0.8, box["y"] + box["height"] / 2)  # a reader's touch
        assert slider.input_value() == built  # the thumb did not move without its figure
        held[0].continue_()
        page.wait_for_function("f => window.headspace && window.headspace.wired(f)", arg=fig.element_handle())
        assert slider.is_enabled()
        page.mouse.click(box["x"] + box["width"] * 0.8, box["y"] + box["height"] / 2)
        assert slider.input_value() != built
        fig.locator(".readout").first.wait_for()
        page.wait_for_function("""f => { const s = f.querySelector('input[name="theta"]');
            return f.querySelector('.readout').textContent.startsWith(s.value) && f.dataset.status !== 'static'; }""",
                               arg=fig.element_handle(), timeout=BOOT_MS)
        # once Python is live the figure shows the slider's setting
        wait_ready(page, 'figure.demo[data-demo="polarizer"]')
        worker_caught_up(page)
        assert page.evaluate("f => window.headspace.state(f).shown.key", fig.element_handle()) == \
            page.evaluate("f => JSON.stringify(window.headspace.params(f))", fig.element_handle())
    finally:
        context.close()


def test_an_animated_figure_says_pause_before_python(browser, site_url):
    """Its caption says "Pause freezes it": before Python the button already says Pause (the figure
    will move once Python is live), and pressing it keeps the figure still."""
    demo = 'figure.demo[data-demo="projection-2d-1d"]'
    context = browser.new_context(viewport={"width": 1100, "height": 900}, reduced_motion="no-preference")
    page = context.new_page()
    page.add_init_script("""window.pressedBeforePython = null;
    new MutationObserver(() => {
      const f = document.querySelector('figure.demo[data-demo="projection-2d-1d"]');
      const b = f && f.querySelector('[data-role=play]');
      if (b && window.pressedBeforePython === null && b.getAttribute('aria-pressed') === 'true' && f.dataset.status !== 'ready')
        window.pressedBeforePython = b.textContent;
    }).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});""")
    try:
        page.goto(f"{site_url}/posts/composition-and-subspaces/", wait_until="domcontentloaded")
        page.locator(demo).scroll_into_view_if_needed()
        page.wait_for_function("() => window.pressedBeforePython !== null", timeout=BOOT_MS)
        assert page.evaluate("() => window.pressedBeforePython") == "Pause"
        button = page.locator(f"{demo} [data-role=play]")
        if page.locator(demo).get_attribute("data-status") != "ready":
            button.click()  # the reader pauses it before Python: it stays still when Python arrives
            wait_ready(page, demo)
            in_view(page, demo)  # the page's observer has seen it in view,
            worker_caught_up(page)  # and what waited for Python's ready has run: a start says Pause at once
            assert button.get_attribute("aria-pressed") == "false" and button.text_content() == "Play"
            assert page.locator(demo).get_attribute("data-render-count") == "0"
    finally:
        context.close()
