"""Animated demos (a Param with animate=True) play when in view, pause on
request, and stay still for readers who prefer reduced motion."""

import pytest

from browser_support import BOOT_MS, in_view, worker_caught_up

pytestmark = pytest.mark.browser
DEMO = 'figure.demo[data-demo="projection-2d-1d"]'


def open_article(browser, site_url, reduced):
    context = browser.new_context(reduced_motion="reduce" if reduced else "no-preference",
                                  viewport={"width": 1100, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{site_url}/posts/composition-and-subspaces/")
    page.locator(DEMO).scroll_into_view_if_needed()
    page.wait_for_function(f"() => document.querySelector('{DEMO}').dataset.status === 'ready'", timeout=BOOT_MS)
    return context, page, errors


def render_count(page):
    return int(page.locator(DEMO).get_attribute("data-render-count"))


def test_animation_plays_and_pauses(browser, site_url):
    context, page, errors = open_article(browser, site_url, reduced=False)
    try:
        page.wait_for_function(f"() => Number(document.querySelector('{DEMO}').dataset.renderCount) >= 3", timeout=10_000)
        button = page.locator(f'{DEMO} [data-role="play"]')
        assert button.get_attribute("aria-pressed") == "true"
        button.click()
        assert button.get_attribute("aria-pressed") == "false"
        worker_caught_up(page)  # an answer already in flight has landed
        paused = render_count(page)
        # Only time shows that a timer (the animation's, 80 ms) stopped: ten of its steps.
        page.wait_for_timeout(800)
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
