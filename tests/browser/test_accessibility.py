"""axe-core (pinned in package.json) finds no serious or critical accessibility violation on any
page: every page at 390 and 1280 px before Python is ready (articles, home and gallery in both
colour schemes at both widths, the rest in one scheme per width), and the articles and the
gallery again once live, with plotly's drawings in place."""

from __future__ import annotations

import pytest

from live_walk import AXE, AXE_WIDTHS, axe_violations as violations, context_options, main_pages, pages

pytestmark = pytest.mark.browser
VIEWS = [(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")]


@pytest.fixture(params=VIEWS, ids=lambda p: f"{p[0]}-{p[1]}")
def context(request, browser):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing; scripts/setup installs the npm packages (npm ci)")
    width, scheme = request.param
    ctx = browser.new_context(**context_options(width, scheme))
    ctx.scheme = scheme
    yield ctx
    ctx.close()


def test_every_page_before_python(context, site_url):
    page = context.new_page()
    # Every page in one scheme per width (light on a phone, dark on a laptop); the main pages in both.
    wanted = pages() if (context.scheme == "light") == (page.viewport_size["width"] == 390) else main_pages()
    found = {}
    for path in wanted:
        page.goto(f"{site_url}{path}")
        bad = violations(page)
        if bad:
            found[path] = bad
    assert len(wanted) >= 8
    assert found == {}, f"serious or critical axe violations: {found}"


@pytest.mark.parametrize("view", VIEWS, ids=lambda p: f"{p[0]}-{p[1]}")
def test_live_pages(live_walk, view):
    """The main pages with figures once live (tests/browser/live_walk.py: the walk test_readable.py's
    readability test reads too)."""
    assert view[0] in AXE_WIDTHS
    found = live_walk(*view)
    assert "/gallery/" in found.axe_pages, found.axe_pages
    assert found.axe == {}, f"serious or critical axe violations once live: {found.axe}"
