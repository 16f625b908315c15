"""What browser tests share: moving a control as a reader does, waiting for Python, reading a
figure's outputs and what it prints, the pages that hold figures, an embedded figure, a menu.

Named ``browser_support`` rather than ``support``: tests/support.py (helpers for every layer) is
importable as ``support`` from every test, and one module name for two files would be whichever
the first test imported.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from headspace_site.demos import REGISTRY, format_outputs
from headspace_site.figure.registry import Outputs

#: The longest a test waits for Python to go live (a cold boot on a loaded 2-core machine).
BOOT_MS = 90_000
PUBLIC = Path(__file__).resolve().parents[2] / "site" / "public"

READ_PARAMS = "fig => window.headspace.params(fig)"  # the page's own reader: what it sends to Python
# {key: HTML} as this browser serialises it once parsed (attribute quotes, entities).
AS_PARSED = """(fig, html) => Object.fromEntries(Object.entries(html).map(([k, h]) => {
  const t = document.createElement("template"); t.innerHTML = h; return [k, t.innerHTML]; }))"""
#: An embedded figure has settled: Python answered (or failed) and no note is pending.
SETTLED = "f => ['ready', 'error'].includes(f.dataset.status) && !f.querySelector('[data-role=note]:not([hidden])')"


def set_control(fig, name, value):
    """Change a control the way a reader does: set it and fire input."""
    fig.locator(f'[name="{name}"]').evaluate(
        """(el, v) => {
            if (el.type === 'checkbox') el.checked = v;
            else if (el.tagName === 'SELECT') el.selectedIndex = [...el.options].findIndex(o => o.dataset.value === JSON.stringify(v));
            else el.value = String(v);
            el.dispatchEvent(new Event('input', {bubbles: true}));
        }""", value)


def wait_ready(page, selector="figure.demo"):
    """Wait until every demo left static/loading; fail with the page's own message if not ready."""
    page.wait_for_function(
        f"() => [...document.querySelectorAll('{selector}')].every(f => f.dataset.status === 'ready' || f.dataset.status === 'error')",
        timeout=BOOT_MS)
    for fig in page.locator(selector).all():
        assert fig.get_attribute("data-status") == "ready", fig.locator('[data-role="error"]').text_content()


def output_values(fig) -> dict:
    """{key: the exact JSON value} of every output under the figure (its ``data-value``)."""
    return {o.get_attribute("data-output"): json.loads(o.get_attribute("data-value"))
            for o in fig.locator("output[data-output]").all()}


def printed(fig) -> dict:
    """{key: the HTML under the figure} for every output."""
    return {o.get_attribute("data-output"): o.inner_html() for o in fig.locator("output[data-output]").all()}


def printed_for(name, shown, native) -> dict:
    """What Python's formatter (format_outputs, the build's and the worker's) prints for the values
    the page shows, in Python's key order (the JSON in data-value went through a JS object, which
    puts integer-like keys first). The values are the page's own, not native's: rounding error
    (4e-16 here, 9e-16 in wasm) is printed as it is."""
    def order(value, like):
        if isinstance(like, dict):
            return {k: order(value[k], like[k]) for k in like}
        if isinstance(like, list):
            return [order(v, w) for v, w in zip(value, like)]
        return value
    return format_outputs(Outputs(order(shown, native), REGISTRY[name]))


def article_paths(site_root):
    """The slug of every built article."""
    return sorted(p.parent.name for p in (site_root / "posts").glob("*/index.html"))


def figure_pages() -> list[str]:
    """The gallery and every article that places a demo (with $HEADSPACE_TEST_DEMOS, comma-separated
    demo names: only the articles that place those)."""
    articles = [f"/posts/{p.parent.name}/" for p in sorted((PUBLIC / "posts").glob("*/index.html"))
                if 'data-demo="' in p.read_text() or "data-demo=" in p.read_text()]
    only = [n for n in os.environ.get("HEADSPACE_TEST_DEMOS", "").split(",") if n]
    if only:   # a quick look at new demos: the articles that place them, not the gallery
        return [a for a in articles if any(f'data-demo="{n}"' in (PUBLIC / a.strip("/") / "index.html").read_text()
                                           or f"data-demo={n} " in (PUBLIC / a.strip("/") / "index.html").read_text()
                                           for n in only)]
    return ["/gallery/", *articles]


def go_live(page):
    """Python ready and every figure drawn by plotly (as for a pointer on each)."""
    wait_ready(page)
    page.evaluate("() => window.headspace.settle()")
    page.wait_for_function("() => [...document.querySelectorAll('figure.demo [data-role=plot]')]"
                           ".every(p => p.querySelector('.main-svg'))", timeout=BOOT_MS)


@contextmanager
def opened(browser, url: str, **options):
    """A page at ``url`` in a browser context of its own (``options``: the context's: viewport,
    colour scheme, ...), closed after the block: ``with opened(browser, site_url + "/",
    viewport={"width": 390, "height": 844}) as page: ...``."""
    context = browser.new_context(**options)
    try:
        page = context.new_page()
        page.goto(url)
        yield page
    finally:
        context.close()


#: A figure's data as the build wrote them (its figure and its layout at each width).
PRERENDER = "f => JSON.parse(f.querySelector('script[data-role=\"prerender\"]').textContent)"


def figure_in(frame):
    """The figure of an embedded frame once it has settled, scrolled into view as a reader would
    (Chromium may throttle an off-screen cross-origin frame)."""
    if frame.parent_frame:
        frame.frame_element().scroll_into_view_if_needed()
    fig = frame.locator("figure.demo")
    frame.wait_for_function(f"() => ({SETTLED})(document.querySelector('figure.demo'))", timeout=BOOT_MS)
    return fig


def open_menu(page, fig, action: str):
    """Open the figure's menu and press one of its buttons, by keyboard."""
    summary = fig.locator(".demo-menu > summary")
    if not fig.locator(".demo-menu").evaluate("d => d.open"):
        summary.focus()
        page.keyboard.press("Enter")
    button = fig.locator(f'.demo-menu button[data-action="{action}"]').first
    button.focus()
    page.keyboard.press("Enter")


# ---------- waiting for the event that proves something did not happen ----------
# A test that checks "nothing happened" waits for a later event that must come after the thing
# it rules out, then looks: never a fixed sleep, which passes on a fast machine for the wrong
# reason and fails on a slow one.

def next_frame(page):
    """The page has drawn a frame since now (and run what a frame runs: animation-frame callbacks,
    IntersectionObserver notifications, a task after them)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r)))")


def worker_caught_up(page, timeout=BOOT_MS):
    """Every message the page sent Python's worker before now has been answered, and the page has
    handled each answer and drawn a frame after them. The worker answers its messages in order, so
    the reply to a stats message sent now comes after the reply to any call or refusal in flight.
    Python must be live (``stats`` starts the boot otherwise). If it does not come, the error says
    which step stalled (the worker's reply or the frame after it) and what the page held then."""
    flag = page.evaluate("""() => { const k = "caughtUp" + Math.random();
        window[k] = "sent";
        window.headspace.stats().then(() => { window[k] = "answered";
            requestAnimationFrame(() => setTimeout(() => { window[k] = true; })); });
        return k; }""")
    try:
        page.wait_for_function("k => window[k] === true", arg=flag, timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(f"the worker did not catch up within {timeout / 1000:.0f} s: "
                             f"{json.dumps(page.evaluate(CAUGHT_UP_STATE, flag))}") from None


# What a stalled wait for the worker reports: how far the stats message got ("sent": no reply;
# "answered": no frame since), the worker, and each figure's life and call in flight.
CAUGHT_UP_STATE = """k => ({step: window[k], workers: window.headspace.workers(),
    pythonReady: window.headspace.marks.pythonReady ?? null, visibility: document.visibilityState,
    figures: [...document.querySelectorAll("figure.demo")].map((f) => {
        const s = window.headspace.state(f);
        return [f.id, f.dataset.status, s ? {life: s.life, inFlight: Boolean(s.inFlight), queued: Boolean(s.queued)} : null]; })})"""


def in_view(page, selector: str, visible: bool = True, timeout=10_000):
    """Wait until the element is (or is no longer) near the viewport as the page's own observer sees
    it (demos.js: ``rootMargin: 100px``). An IntersectionObserver made now is told after every
    observer made before it in the same frame, so when this returns the page's observer has run
    its callback, and the microtasks that callback queued."""
    flag = page.evaluate("""([sel, want]) => { const k = "inView" + Math.random();
        const o = new IntersectionObserver((entries) => {
            if (entries.some((e) => e.isIntersecting === want)) { o.disconnect(); window[k] = true; }
        }, { rootMargin: "100px" });
        o.observe(document.querySelector(sel));
        return k; }""", [selector, visible])
    page.wait_for_function("k => window[k] === true", arg=flag, timeout=timeout)


def page_started(page):
    """The page's own start-up has had its turn: the load event has fired, a frame has been drawn
    and the browser has been idle once (demos.js starts what waits for the load, first-paint.js's
    afterPageLoad, and idle-time work then)."""
    page.wait_for_function("() => document.readyState === 'complete'", timeout=BOOT_MS)
    page.evaluate("""() => new Promise((resolve) => requestAnimationFrame(() =>
        (window.requestIdleCallback || setTimeout)(() => setTimeout(resolve))))""")
