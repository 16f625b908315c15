"""One walk over the pages with figures, per viewport width and colour scheme, whose findings several
browser tests read: each page as built, then live (Python ready, plotly's drawings in place), with
readable.py's checks in both states, axe-core's once live, and what each figure shows in both states
(its texts and their boxes, its drawing's size, the words around it, plotly's axis ranges, the
build's data).

Six browser tests once each took every figure page live in a context of their own (test_readable.py's
two, test_accessibility.py's live pages, test_colorbars.py, test_figure_text.py's two): a Pyodide boot
a page for each test, where one boot a page and view serves them all (each test only reads the page).
``tests/conftest.py``'s ``live_walk(width, scheme)`` runs the walk once per pytest worker and options
and hands each test its findings; the tests assert on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from browser_support import PRERENDER, PUBLIC, figure_pages, go_live
from readable import COLLECT, DRAWING_SIZE, page_problems

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
AXE_RUN = """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
    .filter(v => ['serious', 'critical'].includes(v.impact))
    .map(v => `${v.id} (${v.impact}): ` + v.nodes.slice(0, 3).map(n => n.html.slice(0, 100)).join(' | '))"""
#: The widths whose walk runs axe-core too (test_accessibility.py's; test_readable.py adds 768 px).
AXE_WIDTHS = (390, 1280)
#: The options of the walk's browser context: ``context_options(390, "dark")``. The tests that read it
#: check what the figures draw and say; no CSS reads the viewport's height (a figure's boxes are
#: relative to its plot box), and bypass_csp (for axe's script) changes what may load, not what is drawn
#: (test_every_demo.py's test_every_article_goes_live takes every article live under the policy).
OPTIONS = {"height": 900, "bypass_csp": True, "reduced_motion": "reduce"}

#: Every word a figure shows outside its drawing: controls, their menus, outputs, the error line.
WORDS = """fig => [...fig.querySelectorAll('label, option, legend, output, .output-name, .output-help, .control-help,'
  + ' [data-role="error"], .control-inactive, .demo-menu-actions button')].map(e => e.textContent.trim()).filter(Boolean)"""
#: plotly's axis ranges and the width its layout was drawn at (live; nulls as built).
PLOTLY = """fig => { const p = fig.querySelector('[data-role=plot]'); const lay = p._fullLayout;
  if (!lay) return {ranges: null, width: null};
  const ranges = {}; for (const [k, v] of Object.entries(lay)) if (/^[xy]axis\\d*$/.test(k)) ranges[k] = v.range;
  return {ranges, width: lay.width}; }"""
#: What a figure shows, read in one go.
FIGURE = f"""fig => ({{id: fig.id, demo: fig.dataset.demo, drawn: ({COLLECT})(fig), size: ({DRAWING_SIZE})(fig),
  words: ({WORDS})(fig), plotly: ({PLOTLY})(fig)}})"""


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
class Figure:
    """One figure of a page in one state, as the walk read it: ``drawn`` readable.COLLECT's
    {texts, plot, live}, ``size`` readable.DRAWING_SIZE's [w, h], ``words`` the words outside the
    drawing, ``ranges`` and ``drawn_at`` plotly's axis ranges and layout width (None as built),
    ``prerender`` the data the build wrote for it (the same in both states, read once)."""
    path: str
    index: int
    id: str
    demo: str
    live: bool
    drawn: dict
    size: list
    words: list
    ranges: dict | None
    drawn_at: int | None
    prerender: dict

    @property
    def state(self) -> str:
        return "live" if self.live else "as built"


@dataclass
class Findings:
    """What one walk found: ``readable`` {"path where (as built|live)": problems} over figure_pages(),
    ``axe`` {path: violations} over the main pages that hold a figure, once live; ``axe_pages`` the
    paths axe looked at; ``figures`` every figure of figure_pages() as built, then live, page by page."""
    readable: dict = field(default_factory=dict)
    axe: dict = field(default_factory=dict)
    axe_pages: list = field(default_factory=list)
    figures: list = field(default_factory=list)


def read_figures(page, path: str, live: bool, prerenders: list | None = None) -> list[Figure]:
    """Every figure of the page as it is drawn now, in one call (boxes are relative to each plot box,
    and nothing on these pages draws by scroll position under reduced motion: no figure is scrolled
    to); ``prerenders`` the build's data if already read (as built: read here)."""
    # A figure off screen is skipped by the browser (demos.js sets content-visibility: auto once it is
    # wired), and Chromium may then answer a text's box from a layout made before the figure's status
    # line changed its height (19 px off at 390 px). Each figure is read laid out as it will be drawn
    # when the reader reaches it, in the same task (nothing is painted in between).
    one = f"fig => ({{...({FIGURE})(fig), prerender: {'null' if prerenders else f'({PRERENDER})(fig)'}}})"
    read = f"""figs => figs.map(fig => {{ const skip = fig.style.contentVisibility; fig.style.contentVisibility = 'visible';
      try {{ return ({one})(fig); }} finally {{ fig.style.contentVisibility = skip; }} }})"""
    out = []
    for i, f in enumerate(page.locator("figure.demo").evaluate_all(read)):
        out.append(Figure(path, i, f["id"], f["demo"], live, f["drawn"], f["size"], f["words"],
                          f["plotly"]["ranges"], f["plotly"]["width"], prerenders[i] if prerenders else f["prerender"]))
    return out


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
                built = read_figures(page, path, live=False)
                found.figures += built
                for where, problems in page_problems(page).items():
                    found.readable[f"{path} {where} (as built)"] = problems
            with_figures = page.locator("figure.demo").count() > 0
            if path not in readable_paths and not with_figures:
                continue
            go_live(page)
            if path in readable_paths:
                found.figures += read_figures(page, path, live=True, prerenders=[f.prerender for f in built])
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
