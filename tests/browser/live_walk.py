"""One walk over the pages with figures, per viewport width and colour scheme, whose findings several
browser tests read: each page as built, then live (Python ready, plotly's drawings in place), with
readable.py's checks in both states and axe-core's once live.

test_readable.py's readability test and test_accessibility.py's live-page test once each took every
page live in a context of their own with the same options: two Pyodide boots a page where one serves
both (each test only reads the page). ``tests/conftest.py``'s ``live_walk(width, scheme)`` runs the
walk once per pytest worker and options and hands each test its findings; the tests assert on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from browser_support import PUBLIC, figure_pages, go_live
from readable import page_problems

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_RUN = """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
    .filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ` + v.nodes.slice(0, 3).map(n => n.html.slice(0, 100)).join(' | '))"""
#: The widths whose walk runs axe-core too (test_accessibility.py's; test_readable.py adds 768 px).
AXE_WIDTHS = (390, 1280)
#: The options of the walk's browser context (those both tests used): ``context_options(390, "dark")``.
OPTIONS = {"height": 900, "bypass_csp": True, "reduced_motion": "reduce"}


def context_options(width: int, scheme: str) -> dict:
    return {"viewport": {"width": width, "height": OPTIONS["height"]}, "color_scheme": scheme,
            "bypass_csp": OPTIONS["bypass_csp"], "reduced_motion": OPTIONS["reduced_motion"]}


def axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    page.add_script_tag(path=str(AXE))
    return page.evaluate(AXE_RUN)


def pages() -> list[str]:
    """Every built page's path."""
    return sorted("/" + p.parent.relative_to(PUBLIC).as_posix().strip(".") + ("/" if p.parent != PUBLIC else "")
                  for p in PUBLIC.rglob("index.html"))


def main_pages() -> list[str]:
    """Home, gallery and every article."""
    return ["/", "/gallery/"] + [p for p in pages() if p.startswith("/posts/") and p != "/posts/"]


@dataclass
class Findings:
    """What one walk found: ``readable`` {"path where (as built|live)": problems} over figure_pages(),
    ``axe`` {path: violations} over the main pages that hold a figure, once live; ``axe_pages`` the
    paths axe looked at."""
    readable: dict = field(default_factory=dict)
    axe: dict = field(default_factory=dict)
    axe_pages: list = field(default_factory=list)


def walk(browser, site_url: str, width: int, scheme: str) -> Findings:
    """Visit every page with figures once at ``width`` px in ``scheme``, as built and then live."""
    readable_paths = figure_pages()
    main = main_pages()
    paths = readable_paths + [p for p in main if p not in readable_paths]
    found = Findings()
    context = browser.new_context(**context_options(width, scheme))
    try:
        page = context.new_page()
        for path in paths:
            page.goto(site_url + path)
            if path in readable_paths:
                for where, problems in page_problems(page).items():
                    found.readable[f"{path} {where} (as built)"] = problems
            with_figures = page.locator("figure.demo").count() > 0
            if path not in readable_paths and not with_figures:
                continue
            go_live(page)
            if path in readable_paths:
                for where, problems in page_problems(page).items():
                    found.readable[f"{path} {where} (live)"] = problems
            if width in AXE_WIDTHS and with_figures and path in main:
                found.axe_pages.append(path)
                bad = axe_violations(page)
                if bad:
                    found.axe[path] = bad
    finally:
        context.close()
    return found
