"""The phone section of scripts/bench (issue 32): every article, cold, on an emulated phone, through
an emulated mobile link; how soon a reader's first touch of a figure is answered, and what it cost.

    scripts/bench --phone [--phone-articles polariser,...] [--phone-profiles slow4g,fast4g]
                          [--phone-python-slow polariser,...]   (profiles: slow4g, fast4g, desktop)
                          [--phone-public DIR]   (another build of the same pages, to compare side by side)

A visit: a fresh browser context (empty caches, service workers blocked), 390 x 844 CSS px at 3x,
touch, the page's main thread slowed 4x (sitebuild.browser.PHONE; the worker runs at full speed,
Chromium cannot slow it), served by sitebuild.throttle through one downlink shared by the page
and its worker (slow 4G: 1.6 Mbps, 150 ms; fast 4G: 9 Mbps, 60 ms), text and wasm gzipped as the deploy
does; and, as a reference row, the same visit as a desktop reader makes it (1280 x 900, no slowdown,
the same server unthrottled). Measured from the page's behaviour only (the DOM contract in
docs/contracts.md, "A demo in the page", and window.headspace):

- FCP: the page's first-contentful-paint entry; DOMContentLoaded (the page parsed), and when the page's
  script was first seen listening to the first figure.
- first figure interactive: as soon as the page has painted (in the paint observer's own task),
  the first figure's first control (a range, else a select, else a checkbox) is moved to another
  valid value as a touch does (pointerover, pointerdown, touchstart, the value, input, pointerup,
  touchend, change); if the page's script was not listening to that figure yet (no window.headspace,
  or ``window.headspace.wired(fig)`` false: its markup not yet parsed), it is moved again once it is. Interactive is the first moment after the last move when every
  ``output[data-output]``'s data-value equals the native outputs for the figure's parameters
  (``window.headspace.params(fig)``, run natively with the registry here, numbers within 1e-9)
  and it was drawn again (data-render-count: by Python; data-answer-count: from the build). Also as a difference to
  FCP (target: within 2 s on slow 4G).
- every figure interactive: each other figure in turn is scrolled to the middle of the screen and
  its first control moved the same way; time from the move to its correct drawing. Each figure is
  waited for at most FIGURE_WAIT_S before the next one is moved; it is still watched, so a late
  answer (Python's) is reported with its time.
- Python live: ``window.headspace.marks.pythonReady`` (ms from navigation start), or None if it did
  not come within the profile's cap (PYTHON_CAP_S) or the page reported an error (kept).
- where the first touch waited: when the HTML, the page's script and the first answers file had
  arrived (Resource Timing's responseEnd), and the main thread's long tasks (over 50 ms) from FCP to
  first interactive; a touch waiting on the link shows late arrivals, one waiting on the main thread
  (the page being parsed and laid out at 4x) shows early arrivals and long tasks.
- bytes the server sent, as sent (gzipped text) and raw: before FCP, before first interactive,
  before Python live, and in all by the end of the visit (by kind, as bench/weight.py counts);
  the page's JS heap at the end (CDP Runtime.getHeapUsage, main thread).

On slow 4G Python live is waited for only on PYTHON_SLOW_ARTICLES (its ~20 MB take most of two
minutes an article at 1.6 Mbps); elsewhere a visit ends once every figure was moved and waited for.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

from weight import ARTICLES, by_kind

from sitebuild import throttle
from sitebuild.browser import PHONE, PHONE_CPU_SLOWDOWN, phone_page

ROOT = Path(__file__).resolve().parent.parent
PROFILES = ("slow4g", "fast4g", "desktop")
# A reference row: this machine as a desktop reader has it (no link throttling, no CPU slowdown,
# 1280x900, no touch), through the same server so its bytes are counted the same way.
DESKTOP = throttle.Profile("desktop", 10**12, 0.0)
DESKTOP_PAGE = {"cpu_slowdown": 1, "viewport": {"width": 1280, "height": 900}, "device_scale_factor": 1,
                "is_mobile": False, "has_touch": False}
PYTHON_CAP_S = {"slow4g": 150, "fast4g": 90, "desktop": 60}  # from navigation start
FIRST_CAP_S = 30  # first figure interactive, when Python live is not waited for
FCP_CAP_S = 30
FIGURE_WAIT_S = 4  # per other figure, before the next one is moved
AFTER_LIVE_S = 20  # once Python is live, to let the moved figures be drawn by it
PYTHON_SLOW_ARTICLES = ("polariser", "composition-and-subspaces")  # the note, and the heaviest article
TOLERANCE = 1e-9  # native x86 numpy against Pyodide's wasm numpy (tests/support.py)
POLL_S = 0.25

# Installed before any of the page's scripts: watches every figure it moves, and moves the first
# figure's first control right after the first contentful paint.
PHONE_JS = r"""(() => {
  if (window.top !== window) return;
  const P = window.__phone = {timeOrigin: performance.timeOrigin, fcp: null, api: null, moves: [], history: {}, taken: {}};
  const figs = () => [...document.querySelectorAll('figure.demo')];
  // figures drawn for a setting: by Python (data-render-count) or from the build's answers (data-answer-count)
  const drawn = (fig) => Number(fig.dataset.renderCount || 0) + Number(fig.dataset.answerCount || 0);
  const control = (fig) => {
    const named = [...fig.querySelectorAll('.demo-controls [name]')];
    return named.find(c => c.type === 'range') || named.find(c => c.tagName === 'SELECT')
        || named.find(c => c.type === 'checkbox') || null;
  };
  const another = (el) => {  // a valid value a third of the range away (tests/browser/test_every_demo.py)
    if (el.type === 'checkbox') { el.checked = !el.checked; return el.checked; }
    if (el.tagName === 'SELECT') { el.selectedIndex = (el.selectedIndex + 1) % el.options.length; return el.value; }
    const lo = Number(el.min), hi = Number(el.max), step = Number(el.step) || (hi - lo) / 10;
    const n = Math.round((hi - lo) / step), k = Math.round((Number(el.value) - lo) / step);
    el.value = String(lo + ((k + Math.max(1, Math.floor(n / 3))) % (n + 1)) * step);
    return el.value;
  };
  const snapshot = (fig) => ({t: performance.now(), count: drawn(fig), status: fig.dataset.status,
    outputs: Object.fromEntries([...fig.querySelectorAll('output[data-output]')].map(o => [o.dataset.output, o.dataset.value]))});
  const watch = (i) => {
    if (P.history[i]) return;
    const fig = figs()[i];
    P.history[i] = [snapshot(fig)];
    P.taken[i] = 0;
    new MutationObserver(() => {
      const s = snapshot(fig), last = P.history[i][P.history[i].length - 1];
      if (s.count !== last.count || s.status !== last.status || JSON.stringify(s.outputs) !== JSON.stringify(last.outputs)) P.history[i].push(s);
    }).observe(fig, {attributes: true, subtree: true, attributeFilter: ['data-render-count', 'data-answer-count', 'data-value', 'data-status']});
  };
  // the page's script listens to this figure: it runs, and has wired the figure (demos.js wires each
  // figure once its markup is parsed; an older page wired them all at once)
  const listening = (fig) => Boolean(window.headspace && window.headspace.params
    && (!window.headspace.wired || window.headspace.wired(fig)));
  const fire = (el, type, Kind, extra) => {
    try { el.dispatchEvent(new Kind(type, {bubbles: true, cancelable: true, ...extra})); } catch (e) { /* no TouchEvent */ }
  };
  P.move = (i) => {
    const fig = figs()[i], el = fig && control(fig);
    if (!el) return null;
    watch(i);
    const box = fig.getBoundingClientRect();
    const before = drawn(fig);
    const touch = {pointerType: 'touch', isPrimary: true, pointerId: 7};
    fire(el, 'pointerover', PointerEvent, touch); fire(el, 'pointerdown', PointerEvent, touch);
    fire(el, 'touchstart', window.TouchEvent || Event, {});
    const value = another(el);
    el.dispatchEvent(new Event('input', {bubbles: true}));
    fire(el, 'pointerup', PointerEvent, touch); fire(el, 'touchend', window.TouchEvent || Event, {});
    el.dispatchEvent(new Event('change', {bubbles: true}));
    const api = listening(fig);
    const m = {figure: i, demo: fig.dataset.demo, control: el.name, value, t: performance.now(), before,
      params: api ? window.headspace.params(fig) : null, onScreen: box.top < innerHeight && box.bottom > 0};
    P.moves.push(m);
    return m;
  };
  P.take = () => {  // what changed since the last call (keeps the page's work per poll small)
    const out = {fcp: P.fcp, api: P.api, first: P.first, moves: P.moves.length, history: {},
      pythonReady: (window.headspace && window.headspace.marks && window.headspace.marks.pythonReady) || null,
      errors: figs().filter(f => f.dataset.status === 'error').map(f => (f.querySelector('[data-role=error]') || {}).textContent || 'error')};
    for (const i of Object.keys(P.history)) { out.history[i] = P.history[i].slice(P.taken[i]); P.taken[i] = P.history[i].length; }
    return out;
  };
  const first = () => {  // the first figure with a control to move (waited for while the page is parsed)
    const i = figs().findIndex(control);
    if (i < 0 && document.readyState === 'loading') return void setTimeout(first, 20);
    P.first = i;
    if (i < 0) return;
    const fig = figs()[i], box = fig.getBoundingClientRect();
    P.firstOnScreen = box.top < innerHeight && box.bottom > 0;
    if (!P.firstOnScreen) fig.scrollIntoView({block: 'center'});  // a reader scrolls to it
    P.move(i);
    if (listening(fig)) { P.api = P.moves[0].t; return; }
    const again = () => {  // the page was not listening yet: move once more when it is
      if (!listening(fig)) return void setTimeout(again, 20);
      P.api = performance.now();
      P.move(i);
    };
    again();
  };
  P.longTasks = [];  // the main thread's tasks over 50 ms: what a touch waits behind
  try {
    new PerformanceObserver((list) => { for (const e of list.getEntries()) P.longTasks.push([e.startTime, e.duration]); })
      .observe({type: 'longtask', buffered: true});
  } catch (e) { /* no long task timing */ }
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.name === 'first-contentful-paint' && P.fcp === null) { P.fcp = e.startTime; first(); }
  }).observe({type: 'paint', buffered: true});
})();"""


def json_close(got, want, tol: float = TOLERANCE) -> bool:
    """Equal JSON trees, numbers within ``tol`` (tests/support.py's assert_json_close, as a bool)."""
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(json_close(got[k], want[k], tol) for k in want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(json_close(g, w, tol) for g, w in zip(got, want))
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return got == want
    return (isinstance(got, (int, float)) and not isinstance(got, bool)
            and math.isclose(got, want, rel_tol=tol, abs_tol=tol))


class Native:
    """The registry's outputs, run here, for the parameters a figure holds (cached by parameters)."""

    def __init__(self):
        from headspace_site.demos import REGISTRY
        self.registry = REGISTRY
        self.cache: dict[str, dict] = {}

    def outputs(self, demo: str, params: dict) -> dict:
        key = demo + json.dumps(params, sort_keys=True)
        if key not in self.cache:
            self.cache[key] = self.registry[demo].run(params)["outputs"]
        return self.cache[key]


class Figure:
    """One moved figure: its moves, what the page showed after them, when it was drawn correctly."""

    def __init__(self, index: int):
        self.index = index
        self.moves: list[dict] = []
        self.history: list[dict] = []
        self.drawn: dict | None = None  # the snapshot that first showed the right answer

    def check(self, native: Native) -> None:
        if self.drawn or not self.moves or self.moves[-1]["params"] is None:
            return
        last, first = self.moves[-1], self.moves[0]
        want = native.outputs(last["demo"], last["params"])
        for s in self.history:
            if s["t"] < last["t"] or s["count"] <= first["before"]:
                continue
            shown = {k: json.loads(v) for k, v in s["outputs"].items() if v is not None}
            if set(shown) <= set(want) and all(json_close(v, want[k]) for k, v in shown.items()):
                self.drawn = s
                return

    def report(self) -> dict:
        m = self.moves[0] if self.moves else {}
        out = {"demo": m.get("demo"), "control": m.get("control"), "moved_at_ms": r(m.get("t")),
               "moves": len(self.moves), "on_screen": m.get("onScreen"),
               "params": self.moves[-1]["params"] if self.moves else None,
               "interactive_ms": r(self.drawn["t"]) if self.drawn else None,
               "latency_ms": r(self.drawn["t"] - m["t"]) if self.drawn else None,
               "status_when_drawn": self.drawn["status"] if self.drawn else None,
               "last_seen": {k: self.history[-1][k] for k in ("t", "count", "status")} if self.history else None}
        return out


def r(x):
    return None if x is None else round(x)


class Visit:
    """One cold visit of one article through one link."""

    def __init__(self, browser, server, article: str, native: Native, desktop: bool = False):
        self.server, self.article, self.native = server, article, native
        self.page, self.cdp = phone_page(browser, **(DESKTOP_PAGE if desktop else {}))
        self.page.add_init_script(PHONE_JS)
        self.figures: dict[int, Figure] = {}
        self.state: dict = {}
        self.start = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def poll(self) -> dict:
        """Take what the page recorded since the last poll; check every moved figure against native."""
        try:
            got = self.page.evaluate("() => window.__phone ? window.__phone.take() : null")
        except Exception as err:  # the page is busy navigating; try again
            return {"error": str(err)}
        if not got:
            return {}
        self.state.update({k: got[k] for k in ("fcp", "api", "first", "pythonReady", "errors")})
        if got["moves"] > sum(len(f.moves) for f in self.figures.values()):
            for m in self.page.evaluate("() => window.__phone.moves"):
                fig = self.figures.setdefault(m["figure"], Figure(m["figure"]))
                if not any(x["t"] == m["t"] for x in fig.moves):
                    fig.moves.append(m)
        for i, entries in got["history"].items():
            self.figures.setdefault(int(i), Figure(int(i))).history.extend(entries)
        for fig in self.figures.values():
            if fig.moves and fig.moves[-1]["params"] is None:  # moved before the page's script ran
                fig.moves[-1]["params"] = self.page.evaluate("i => window.headspace && window.headspace.params("
                                                             "document.querySelectorAll('figure.demo')[i])", fig.index)
            fig.check(self.native)
        return got

    def wait(self, until, cap_s: float) -> bool:
        """Poll until ``until()`` or ``cap_s`` seconds from the start of the visit."""
        while self.elapsed() < cap_s:
            self.poll()
            if until():
                return True
            time.sleep(POLL_S)
        self.poll()
        return bool(until())


def visit(browser, link: str, article: str, native: Native, python_wait: bool, public: Path | None = None) -> dict:
    """A cold visit of ``article`` through a fresh server of ``link`` (of the build in ``public``,
    the site's by default): see the module docstring."""
    server = throttle.serve(DESKTOP if link == "desktop" else link, **({"directory": public} if public else {}))
    v = Visit(browser, server, article, native, desktop=link == "desktop")
    python_cap = PYTHON_CAP_S[link]
    try:
        v.page.goto(f"{server.url}/posts/{article}/", wait_until="commit", timeout=FCP_CAP_S * 1000)
        figures = None
        if not v.wait(lambda: v.state.get("fcp") is not None, FCP_CAP_S):
            raise RuntimeError(f"{article}: no first contentful paint within {FCP_CAP_S} s")
        v.wait(lambda: v.state.get("first") is not None, FCP_CAP_S + 5)
        index = v.state.get("first")  # the first figure with a control to move (-1: none)
        python_done = lambda: bool(v.state.get("pythonReady") or v.state.get("errors"))  # noqa: E731

        def first_done() -> bool:
            if index in v.figures and v.figures[index].drawn is not None:
                return True
            live = v.state.get("pythonReady")
            return bool(v.state.get("errors")) or bool(live and v.elapsed() > live / 1000 + AFTER_LIVE_S)
        if index is not None and index >= 0:
            v.wait(first_done, python_cap if python_wait else FIRST_CAP_S)
        # every other figure, in reading order, scrolled to and moved (counted once the page is parsed)
        v.page.wait_for_function("() => document.readyState !== 'loading'", timeout=FCP_CAP_S * 1000)
        figures = v.page.evaluate("() => document.querySelectorAll('figure.demo').length")
        for i in range(figures):
            if i == index:
                continue
            moved = v.page.evaluate("""i => { const f = document.querySelectorAll('figure.demo')[i];
                f.scrollIntoView({block: 'center'}); return new Promise(r => requestAnimationFrame(() => r(window.__phone.move(i)))); }""", i)
            if moved is None:
                continue  # no range, select or checkbox to move
            v.wait(lambda: i in v.figures and v.figures[i].drawn is not None, v.elapsed() + FIGURE_WAIT_S)
        if python_wait:
            v.wait(python_done, python_cap)
            if v.state.get("pythonReady"):
                v.wait(lambda: all(f.drawn for f in v.figures.values() if f.moves), v.elapsed() + AFTER_LIVE_S)
        v.poll()
        heap = v.cdp.send("Runtime.getHeapUsage")
        out = summarise(v, server, figures, python_wait, python_cap, heap)
    finally:
        v.page.context.close()
        server.shutdown()
    return out


def summarise(v: Visit, server, figures, python_wait, python_cap, heap) -> dict:
    traffic = server.traffic
    origin = v.page.evaluate("() => window.__phone.timeOrigin") / 1000  # s since the epoch, as the server's clock
    at = lambda ms: None if ms is None else origin + ms / 1000  # noqa: E731
    fcp = v.state.get("fcp")
    first = v.figures.get(v.state.get("first"))
    first_ms = first.drawn["t"] if first and first.drawn else None
    python_ms = v.state.get("pythonReady")
    bytes_at = lambda ms: traffic.before(at(ms)) if ms is not None else None  # noqa: E731
    every = [v.figures[i].report() for i in sorted(v.figures)]
    failed = [s["t"] for f in v.figures.values() for s in f.history if s["status"] == "error"]
    error_ms = min(failed) if failed else None  # a watched figure first said it failed (a boot limit, say)
    latencies = [f["latency_ms"] for f in every if f["latency_ms"] is not None]
    return {
        "fcp_ms": r(fcp), "figures": figures, "first_on_screen": v.page.evaluate("() => window.__phone.firstOnScreen"),
        # the page's script seen listening to the first figure: at the first move if it already was
        "page_script_at_ms": r(v.state.get("api")),
        # the whole page parsed: before issue 32's early wiring, the page's script ran only after it
        "dom_content_loaded_ms": r(v.page.evaluate("() => performance.getEntriesByType('navigation')[0].domContentLoadedEventStart")),
        "first_moved_at_ms": r(first.moves[0]["t"]) if first and first.moves else None,
        "first_interactive_ms": r(first_ms), "first_interactive_after_fcp_ms": r(first_ms - fcp) if first_ms is not None else None,
        "every_figure": every, "figures_moved": sum(1 for f in every if f["moves"]),
        "figures_interactive": len(latencies), "worst_latency_ms": max(latencies) if latencies else None,
        "python_live_ms": r(python_ms), "python_waited": python_wait, "python_cap_s": python_cap if python_wait else None,
        "errors": v.state.get("errors") or [], "error_at_ms": r(error_ms), "bytes_before_error": bytes_at(error_ms),
        "bytes_before_fcp": bytes_at(fcp), "bytes_before_first_interactive": bytes_at(first_ms),
        "bytes_before_python_live": bytes_at(python_ms), "bytes_total": traffic.before(),
        "bytes_total_by_kind": by_kind({p: b["sent"] for p, b in traffic.by_path().items()}),
        "files_before_first_interactive": traffic.by_path(at(first_ms)) if first_ms is not None else None,
        "files_before_python_live": traffic.by_path(at(python_ms)) if python_ms is not None else None,
        **arrivals(v, fcp, first_ms),
        "js_heap_bytes": heap["usedSize"], "js_heap_total_bytes": heap["totalSize"],
        "visit_s": round(v.elapsed(), 1),
    }


ARRIVALS_JS = r"""() => {
  const nav = performance.getEntriesByType('navigation')[0], res = performance.getEntriesByType('resource');
  const end = (test) => { const e = res.find((x) => test(x.name)); return e ? e.responseEnd : null; };
  return {html: nav.responseEnd, script: end((n) => /\/js\/demos\.[0-9a-f]+\.js$/.test(n)),
          answers: end((n) => n.includes('/answers/')), longTasks: window.__phone.longTasks};
}"""


def arrivals(v: Visit, fcp, first_ms) -> dict:
    """When the HTML, the page's script and the first answers file had arrived (ms from navigation),
    and the main thread's long tasks (over 50 ms) from FCP to first interactive: tells a touch waiting
    on the link from one waiting on the main thread."""
    got = v.page.evaluate(ARRIVALS_JS)
    busy = None
    if fcp is not None and first_ms is not None:
        busy = sum(max(0.0, min(t + d, first_ms) - max(t, fcp)) for t, d in got["longTasks"])
    return {"html_arrived_ms": r(got["html"]), "script_arrived_ms": r(got["script"]),
            "first_answers_arrived_ms": r(got["answers"]),
            "long_tasks_fcp_to_first_ms": r(busy), "long_tasks_ms": r(sum(d for _, d in got["longTasks"]))}


def run(playwright, chromium: str, args: list[str], articles=ARTICLES, profiles=PROFILES,
        python_slow=PYTHON_SLOW_ARTICLES, public: Path | None = None) -> dict:
    """Every article through every profile, cold; returns the report (and prints each row)."""
    for name in profiles:
        if name != "desktop":
            throttle.profile(name)  # an unknown name fails before anything runs
    unknown = sorted(set(articles) - set(ARTICLES))
    if unknown:
        raise ValueError(f"unknown article(s) {unknown}; choose from: {', '.join(ARTICLES)}")
    native = Native()
    t0 = time.time()
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "load_average": os.getloadavg(),
              "links": {n: {"bytes_per_s": throttle.profile(n).rate, "rtt_ms": throttle.profile(n).rtt * 1000}
                        for n in profiles if n != "desktop"},
              "desktop_reference": {**DESKTOP_PAGE, "link": "unthrottled"},
              "compression": "gzip (level 6), as the deploy's host: " + " ".join(throttle.devserver.COMPRESSIBLE)
                             + "; wheels, zips and models as they are",
              "phone": {**PHONE, "cpu_slowdown": PHONE_CPU_SLOWDOWN,
                        "cpu_slowdown_covers": "the page's main thread only; the worker (Python) runs at this machine's speed"},
              "caps_s": {"python": PYTHON_CAP_S, "first_interactive_without_python_wait": FIRST_CAP_S,
                         "per_other_figure": FIGURE_WAIT_S, "after_python_live": AFTER_LIVE_S},
              "python_waited_on_slow4g": list(python_slow), "service_workers": "blocked", "articles": {}}
    browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=args)
    try:
        for article in articles:
            for link in profiles:
                wait = link != "slow4g" or article in python_slow
                try:
                    row = visit(browser, link, article, native, wait, public)
                except Exception as err:  # one article's failure is reported, the others still run
                    row = {"error": f"{type(err).__name__}: {err}"}
                report["articles"].setdefault(article, {})[link] = row
                print_row(article, link, row)
    finally:
        browser.close()
    report["load_average_after"] = os.getloadavg()
    report["seconds"] = round(time.time() - t0)
    return report


def fmt_ms(ms) -> str:
    return "    -   " if ms is None else f"{ms / 1000:6.1f} s"


def fmt_bytes(b) -> str:
    return "   -   " if b is None else f"{b['sent'] / 1e6:5.2f}/{b['raw'] / 1e6:5.2f} MB"


LARGEST_FILES = 6  # the files named under each row, largest as sent first


def print_header() -> None:
    print("phone: 390x844 touch, page CPU 4x, one shared link (text and wasm gzipped); bytes as sent/raw; cold; service workers blocked")
    print(f"{'article':38s} {'link':7s} {'FCP':>8s} {'first interactive':>18s} {'(-FCP)':>8s} {'every figure':>16s} "
          f"{'Python live':>11s}  {'before interactive':>18s} {'before live':>18s} {'total':>18s} {'heap':>7s}")


def print_row(article: str, link: str, row: dict) -> None:
    if "error" in row:
        print(f"{article:38s} {link:7s} error: {row['error'][:300]}")
        return
    python = fmt_ms(row["python_live_ms"])
    if row["python_live_ms"] is None:
        python = (f"none<{row['python_cap_s']}s" if row["python_waited"] else "not waited")
        if row["errors"]:
            python = f"error@{row['error_at_ms'] / 1000:.0f}s" if row.get("error_at_ms") else "error"
    every = f"{row['figures_interactive']}/{row['figures_moved']}, worst {fmt_ms(row['worst_latency_ms']).strip()}"
    print(f"{article:38s} {link:7s} {fmt_ms(row['fcp_ms'])} {fmt_ms(row['first_interactive_ms']):>18s} "
          f"{fmt_ms(row['first_interactive_after_fcp_ms'])} {every:>16s} {python:>11s}  "
          f"{fmt_bytes(row['bytes_before_first_interactive']):>18s} {fmt_bytes(row['bytes_before_python_live']):>18s} "
          f"{fmt_bytes(row['bytes_total']):>18s} {row['js_heap_bytes'] / 1e6:5.1f}MB")
    if row.get("html_arrived_ms") is not None:  # the link's share of the first touch, and the main thread's
        print(f"{'':47s}arrived: HTML {fmt_ms(row['html_arrived_ms']).strip()}, script {fmt_ms(row['script_arrived_ms']).strip()}, "
              f"first answers {fmt_ms(row['first_answers_arrived_ms']).strip()}; script listening {fmt_ms(row['page_script_at_ms']).strip()}, "
              f"parsed {fmt_ms(row['dom_content_loaded_ms']).strip()}; long tasks FCP to first {row['long_tasks_fcp_to_first_ms']} ms "
              f"(all {row['long_tasks_ms']} ms)")
    for e in row["errors"][:1]:
        print(f"{'':47s}page said: {e[:200]}")
    files = row.get("files_before_python_live")
    if files:  # where the bytes before live go: what a cut would have to take from
        largest = sorted(files.items(), key=lambda kv: -kv[1]["sent"])[:LARGEST_FILES]
        print(f"{'':47s}largest before live (sent/raw): " + ", ".join(
            f"{path.rsplit('/', 1)[-1][:28]} {b['sent'] / 1e6:.2f}/{b['raw'] / 1e6:.2f} MB" for path, b in largest))


def main(argv=None) -> None:
    """Standalone: python bench/phone.py [--articles ...] (scripts/bench --phone builds first)."""
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright
    from sitebuild.browser import CHROMIUM, CHROMIUM_ARGS
    with sync_playwright() as p:
        report = bench(p, CHROMIUM, CHROMIUM_ARGS, args)
    print(f"phone report written to {write(report)}")


def add_arguments(parser) -> None:
    parser.add_argument("--phone-articles", default="", help=f"comma-separated (default every article: {','.join(ARTICLES)})")
    parser.add_argument("--phone-profiles", default=",".join(PROFILES), help="comma-separated link profiles")
    parser.add_argument("--phone-python-slow", default=",".join(PYTHON_SLOW_ARTICLES),
                        help="articles whose Python live is waited for on slow 4G (about 100 s each)")
    parser.add_argument("--phone-public", default="", help="serve this built site instead of site/public "
                        "(another build of the same pages, for a side-by-side comparison)")


def bench(playwright, chromium, args, options) -> dict:
    split = lambda s: [x for x in s.split(",") if x]  # noqa: E731
    print_header()
    return run(playwright, chromium, args, articles=split(options.phone_articles) or ARTICLES,
               profiles=split(options.phone_profiles), python_slow=split(options.phone_python_slow),
               public=Path(options.phone_public) if getattr(options, "phone_public", "") else None)


def write(report: dict) -> Path:
    path = ROOT / "bench" / "results" / "phone.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    return path


if __name__ == "__main__":
    main()
