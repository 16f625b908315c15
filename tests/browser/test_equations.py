"""Display equations fit a phone (issue 35, point 4): at 390 px no display equation on any page is
wider than its column, so none needs sideways scrolling. A long equation is broken into aligned
lines in the article, or split where the prose allows."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

PUBLIC = Path(__file__).resolve().parents[2] / "site" / "public"
#: Every built page with a display equation, as a path under the site.
PAGES = sorted("/" + str(p.parent.relative_to(PUBLIC)).strip(".") + "/" if p.parent != PUBLIC else "/"
               for p in PUBLIC.rglob("index.html") if "katex-display" in p.read_text(encoding="utf-8"))
PAGES = [p.replace("//", "/") for p in PAGES]

#: Each display equation's width against its column's, and its TeX (KaTeX keeps it in the MathML).
MEASURE = """() => [...document.querySelectorAll('.katex-display')].map(el => ({
    column: el.clientWidth, width: el.scrollWidth,
    tex: (el.querySelector('annotation[encoding="application/x-tex"]') || {}).textContent || ''}))"""


def test_some_pages_have_display_equations():
    assert len(PAGES) >= 5, f"found display equations on {PAGES} only: is site/public built?"


@pytest.mark.parametrize("path", PAGES)
def test_no_display_equation_is_wider_than_its_column_on_a_phone(browser, site_url, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1,
                                  java_script_enabled=False)  # the maths is typeset at build time
    try:
        page = context.new_page()
        page.goto(site_url + path)
        page.evaluate("document.fonts.ready")
        wide = [e for e in page.evaluate(MEASURE) if e["width"] > e["column"] + 1]
        assert not wide, f"{path}: {len(wide)} display equation(s) wider than the {wide[0]['column']} px column: " + \
            "; ".join(f"{e['width']} px: {' '.join(e['tex'].split())[:80]}" for e in wide)
    finally:
        context.close()
