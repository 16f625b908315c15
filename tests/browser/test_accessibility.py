"""axe-core (pinned in package.json) finds no serious or critical accessibility violation on any
page: every page at 390 and 1280 px before Python is ready (articles, home and gallery in both
colour schemes at both widths, the rest in one scheme per width), and the articles and the
gallery again once live, with plotly's drawings in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_support import wait_ready

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "site" / "public"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
RUN = """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
    .filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ` + v.nodes.slice(0, 3).map(n => n.html.slice(0, 100)).join(' | '))"""


def pages() -> list[str]:
    return sorted("/" + p.parent.relative_to(PUBLIC).as_posix().strip(".") + ("/" if p.parent != PUBLIC else "")
                  for p in PUBLIC.rglob("index.html"))


def main_pages() -> list[str]:
    return ["/", "/gallery/"] + [p for p in pages() if p.startswith("/posts/") and p != "/posts/"]


def violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    return page.evaluate(RUN)


@pytest.fixture(params=[(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")], ids=lambda p: f"{p[0]}-{p[1]}")
def context(request, browser):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing; scripts/setup installs the npm packages (npm ci)")
    width, scheme = request.param
    ctx = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme, bypass_csp=True,
                              reduced_motion="reduce")
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


def test_live_pages(context, site_url):
    page = context.new_page()
    found = {}
    for path in main_pages():
        page.goto(f"{site_url}{path}")
        if not page.locator("figure.demo").count():
            continue
        wait_ready(page)
        page.evaluate("() => window.headspace.settle()")  # plotly draws every figure, as for a pointer
        bad = violations(page)
        if bad:
            found[path] = bad
    assert found == {}, f"serious or critical axe violations once live: {found}"
