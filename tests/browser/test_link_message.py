"""A shared link with bad settings (issue 49.2): its message, at the top of the figure, is in view
once the page has settled on the figure, on a phone and on a laptop. It used to open above the
screen: the browser kept the plot where it was as the message came in over it."""

from __future__ import annotations

import pytest

from browser_support import BOOT_MS, next_frame

pytestmark = pytest.mark.browser

LINKS = {
    "one bad setting": ("/posts/polariser/?theta=999#demo-polarizer-1", "demo-polarizer-1", 1),
    "two bad settings": ("/posts/composition-and-subspaces/?theta2=400&middle=7#demo-three-polarizers-5", "demo-three-polarizers-5", 2),
}


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1280, "height": 800}], ids=["phone", "laptop"])
@pytest.mark.parametrize("link", list(LINKS))
def test_a_bad_link_says_why_in_view(browser, site_url, viewport, link):
    address, fig_id, bad = LINKS[link]
    context = browser.new_context(viewport=viewport, service_workers="block")
    page = context.new_page()
    try:
        page.goto(f"{site_url}{address}")
        fig = page.locator(f"#{fig_id}")
        box = fig.locator('[data-role="error"]')
        page.wait_for_function("f => f.dataset.status === 'error'", arg=fig.element_handle(), timeout=BOOT_MS)
        assert box.is_visible()
        assert len(box.locator("li").all()) == bad, box.inner_text()
        next_frame(page)
        next_frame(page)  # the page has settled: its scroll to the message is done
        top, bottom, height = box.evaluate("b => { const r = b.getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; }")
        assert 0 <= top and bottom <= height, f"the message spans {top:.0f} to {bottom:.0f} px in a {height} px viewport"
    finally:
        context.close()
