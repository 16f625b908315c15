"""Animated demos (a Param with animate=True) play when in view, pause on
request, and stay still for readers who prefer reduced motion."""

import pytest

from browser_support import BOOT_MS, in_view, worker_caught_up

pytestmark = pytest.mark.browser
DEMO = 'figure.demo[data-demo="projection-2d-1d"]'


def open_article(browser, site_url, reduced, clock=False):
    context = browser.new_context(reduced_motion="reduce" if reduced else "no-preference",
                                  viewport={"width": 1100, "height": 900})
    page = context.new_page()
    if clock:  # the page's timers on a clock the test can run forward (time still flows as usual)
        page.clock.install()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{site_url}/posts/composition-and-subspaces/")
    page.locator(DEMO).scroll_into_view_if_needed()
    page.wait_for_function(f"() => document.querySelector('{DEMO}').dataset.status === 'ready'", timeout=BOOT_MS)
    return context, page, errors


def render_count(page):
    return int(page.locator(DEMO).get_attribute("data-render-count"))


def test_animation_plays_and_pauses(browser, site_url):
    context, page, errors = open_article(browser, site_url, reduced=False, clock=True)
    try:
        page.wait_for_function(f"() => Number(document.querySelector('{DEMO}').dataset.renderCount) >= 3", timeout=10_000)
        button = page.locator(f'{DEMO} [data-role="play"]')
        assert button.get_attribute("aria-pressed") == "true"
        button.click()
        assert button.get_attribute("aria-pressed") == "false"
        worker_caught_up(page)  # an answer already in flight has landed
        slider = page.locator(f'{DEMO} input[name="{button.get_attribute("data-for")}"]')
        paused, value = render_count(page), slider.input_value()
        # Ten of the animation's 80 ms steps at once on the page's clock: a timer still running
        # would move the slider and ask Python; what it asked is answered before we count.
        page.clock.run_for(800)
        worker_caught_up(page)
        assert slider.input_value() == value, "a paused animation moved its slider"
        assert render_count(page) == paused, "a paused animation must not render"
        assert errors == []
    finally:
        context.close()


def test_reduced_motion_keeps_it_still(browser, site_url):
    context, page, errors = open_article(browser, site_url, reduced=True)
    try:
        in_view(page, DEMO)  # the page's observer has seen it in view (where it would start),
        worker_caught_up(page)  # and what waited for Python's ready has run: a start says Pause at once
        assert render_count(page) == 0
        assert page.locator(f'{DEMO} [data-role="play"]').get_attribute("aria-pressed") == "false"
        assert errors == []
    finally:
        context.close()
