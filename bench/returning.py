"""The returning reader (issue 13): time to the first Python-driven render on a second visit with a
warm profile, ours against the plain Pyodide page's second visit, measured side by side.

A visit is a browser started on a profile directory that a first visit filled, as a reader who
comes back another day: nothing survives in memory, only the disk caches (HTTP cache, wasm code
cache, the service worker's Cache Storage). Ours is measured twice, with its service worker and
with service workers blocked (the HTTP cache alone), to show what the service worker adds. One
more traced second visit of each says whether the wasm came from V8's code cache (compiled on the
first visit) or was compiled again. Ours is also measured with the page's main thread at 4x (the
phone profile), and each of ours reports the worker's boot steps (``boot_steps``), so that a
returning reader's wait can be split into the runtime's read from the cache, the interpreter's
start, numpy's import and the page's demos (docs/decisions/0011-returning-reader-and-bytes.md).

``navigation`` measures the next article (issue 51): a returning reader opens article A, waits until
Python is live, and follows A's link to article B; B's Python live after the click, with the page
kept (navigate.js: the worker, booted, imports B's demos) against a full navigation (the switch
off), desktop and with the page's main thread at 4x, interleaved in one run.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
from pathlib import Path

from sitebuild.browser import PHONE_CPU_SLOWDOWN

BOOT_MS = 120_000
OURS_URL = "/posts/polariser/"
PLAIN_URL = "/_bench-plain/"

FIRST_PYTHON_RENDER = """async () => {
    await window.headspace.ready();
    const fig = document.querySelector('figure.demo');
    const done = new Promise(r => fig.addEventListener('demo:rendered', r, {once: true}));
    const input = fig.querySelector('input[name=theta]');
    input.value = '31'; input.dispatchEvent(new Event('input', {bubbles: true}));
    await done;
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    return performance.now();
}"""
LIVE = "() => [...document.querySelectorAll('figure.demo')].every(f => ['ready', 'error'].includes(f.dataset.status))"
# The service worker has kept what the page used: it says so once every file is in its cache
# (sw-register.js marks <html data-offline-copy="kept">). A predicate, not a promise: Playwright's
# wait_for_function takes a returned promise as a truthy value and would not wait at all.
KEPT = "() => document.documentElement.dataset.offlineCopy === 'kept'"
FIRST_PAINT = "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime ?? null"


def _launch(playwright, profile, chromium, args, service_workers):
    return playwright.chromium.launch_persistent_context(
        profile, executable_path=chromium, headless=True, args=args, service_workers=service_workers,
        viewport={"width": 1280, "height": 2600})


def _ours(page, base) -> float:
    page.goto(base + OURS_URL)
    return page.evaluate(FIRST_PYTHON_RENDER)


def _python_live(page) -> float | None:
    """When the page said Python was live (ms from navigation start: ``marks.pythonReady``)."""
    return page.evaluate("() => (window.headspace && window.headspace.marks && window.headspace.marks.pythonReady) || null")


# The worker's boot steps as the page heard them (ms from navigation start): boot1 the runtime's
# download asked for, boot2 the standard library in hand (Pyodide's loader starts), boot3 the
# interpreter running (loadPyodide done: wasm instantiated, Python initialised), boot4 the wheels
# installed and numpy and headspace_site.runtime imported, pythonReady the page's demos imported.
BOOT_MARKS = ("boot1", "boot2", "boot3", "boot4", "pythonReady")
STEP_NAMES = {"boot2": "runtime from cache", "boot3": "interpreter", "boot4": "wheels+numpy+runtime",
              "pythonReady": "page's demos"}


def _boot_marks(page) -> dict:
    return page.evaluate("(names) => Object.fromEntries(names.map(n => [n, (window.headspace && window.headspace.marks"
                         " && window.headspace.marks[n]) || null]))", list(BOOT_MARKS))


def boot_steps(marks: dict) -> dict:
    """Each boot step's duration (ms), from the marks of one visit: where a returning reader's wait goes."""
    out = {}
    for before, after in zip(BOOT_MARKS, BOOT_MARKS[1:]):
        if marks.get(before) is not None and marks.get(after) is not None:
            out[STEP_NAMES[after]] = marks[after] - marks[before]
    return out


def _plain(page, base) -> float:
    page.goto(base + PLAIN_URL)
    page.wait_for_function("() => window.plainFirstFigure", timeout=BOOT_MS)
    return page.evaluate("() => window.plainFirstFigure")


# V8's trace events for a wasm module: "wasm.Deserialize" when it comes from the code cache (compiled
# on an earlier visit), "wasm.TopTierCompilation" / "wasm.CompileLazy" for code it compiles now.
WASM_TRACE_CATEGORIES = "v8.wasm"


def wasm_compilation(trace_file: str) -> dict:
    """What the visit traced in ``trace_file`` did with wasm: modules deserialised from V8's code
    cache, and the time spent compiling (the numpy extension modules, loaded from wheels by
    WebAssembly.instantiate, are never cached, so some compilation is always left)."""
    text = Path(trace_file).read_text(errors="replace").rstrip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # the browser closed before the trace's end was written
        data = json.loads(text.rstrip(",") + "]}")
    events = data["traceEvents"] if isinstance(data, dict) else data
    total = lambda name: sum(e.get("dur", 0) for e in events if e.get("name") == name) / 1000  # noqa: E731
    return {"deserialised_modules": sum(e.get("name") == "wasm.Deserialize" for e in events),
            "serialised_modules": sum(e.get("name") == "wasm.SerializeModule" for e in events),
            "top_tier_compile_ms": round(total("wasm.TopTierCompilation")),
            "lazy_compile_ms": round(total("wasm.CompileLazy"))}


def second_visit(playwright, chromium, args, base, counter, which: str, service_workers="allow",
                 trace: bool = False, cpu_slowdown: float = 1) -> dict:
    """First visit (then let the service worker keep what the page used), close the browser,
    start it again on the same profile and time the second visit; with ``trace``, the second
    visit is traced (its time then includes the tracing) and what it compiled is reported.
    ``cpu_slowdown``: the second visit's main thread that many times slower (the phone profile: 4;
    Chromium cannot slow the worker, so Python's own boot runs at this machine's speed)."""
    measure = _ours if which == "ours" else _plain
    profile = tempfile.mkdtemp(prefix="headspace-returning-")
    try:
        context = _launch(playwright, profile, chromium, args, service_workers)
        page = context.new_page()
        first = measure(page, base)
        if which == "ours":
            page.wait_for_function(LIVE, timeout=BOOT_MS)
            if service_workers == "allow":  # registered once the figures are live, it copies what the page used
                page.wait_for_function(KEPT, timeout=30_000)
        context.close()
        counter.clear()
        trace_file = str(Path(profile) / "trace.json")
        if trace:
            args = [*args, f"--trace-startup={WASM_TRACE_CATEGORIES}", f"--trace-startup-file={trace_file}",
                    "--trace-startup-format=json", "--trace-startup-duration=60"]
        context = _launch(playwright, profile, chromium, args, service_workers)
        page = context.new_page()
        if cpu_slowdown != 1:
            context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": cpu_slowdown})
        second = measure(page, base)
        live = _python_live(page) if which == "ours" else second
        marks = _boot_marks(page) if which == "ours" else {}
        controlled = page.evaluate("() => !!(navigator.serviceWorker && navigator.serviceWorker.controller)")
        # the second visit's first contentful paint: what starting Python earlier must not hold back
        paint = page.evaluate(FIRST_PAINT)
        served = dict(counter)
        context.close()
        runtime = {k: v for k, v in served.items() if k.startswith(("/pyodide/", "/vendor/", "/js/", "/css/", "/models/"))}
        out = {"first_visit_ms": first, "second_visit_ms": second, "python_live_ms": live, "first_paint_ms": paint,
               "controlled": controlled,
               "network_bytes": sum(served.values()), "runtime_network_bytes": sum(runtime.values()),
               "files": served, "boot_marks": marks, "boot_steps_ms": boot_steps(marks)}
        if trace:
            out["wasm"] = wasm_compilation(trace_file)
        return out
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def median_steps(rs: list[dict]) -> dict:
    """Each boot step's median over the runs that reported it."""
    names = [n for n in STEP_NAMES.values() if any(n in r["boot_steps_ms"] for r in rs)]
    return {n: statistics.median(r["boot_steps_ms"][n] for r in rs if n in r["boot_steps_ms"]) for n in names}


def _median_of(rs: list[dict], key: str):
    """The median of ``key`` over the runs that have it (None if none does)."""
    have = [r[key] for r in rs if r.get(key) is not None]
    return statistics.median(have) if have else None


def run(playwright, chromium, args, base, counter, runs: int = 3) -> dict:
    """Median over ``runs`` of each: plain, ours with the HTTP cache only, ours with the service worker."""
    variants = {"plain": ("plain", "allow"), "ours_http_cache": ("ours", "block"), "ours_service_worker": ("ours", "allow")}
    out = {}
    for name, (which, sw) in variants.items():
        rs = [second_visit(playwright, chromium, args, base, counter, which, sw) for _ in range(runs)]
        out[name] = {"second_visit_ms": statistics.median(r["second_visit_ms"] for r in rs),
                     "first_paint_ms": _median_of(rs, "first_paint_ms"),
                     "python_live_ms": statistics.median(r["python_live_ms"] for r in rs),
                     "first_visit_ms": statistics.median(r["first_visit_ms"] for r in rs),
                     "network_bytes": statistics.median(r["network_bytes"] for r in rs),
                     "runtime_network_bytes": max(r["runtime_network_bytes"] for r in rs),
                     "boot_steps_ms": median_steps(rs), "runs": rs}
    # The phone profile (issue 51): the page's main thread 4x slower on the second visit.
    rs = [second_visit(playwright, chromium, args, base, counter, "ours", "allow", cpu_slowdown=PHONE_CPU_SLOWDOWN)
          for _ in range(runs)]
    out["ours_service_worker_4x"] = {k: statistics.median(r[k] for r in rs) for k in ("second_visit_ms", "python_live_ms",
                                                                                      "first_visit_ms", "network_bytes")}
    out["ours_service_worker_4x"].update(runtime_network_bytes=max(r["runtime_network_bytes"] for r in rs),
                                         first_paint_ms=_median_of(rs, "first_paint_ms"),
                                         boot_steps_ms=median_steps(rs), runs=rs)
    for name in ("ours_http_cache", "ours_service_worker"):
        out[f"{name}_ratio"] = out[name]["second_visit_ms"] / out["plain"]["second_visit_ms"]
    # One more traced second visit each: did it compile again what the first visit compiled?
    for name, (which, sw) in variants.items():
        out[name]["wasm"] = second_visit(playwright, chromium, args, base, counter, which, sw, trace=True)["wasm"]
    out["next_article"] = navigation(playwright, chromium, args, base, runs)
    return out


# The next article: A links to B in its prose.
NAV_FROM, NAV_TO = "/posts/polariser/", "/posts/composition-and-subspaces/"
FULL_NAVIGATION = "window.HEADSPACE_IN_PAGE_NAVIGATION = false;"  # navigate.js's switch
CLICK_NEXT = """(href) => {
    const link = document.querySelector(`main a[href="${href}"]`);
    const at = performance.timeOrigin + performance.now();
    link.click();
    return at;
}"""
# B's figures answer from Python: in place, navigate.js's pageLive (its demos imported by the worker
# A booted); after a full navigation, the new document's pythonReady. Epoch ms, and B's first
# contentful paint (the build's drawings on screen) the same way.
B_LIVE = """(to) => {
    const m = window.headspace && window.headspace.marks;
    if (location.pathname !== to || !m) return null;
    const live = m.navigationStart != null ? m.pageLive : m.pythonReady;
    if (!live) return null;
    const paint = performance.getEntriesByName('first-contentful-paint')[0];
    const shown = m.navigationStart != null ? m.pageShown : (paint ? paint.startTime : null);
    return {live: performance.timeOrigin + live, shown: shown == null ? null : performance.timeOrigin + shown,
            wired: m.pageWired ? performance.timeOrigin + m.pageWired : null, workerMs: m.pageImportMs ?? null,
            setUp: m.pageSetUp ? performance.timeOrigin + m.pageSetUp : null,
            inPlace: m.navigationStart != null, navigations: window.headspace.navigations || 0};
}"""


def _next_article(playwright, chromium, args, base, profile, in_place: bool, cpu_slowdown: float) -> dict:
    """One reader on a warm profile: A until Python is live, then A's link to B; times from the click (ms)."""
    context = _launch(playwright, profile, chromium, args, "allow")
    try:
        if not in_place:
            context.add_init_script(FULL_NAVIGATION)
        page = context.new_page()
        if cpu_slowdown != 1:
            context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": cpu_slowdown})
        page.goto(base + NAV_FROM)
        page.evaluate("() => window.headspace.ready()")
        a_live = _python_live(page)
        clicked = page.evaluate(CLICK_NEXT, NAV_TO)
        page.wait_for_function(B_LIVE, arg=NAV_TO, timeout=BOOT_MS)
        if in_place:  # every figure set up (those off screen after the first answers)
            page.wait_for_function("() => window.headspace.marks.pageSetUp > 0", timeout=BOOT_MS)
        b = page.evaluate(B_LIVE, NAV_TO)
        assert b["inPlace"] == in_place, f"expected in_place={in_place}, the page says {b}"
        # in place: when B's first figures were wired, when all were, and the worker's own time for B (its demos imported)
        return {"a_python_live_ms": a_live, "b_python_live_ms": b["live"] - clicked,
                "b_shown_ms": None if b["shown"] is None else b["shown"] - clicked,
                "b_wired_ms": None if b["wired"] is None else b["wired"] - clicked, "b_worker_ms": b["workerMs"],
                "b_set_up_ms": None if b["setUp"] is None else b["setUp"] - clicked}
    finally:
        context.close()


def navigation(playwright, chromium, args, base, runs: int = 3) -> dict:
    """The next article on a warm profile (a first visit read A and B, and the service worker kept
    them), in place against a full navigation, desktop and 4x, each variant once per round."""
    profile = tempfile.mkdtemp(prefix="headspace-next-article-")
    try:
        context = _launch(playwright, profile, chromium, args, "allow")
        page = context.new_page()
        for path in (NAV_FROM, NAV_TO):  # the first visit: both articles, kept by the service worker
            page.goto(base + path)
            page.evaluate("() => window.headspace.ready()")
            page.wait_for_function(LIVE, timeout=BOOT_MS)
            page.wait_for_function(KEPT, timeout=30_000)
        context.close()
        variants = {"in_place": (True, 1), "full": (False, 1), "in_place_4x": (True, PHONE_CPU_SLOWDOWN),
                    "full_4x": (False, PHONE_CPU_SLOWDOWN)}
        rs = {name: [] for name in variants}
        for _ in range(runs):
            for name, (in_place, slowdown) in variants.items():
                rs[name].append(_next_article(playwright, chromium, args, base, profile, in_place, slowdown))
        out = {}
        for name, r in rs.items():
            out[name] = {k: statistics.median(x[k] for x in r) for k in ("a_python_live_ms", "b_python_live_ms")}
            for k in ("b_shown_ms", "b_wired_ms", "b_worker_ms", "b_set_up_ms"):
                known = [x[k] for x in r if x[k] is not None]
                out[name][k] = statistics.median(known) if known else None
            out[name]["runs"] = r
        return out
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def print_navigation(r: dict) -> None:
    print(f"next article ({NAV_FROM} -> {NAV_TO}, warm profile, A live first; ms from the click, medians):")
    for name, v in r.items():
        each = " / ".join(f"{x['b_python_live_ms']:.0f}" for x in v["runs"])
        split = (f"  (first wired {v['b_wired_ms']:.0f}, all {v.get('b_set_up_ms') or 0:.0f}, worker's import {v['b_worker_ms']:.0f})"
                 if v.get("b_wired_ms") is not None and v.get("b_worker_ms") is not None else "")
        print(f"  {name:12s} B on screen {v['b_shown_ms']:6.0f}  B Python live {v['b_python_live_ms']:6.0f} ({each})"
              f"  [A's own boot {v['a_python_live_ms']:.0f}]{split}")


def print_report(r: dict) -> None:
    plain = r["plain"]["second_visit_ms"]
    for name in ("plain", "ours_http_cache", "ours_service_worker", "ours_service_worker_4x"):
        v = r.get(name)
        if not v:
            continue
        ratio = v["second_visit_ms"] / plain
        live = f"  Python live {v['python_live_ms']:7.0f} ms" if v.get("python_live_ms") is not None else ""
        live += f"  first paint {v['first_paint_ms']:5.0f} ms" if v.get("first_paint_ms") is not None else ""
        print(f"returning reader {name:22s} first visit {v['first_visit_ms']:7.0f} ms  second visit {v['second_visit_ms']:7.0f} ms"
              f"{live}  ratio {ratio:.3f}  network {v['network_bytes']} B (runtime {v['runtime_network_bytes']} B)")
        if v.get("boot_steps_ms"):
            print("    worker's boot, medians: " + ", ".join(f"{k} {ms:.0f} ms" for k, ms in v["boot_steps_ms"].items()))
        w = v.get("wasm")
        if w:
            print(f"    wasm on the second visit: {w['deserialised_modules']} module(s) from V8's code cache,"
                  f" top-tier compile {w['top_tier_compile_ms']} ms, lazy compile {w['lazy_compile_ms']} ms")
    if r.get("next_article"):
        print_navigation(r["next_article"])
