"""The way in (issue 49, points 7 and 12): a reader on a phone sees a head of the primer's schematic
without scrolling, on a 390 x 844 phone and on a 375 x 667 one; Home's first screen holds a live
figure, phone and laptop; and each article's entry on Home carries a small picture of one of its
figures, the build's own drawing."""

from __future__ import annotations

import re

import pytest

from browser_support import opened, wait_ready

pytestmark = pytest.mark.browser

HEAD = re.compile(r"^L\d+H\d+$")
#: The first head box of the schematic, as built: its label's bottom edge in the page.
FIRST_HEAD = """() => {
  const fig = document.querySelector('figure.demo');
  const heads = [...fig.querySelectorAll('[data-role="plot"] text')].filter(t => /^L\\d+H\\d+$/.test(t.textContent.trim())
    && t.getBoundingClientRect().width > 0);
  return heads.length ? Math.min(...heads.map(t => t.getBoundingClientRect().bottom)) : null;
}"""


@pytest.mark.parametrize("viewport", [(390, 844), (375, 667)], ids=["390x844", "375x667"])
def test_a_head_of_the_schematic_in_the_first_screen(browser, site_url, viewport):
    w, h = viewport
    with opened(browser, site_url + "/posts/transformer-circuits-primer/", viewport={"width": w, "height": h},
                color_scheme="dark", is_mobile=True, has_touch=True) as page:
        assert page.evaluate("() => document.querySelector('figure.demo').dataset.demo") == "residual-stream"
        bottom = page.evaluate(FIRST_HEAD)
        assert bottom is not None, "no head label drawn in the schematic"
        assert bottom <= h, f"the schematic's first head ends at y {bottom:.0f}, below the {h} px screen"


@pytest.mark.parametrize("viewport", [(390, 844, "dark"), (1280, 900, "light")], ids=["390", "1280"])
def test_home_opens_on_a_live_figure(browser, site_url, viewport):
    w, h, scheme = viewport
    with opened(browser, site_url + "/", viewport={"width": w, "height": h}, color_scheme=scheme) as page:
        fig = page.locator("figure.demo").first
        top = fig.locator('[data-role="plot"]').evaluate("p => p.getBoundingClientRect().top")
        assert top < h - 150, f"Home's figure starts at y {top:.0f}: not in the first screen of {h} px"
        wait_ready(page)
        assert fig.get_attribute("data-status") == "ready"


def test_every_article_entry_has_a_picture_of_its_figures(browser, site_url):
    with opened(browser, site_url + "/", viewport={"width": 390, "height": 844}) as page:
        cards = page.evaluate("""() => [...document.querySelectorAll('.post-card')].map(c => {
          const svg = c.querySelector('.thumb svg.thumb-figure'); const r = svg && svg.getBoundingClientRect();
          return {title: c.querySelector('h2').textContent.trim(), bytes: svg ? svg.outerHTML.length : 0,
                  shown: !!r && r.width > 50 && r.height > 30, hidden: !!svg && svg.closest('[aria-hidden=true]') !== null};
        })""")
    assert len(cards) >= 7
    assert [c["title"] for c in cards if not (c["shown"] and c["hidden"])] == []
    assert max(c["bytes"] for c in cards) < 20_000, cards  # markup; a few kB once compressed
