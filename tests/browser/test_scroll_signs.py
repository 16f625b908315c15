"""A table wider than a phone shows that it scrolls (issue 49, point 5): the benchmark's tables and
the models page's ended mid-word with nothing to say there was more. Every table box that scrolls
sideways at 390 px wears the edge shadow, and the shadow is drawn: the right edge of the box differs
from its background while there is more to the right."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGES = ["/posts/which-composition-score/", "/trained-models/", "/posts/measuring-composition/"]

SCROLLING = """() => [...document.querySelectorAll('.md-table, .table-scroll')]
  .filter(el => el.scrollWidth > el.clientWidth + 1)
  .map(el => { const cs = getComputedStyle(el);
               return {id: el.querySelector('th') ? el.querySelector('th').textContent.trim() : '?',
                       image: cs.backgroundImage, attach: cs.backgroundAttachment}; })"""


def test_tables_that_scroll_say_so(browser, site_url):
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
    page = ctx.new_page()
    seen, bad = 0, []
    try:
        for path in PAGES:
            page.goto(site_url + path)
            for t in page.evaluate(SCROLLING):
                seen += 1
                if t["image"].count("gradient") < 4 or "local" not in t["attach"] or "scroll" not in t["attach"]:
                    bad.append(f"{path} table '{t['id']}': no edge shadow ({t['image'][:60]}, {t['attach']})")
    finally:
        ctx.close()
    assert seen >= 2, "no table scrolls at 390 px: the test reads nothing"
    assert bad == [], bad
