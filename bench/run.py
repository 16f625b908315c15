"""scripts/bench: performance measured side by side in one run (the targets in docs/contracts.md).

Writes bench/results/bench.json (not in git), appends its headline numbers as one row to
bench/summary.md (bench/summary.py; --note says what the run was for), and prints each figure
with its ratio:

- first figure on screen, and first Python-driven render, cold: our post vs a
  plain page that loads the same Pyodide and numpy the naive way (main thread,
  load, import, compute, plot);
- second article, warm: bytes of runtime (/pyodide/) the server sent;
- the returning reader (bench/returning.py, with the weight section, or --returning-only): a second
  visit's first Python render and Python live, desktop and the 4x phone profile;
- a move to its drawing, p50 and p95, for every control of every demo in the gallery (each slider,
  select, tick box, number, matrix and token box, moved alone from the figure's starting settings):
  Python's drawing once live (a first move to a seed or model not seen before included), and the
  build's answer before it; desktop, and the 4x phone profile with the phone section;
- the worker's wasm heap before and after 2,000 slider moves;
- four figures embedded in a host page on another origin: time to all live and
  browser memory with one shared interpreter against one per figure (bench/embeds.py);
- all-pair composition scores vs TransformerLens (bench/composition.py, run in
  its own venv when scripts/bench could set it up);
- all-pair scores at Llama-2-7B shapes: time, memory beyond the inputs, and the
  bare-matmul floor (bench/scale.py; --skip-scale leaves it out);
- the zoo's training time per model, recorded and a short run timed now (bench/training.py;
  --skip-training leaves it out);
- the phone (bench/phone.py; --phone alone, --skip-phone leaves it out): every article cold on an
  emulated phone through slow and fast 4G, first paint to the first figure answering a touch,
  every figure, Python live, bytes before each (also in bench/results/phone.json);
- the Score-your-model page (bench/own_model.py; --own-model alone, --skip-own-model leaves it out):
  a GPT-2-small-shaped checkpoint scored in the page, desktop and phone, beside the same work natively.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from embeds import embeds_bench, print_embeds  # bench/ is this script's own folder
import own_model  # the Score-your-model page: a GPT-2-small-shaped checkpoint, in the page and natively
import phone  # the phone section: throttled link, 4x CPU, touch
import summary  # one row a run in bench/summary.md
from returning import FIRST_PYTHON_RENDER  # a slider move after Python is ready, to its repaint
from weight import weight_bench  # page weight, TBT, Lighthouse, the returning reader
from sitebuild import devserver
from sitebuild.browser import CHROMIUM, CHROMIUM_ARGS

PUBLIC = ROOT / "site" / "public"
BOOT_MS = 120_000


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def cold_load(browser, url, js_done: str) -> dict:
    # Tall enough that the article's figure is inside the first paint.
    context = browser.new_context(viewport={"width": 1280, "height": 2600})
    page = context.new_page()
    page.goto(url)
    page.wait_for_function(f"() => {js_done}", timeout=BOOT_MS)
    return context, page


def ours_cold(browser, base, intent=True):
    """Cold load of the polariser page to its first Python-driven render.

    ``intent``: the reader's pointer is over the figure from the start (they came to use it),
    so plotly loads while Python boots; without it, the slider move after Python is ready is
    the first sign of a reader, and plotly loads only then (the page's worst case)."""
    context, page = cold_load(browser, f"{base}/posts/polariser/", "window.headspace")
    if intent:  # a real mouse: the page loads plotly for a mouse, not for a touch or a bare event
        page.hover("figure.demo [data-role=plot]")
    first_python = page.evaluate(FIRST_PYTHON_RENDER)
    marks = page.evaluate("() => window.headspace.marks")
    # The build's static SVG is in the HTML, so the figure is on screen at the first
    # contentful paint (checked: the figure lies inside the viewport and holds the SVG).
    fcp, inside = page.evaluate("""() => {
        const fcp = performance.getEntriesByName('first-contentful-paint')[0].startTime;
        const fig = document.querySelector('figure.demo');
        return [fcp, fig.getBoundingClientRect().bottom <= innerHeight];
    }""")
    assert inside, "the figure must be inside the first paint's viewport"
    context.close()
    return {"first_figure_ms": fcp,
            # when each of the worker's boot steps began (demos.js marks boot1..boot4)
            **{f"{k}_ms": v for k, v in marks.items() if k.startswith("boot") and k[4:].isdigit()},
            "python_ready_ms": marks["pythonReady"], "first_python_render_ms": first_python}


def plain_cold(browser, base):
    context, page = cold_load(browser, f"{base}/_bench-plain/", "window.plainFirstFigure")
    t = page.evaluate("() => window.plainFirstFigure")
    context.close()
    return {"first_figure_ms": t, "first_python_render_ms": t}


def warm_second_article(playwright, base) -> dict:
    # A persistent profile has a disk cache like a reader's browser; an incognito
    # context's small memory cache would not keep the 10 MB wasm.
    import tempfile
    profile = tempfile.mkdtemp(prefix="headspace-bench-")
    context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    page = context.new_page()
    ready = "() => [...document.querySelectorAll('figure.demo')].every(f => ['ready', 'error'].includes(f.dataset.status))"
    page.goto(f"{base}/posts/polariser/")
    page.evaluate("() => window.headspace.ready()")
    devserver.Handler.bytes_served.clear()
    page.goto(f"{base}/posts/composition-and-subspaces/")
    page.evaluate("() => window.headspace.ready()")
    page.wait_for_function(ready, timeout=BOOT_MS)
    served = dict(devserver.Handler.bytes_served)
    context.close()
    shutil.rmtree(profile, ignore_errors=True)
    runtime = {k: v for k, v in served.items() if k.startswith("/pyodide/")}
    return {"runtime_bytes": sum(runtime.values()), "runtime_files": runtime,
            "all_bytes": sum(served.values())}


# One control of one figure moved ``moves`` times, each move timed from the input event to the frame
# after its drawing. ``name`` null: the figure's first range, else select, else checkbox (the drag and
# the heap). ``from``: "python" waits for Python's drawing (demo:rendered); "build" for the build's
# answer (data-answer-count), so a range moves on the grid the build answered (data-answered).
# Each kind moves as a reader moves it: a range mostly near steps, sometimes far; a select to the
# next option; a checkbox toggled; a number by a step; a matrix's first cell by a tenth; a token box
# to a new sequence of seeded ids within its bounds. The control goes back to its starting value at
# the end, so the next control is moved alone from the figure's starting settings. With Python, a
# move Python does not draw within reduce.js's CATCH_UP_MS is first drawn from the nearest answer
# the page has (a stand-in: data-catch-count): ``nears`` holds each move's time to that drawing's
# frame, or null where Python's came first.
CONTROL_JS = """async ([index, name, moves, pauseMs = 0, from = 'python', seed = 12345]) => {
    const FRAME_MS = 1000 / 60;
    const fig = document.querySelectorAll('figure.demo')[index];
    const controls = [...fig.querySelectorAll('.demo-controls [name]')];
    const el = name ? controls.find(c => c.getAttribute('name') === name)
        : controls.find(c => c.type === 'range') || controls.find(c => c.tagName === 'SELECT')
          || controls.find(c => c.type === 'checkbox') || controls[0];
    if (!el) return {error: `no control ${name}`};
    // (pages before issue 51 mark no kind: a --vs run against an older build reads it off the element)
    const kind = el.dataset.kind || (el.tagName === 'SELECT' ? 'select' : el.type);
    const cell = kind === 'matrix' ? el.querySelector('input') : null;
    const target = cell || el;
    const startValue = kind === 'checkbox' ? el.checked : target.value;
    const grid = from === 'build' && el.dataset.answered ? JSON.parse(el.dataset.answered) : null;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const step = (i) => {
        if (kind === 'range' && grid) {
            const at = grid.findIndex(v => Number(v) === Number(el.value));
            const k = ((at < 0 ? 0 : at) + 1 + (i * 7) % Math.max(1, grid.length - 1)) % grid.length;
            el.value = String(grid[k]);
        } else if (kind === 'range') {
            const lo = Number(el.min), hi = Number(el.max), by = Number(el.step) || (hi - lo) / 100;
            const n = Math.round((hi - lo) / by);
            let k = Math.round((Number(el.value) - lo) / by);
            k = (k + 1 + (i * 7) % Math.max(1, n - 1)) % (n + 1);
            el.value = String(lo + k * by);
        } else if (kind === 'select') el.selectedIndex = (el.selectedIndex + 1) % el.options.length;
        else if (kind === 'checkbox') el.checked = !el.checked;
        else if (kind === 'number') {
            const by = Number(el.step) || 1, lo = el.min === '' ? -Infinity : Number(el.min);
            const hi = el.max === '' ? Infinity : Number(el.max);
            let v = Number(el.value) + (i % 2 ? -by : by);
            if (v > hi || v < lo) v = Number(el.value) - (i % 2 ? -by : by);
            el.value = String(v);
        } else if (kind === 'matrix') cell.value = String(Math.round((Number(cell.value) + 0.1 * (i % 2 ? -1 : 1)) * 1e6) / 1e6);
        else if (kind === 'tokens') {
            const lo = Number(el.dataset.min), hi = Number(el.dataset.max), n = Number(el.dataset.length);
            const len = Math.max(2, Math.min(n, el.value.trim().split(/\\s+/).length));
            el.value = Array.from({length: len}, () => lo + Math.floor(rand() * (hi - lo + 1))).join(' ');
        }
    };
    const drawn = () => from === 'build' ? Number(fig.dataset.answerCount || 0) : Number(fig.dataset.renderCount || 0);
    const waitDrawn = (before, draws) => new Promise(r => {
        if (from !== 'build') return fig.addEventListener('demo:rendered', (e) => { draws.push(e.detail); r(); }, {once: true});
        const seen = new MutationObserver(() => { if (drawn() > before) { seen.disconnect(); draws.push(null); r(); } });
        seen.observe(fig, {attributes: true, attributeFilter: ['data-answer-count']});
    });
    const times = [], draws = [], nears = [];
    const catches = () => Number(fig.dataset.catchCount || 0);
    const moveOnce = async (change, i) => {
        const done = waitDrawn(drawn(), draws);
        let near = null;
        const caught = catches();
        const standIn = new MutationObserver(() => {
            if (catches() <= caught) return;
            standIn.disconnect();
            requestAnimationFrame(() => setTimeout(() => { near = performance.now() - t0; }, 0));
        });
        if (from !== 'build') standIn.observe(fig, {attributes: true, attributeFilter: ['data-catch-count']});
        // A reader's key or click lands anywhere in a frame: wait a fraction of a frame (an even,
        // repeatable spread, i * golden ratio mod 1) after the last one before moving.
        const phase = ((i * 0.6180339887) % 1) * FRAME_MS;
        const start = await new Promise(r => requestAnimationFrame(ts => setTimeout(() => r(ts), 0)));
        while (performance.now() - start < phase);
        const t0 = performance.now();
        change();
        target.dispatchEvent(new Event('input', {bubbles: true}));
        const outcome = await Promise.race([done.then(() => 'ok'), new Promise(r => setTimeout(() => r('timeout'), 20000))]);
        standIn.disconnect();
        if (outcome !== 'ok') return false;
        await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
        times.push(performance.now() - t0);
        nears.push(near);
        return true;
    };
    for (let i = 0; i < moves; i++) {
        if (!await moveOnce(() => step(i), i)) return {error: `no drawing after moving ${el.getAttribute('name')}`, times};
        if (pauseMs) await new Promise(r => setTimeout(r, pauseMs));  // a reader looks before moving again
    }
    const back = kind === 'checkbox' ? el.checked !== startValue : target.value !== startValue;
    if (back) {  // the starting settings again (not timed)
        const saved = [times.length, draws.length, nears.length];
        await moveOnce(() => { if (kind === 'checkbox') el.checked = startValue; else target.value = startValue; }, 0);
        times.length = saved[0]; draws.length = saved[1]; nears.length = saved[2];
    }
    return {control: el.getAttribute('name'), kind, times, draws, nears};
}"""

# Every control of a figure, in order: its name, kind, whether it does anything at the starting
# settings (an inactive one is disabled and skipped), whether the build answers it.
CONTROLS_JS = """(index) => [...document.querySelectorAll('figure.demo')[index]
    .querySelectorAll('.demo-controls [name]')].filter(c => c.dataset.kind || ['INPUT', 'SELECT'].includes(c.tagName))
    .map(c => ({name: c.getAttribute('name'), kind: c.dataset.kind || (c.tagName === 'SELECT' ? 'select' : c.type), disabled: Boolean(c.disabled),
        answered: c.hasAttribute('data-answered')}))"""


# A reader's drag: the first range control moves one step every 8 ms (faster than frames, as
# a pointer does) for two seconds; count the figures drawn per second and how many of them
# were drawn in place (written into the drawing on screen).
DRAG_JS = """async ([index, ms]) => {
    const fig = document.querySelectorAll('figure.demo')[index];
    const el = [...fig.querySelectorAll('.demo-controls input[type=range]')][0];
    if (!el) return null;
    const lo = Number(el.min), hi = Number(el.max), step = Number(el.step) || (hi - lo) / 100;
    let renders = 0, dir = 1;
    const count = () => renders++;
    fig.addEventListener('demo:rendered', count);
    const patched0 = Number(fig.dataset.patchCount || 0);
    const t0 = performance.now();
    while (performance.now() - t0 < ms) {
        let v = Number(el.value) + dir * step;
        if (v > hi || v < lo) { dir = -dir; v = Number(el.value) + dir * step; }
        el.value = String(v);
        el.dispatchEvent(new Event('input', {bubbles: true}));
        await new Promise(r => setTimeout(r, 8));
    }
    const seconds = (performance.now() - t0) / 1000;
    fig.removeEventListener('demo:rendered', count);
    return {control: el.name, repaints_per_s: renders / seconds, patched: Number(fig.dataset.patchCount || 0) - patched0, renders};
}"""


def open_gallery(browser, base, cpu_slowdown: float = 1, device: dict | None = None, python: bool = True):
    """The gallery with Python ready: (context, page, the demo name of each figure in order).
    ``cpu_slowdown``: the page's main thread that many times slower (the phone profile: 4);
    ``device``: context options such as ``PHONE`` (default a 1100 x 900 desktop window);
    ``python`` False: once every figure is wired, not waiting for Python (``base`` a server of
    ``HeldRuntime``: a reader before Python is live)."""
    context = browser.new_context(reduced_motion="reduce", **(device or {"viewport": {"width": 1100, "height": 900}}))
    page = context.new_page()
    if cpu_slowdown != 1:
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": cpu_slowdown})
    page.goto(f"{base}/gallery/")
    if python:
        page.evaluate("() => window.headspace.ready()")
        page.wait_for_function("() => [...document.querySelectorAll('figure.demo')].every(f => f.dataset.status === 'ready')",
                               timeout=BOOT_MS)
    else:
        page.wait_for_function("() => document.readyState !== 'loading' && window.headspace && window.headspace.wired"
                               " && [...document.querySelectorAll('figure.demo')].every(f => window.headspace.wired(f))",
                               timeout=BOOT_MS)
    return context, page, page.evaluate("() => [...document.querySelectorAll('figure.demo')].map(f => f.dataset.demo)")


class HeldRuntime(devserver.Handler):
    """The site with the runtime's files never answered (held until the server shuts down): every
    move is answered by the build or waits. Held at the server, since Playwright's routes do not
    reach a SharedWorker's requests."""
    released = threading.Event()

    def send_head(self):
        if self.path.startswith("/pyodide/"):
            type(self).released.wait(BOOT_MS / 1000 * 10)
            self.send_error(503, "held")
            return None
        return super().send_head()


def drag_rate(browser, base, only=None) -> dict:
    """Repaints a second during a continuous 2-second drag, per demo with a range control."""
    context, page, names = open_gallery(browser, base)
    out = {}
    for i, name in enumerate(names):
        if (only and name not in only) or name in out:
            continue
        page.evaluate("i => document.querySelectorAll('figure.demo')[i].scrollIntoView()", i)
        page.evaluate(CONTROL_JS, [i, None, 3])  # warm
        r = page.evaluate(DRAG_JS, [i, 2000])
        if r:
            out[name] = {**r, "repaints_per_s": round(r["repaints_per_s"], 1)}
    context.close()
    return out


def print_drag(rates: dict) -> None:
    for name, r in rates.items():
        print(f"drag   {name:28s} {r['repaints_per_s']:5.1f} repaints/s (target >= 50)  {r['patched']}/{r['renders']} drawn in place ({r['control']})")


def phone_sliders(browser, base, moves: int, only=None) -> dict:
    """Every control of every demo on the phone profile: its screen (390 x 844 at 3x, touch) and its
    main thread 4x slower (Python in the worker runs at this machine's speed, Chromium slows pages
    only). Also a few moves each after a short pause, as a reader moves, looks and moves again."""
    out = control_latency(browser, base, moves, only, cpu_slowdown=phone.PHONE_CPU_SLOWDOWN, device=phone.PHONE, pauses=True)
    print_controls("phone", out, "33 / 50 ms at 4x CPU")
    return out


def print_controls(label: str, out: dict, targets: str) -> None:
    """One line a control: p50 and p95 of a move to its drawing, and where the time went."""
    for name, controls in out.items():
        for control, r in controls.items():
            head = f"{label} {name:26s} {control:16s} {r.get('kind', ''):8s} "
            if "error" in r or "skipped" in r:
                print(head + (r.get("error") or r["skipped"]))
                continue
            pause = (f"  after a {PAUSE_MS} ms pause: p50 {r['after_pause_p50_ms']:6.1f} max {r['after_pause_max_ms']:6.1f}"
                     if "after_pause_p50_ms" in r else "")
            print(head + f"p50 {r['p50_ms']:6.1f} ms  p95 {r['p95_ms']:6.1f} ms  max {r['max_ms']:7.1f}"
                  f"  (targets {targets})  " + split(r) + pause)


def split(r: dict) -> str:
    """Where a move's time went (median ms), as far as the page reports it."""
    parts = [("draw", "drawMs"), ("trip", "roundTripMs"), ("py", "pythonMs"), ("parse", "parseMs")]
    times = " ".join(f"{label} {r[key + '_p50_ms']:5.1f}" for label, key in parts if r.get(key + "_p50_ms") is not None)
    kinds = " ".join(f"{kind} p50 {r[kind + '_p50_ms']:5.1f}" for kind in ("ahead", "called") if r.get(kind + "_p50_ms") is not None)
    stood = (f"  {r['stand_ins']}/{r['moves']} stood in first (at p50 {r['stand_in_p50_ms']:.1f} ms), first drawing"
             f" p50 {r['first_p50_ms']:.1f} p95 {r['first_p95_ms']:.1f}" if r.get("stand_ins") else "")
    return f"{times}  {r.get('ahead', 0)}/{r['moves']} ahead  {kinds}{stood}"


PAUSE_MS, PAUSED_MOVES = 300, 6


def first_drawings(times: list[float], nears: list) -> dict:
    """Each move's first drawing: a stand-in's (``nears``, ms or None), else the move's own (``times``):
    how many moves a stand-in answered first, and the p50 and p95 of the first drawings (what the
    reader saw first) and of the stand-ins alone. Empty for moves with no stand-in record.

    >>> first_drawings([10.0, 300.0, 12.0], [None, 120.0, None])["stand_ins"]
    1
    """
    if len(nears) != len(times):
        return {}
    first = [n if n is not None and n < t else t for t, n in zip(times, nears)]
    stood = [n for n in nears if n is not None]
    return {"stand_ins": len(stood), "first_p50_ms": round(pct(first, 50), 2), "first_p95_ms": round(pct(first, 95), 2),
            "stand_in_p50_ms": round(pct(stood, 50), 2) if stood else None,
            "stand_in_p95_ms": round(pct(stood, 95), 2) if stood else None}


def move_stats(r: dict) -> dict:
    """p50, p95 and max of a control's moves (ms) to the drawing waited for (Python's, or the
    build's), where their time went, how many Python had computed ahead, and the moves a stand-in
    drew first (``first_drawings``)."""
    t = r["times"]
    return {"kind": r.get("kind"), "moves": len(t), "p50_ms": round(pct(t, 50), 2),
            "p95_ms": round(pct(t, 95), 2), "max_ms": round(max(t), 2), **first_drawings(t, r.get("nears") or []),
            # (None for the build's answers, and on pages older than this split)
            **{k + "_p50_ms": (round(pct([d[k] for d in r["draws"]], 50), 2) if all(d and k in d for d in r["draws"]) else None)
               for k in ("drawMs", "roundTripMs", "pythonMs", "parseMs")},
            # moves drawn from an answer Python computed ahead (demos.js), and the p50 of each kind
            "ahead": sum(bool(d and d.get("ahead")) for d in r["draws"]),
            **{f"{kind}_p50_ms": (round(pct(sel, 50), 2) if sel else None) for kind, sel in (
                ("ahead", [x for x, d in zip(t, r["draws"]) if d and d.get("ahead")]),
                ("called", [x for x, d in zip(t, r["draws"]) if d is not None and not d.get("ahead")]))}}


def control_latency(browser, base, moves: int, only=None, cpu_slowdown: float = 1, device: dict | None = None,
                    pauses: bool = False, python: bool = True) -> dict:
    """Every control of every demo in the gallery, moved alone from the figure's starting settings:
    ``{demo: {control: stats}}`` (``move_stats``). ``python``: moves Python draws once live (a
    first move to a seed or a model not seen before included); else the build's answers before
    Python is live (a control the build does not answer is skipped, and says so)."""
    held = None if python else devserver.serve(0, handler_base=HeldRuntime)
    if held:
        base = f"http://127.0.0.1:{held.server_port}"
    context, page, names = open_gallery(browser, base, cpu_slowdown, device, python=python)
    out = {}
    for i, name, controls in gallery_controls(page, names, only, python):
        out[name] = {}
        for c in controls:
            out[name][c["name"]] = move_control(page, i, c, moves, python, pauses)
    context.close()
    if held:
        HeldRuntime.released.set()
        held.shutdown()
        HeldRuntime.released.clear()
    return out


def gallery_controls(page, names: list[str], only=None, python: bool = True):
    """(index, demo, its controls) for each demo of the gallery once (``only``: these demos), each
    figure scrolled into view and, with Python, its models loaded by a first untimed move."""
    seen = set()
    for i, name in enumerate(names):
        if (only and name not in only) or name in seen:
            continue
        seen.add(name)
        page.evaluate("i => document.querySelectorAll('figure.demo')[i].scrollIntoView()", i)
        if python:
            page.evaluate(CONTROL_JS, [i, None, 3])  # the figure's models in (the first call may load one)
        yield i, name, page.evaluate(CONTROLS_JS, i)


def move_control(page, i: int, c: dict, moves: int, python: bool = True, pauses: bool = False,
                 seed: int = 12345) -> dict:
    """One control (``c``, from CONTROLS_JS) of figure ``i`` moved ``moves`` times: ``move_stats``,
    or why it was not measured. ``seed``: of a token box's new sequences (a --vs round passes its
    own, so a round types new sequences, not the last round's again from the page's answers)."""
    if c["disabled"]:
        return {"kind": c["kind"], "skipped": "inactive at the starting settings"}
    if not python and not c["answered"]:
        return {"kind": c["kind"], "skipped": "not answered by the build: waits for Python"}
    r = page.evaluate(CONTROL_JS, [i, c["name"], moves, 0, "python" if python else "build", seed])
    if "error" in r or not r["times"]:
        return {"kind": c["kind"], "error": r.get("error", "no move timed")}
    stats = {**move_stats(r), "times": [round(t, 2) for t in r["times"]],
             "split": [{k: round(d[k], 2) for k in ("roundTripMs", "pythonMs") if d and d.get(k) is not None}
                       for d in r["draws"]],
             "nears": [None if n is None else round(n, 2) for n in r.get("nears") or []]}
    if pauses:
        # Moves a reader makes after looking at the figure for a moment: whatever the page does
        # once a reader pauses lands on the next move.
        paused = page.evaluate(CONTROL_JS, [i, c["name"], PAUSED_MOVES, PAUSE_MS, "python" if python else "build"])
        if paused.get("times"):
            stats.update(after_pause_p50_ms=round(pct(paused["times"], 50), 2),
                         after_pause_max_ms=round(max(paused["times"]), 2))
    return stats


def heap_growth(browser, base, moves: int) -> dict:
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{base}/posts/polariser/")
    before = page.evaluate("() => window.headspace.stats()")["heapBytes"]
    r = page.evaluate(CONTROL_JS, [0, None, 50])
    warm = page.evaluate("() => window.headspace.stats()")["heapBytes"]
    r = page.evaluate(CONTROL_JS, [0, None, moves])
    after = page.evaluate("() => window.headspace.stats()")["heapBytes"]
    context.close()
    return {"moves": len(r["times"]), "heap_bytes_at_boot": before, "heap_bytes_after_warmup": warm,
            "heap_bytes_after": after, "growth_bytes": after - warm}


def script_bench(name: str, python: str = sys.executable) -> dict:
    """Run ``bench/<name>.py --out bench/results/<name>.json`` with ``python``, echo what it prints, and
    return its JSON (or ``{"error": ...}``): the one way every section that lives in its own script runs."""
    script = ROOT / "bench" / f"{name}.py"
    if not script.exists():
        return {"error": f"bench/{name}.py is missing"}
    out = ROOT / "bench" / "results" / f"{name}.json"
    proc = subprocess.run([python, str(script), "--out", str(out)], capture_output=True, text=True)
    print(proc.stdout, end="")
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    return json.loads(out.read_text())


def composition_bench() -> dict:
    """bench/composition.py, in the bench venv (TransformerLens) when it exists."""
    venv = Path(os.environ.get("HEADSPACE_CACHE", Path.home() / ".cache" / "headspace")) / "venv-bench" / "bin" / "python"
    return script_bench("composition", str(venv) if venv.exists() else sys.executable)


def scale_bench() -> dict:
    """bench/scale.py: all-pair scores at Llama-2-7B shapes against the matmul floor (minutes)."""
    return script_bench("scale")


def score_benchmark_run() -> dict:
    """The composition-score benchmark (python -m headspace bench) on this machine: the table
    recomputed from the zoo's weights and stored ground truths (every score, 1000 bootstrap draws),
    and one model's ground truths recomputed from its evaluation batches; seconds of each."""
    zoo = ROOT / "zoo"
    code = (
        "import json, sys, time\n"
        "from headspace import benchmark as b\n"
        f"zoo = {str(zoo)!r}\n"
        "t0 = time.perf_counter(); table = b.benchmark_table(zoo); t1 = time.perf_counter()\n"
        "name = next(iter(b.zoo_models(zoo))); e = b.zoo_models(zoo)[name]\n"
        "toks, mask = b.eval_batches(zoo, e['task'])\n"
        "t2 = time.perf_counter(); b.model_ground_truth(b.load_zoo_model(zoo, name), toks, mask); t3 = time.perf_counter()\n"
        "print(json.dumps({'table_seconds': t1 - t0, 'models': len(table['models']), 'rows': len(table['rows']),\n"
        "                  'ground_truth_one_model_seconds': t3 - t2, 'ground_truth_model': name}))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr[-2000:]}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"score benchmark: table of {result['models']} models in {result['table_seconds']:.1f} s; "
          f"ground truths of {result['ground_truth_model']} in {result['ground_truth_one_model_seconds']:.1f} s")
    return result


def attribution_bench() -> dict:
    """bench/attribution.py: edge attribution patching's cost per zoo model beside exact path patching."""
    return script_bench("attribution")


VS_ROUND = 5  # moves of one control on one side before the other side's turn (--vs)


def _merge_runs(runs: list[dict]) -> dict:
    """One control's rounds as one ``move_stats``-like entry: p50, p95 and max of all their moves."""
    done = [r for r in runs if "times" in r]
    if not done:
        return runs[0] if runs else {"skipped": "absent on this side"}
    times = [t for r in done for t in r["times"]]
    nears = [n for r in done for n in (r.get("nears") or [None] * len(r["times"]))]
    split = [d for r in done for d in r.get("split", [])]
    return {"kind": done[0].get("kind"), "moves": len(times), "p50_ms": round(pct(times, 50), 2),
            "p95_ms": round(pct(times, 95), 2), "max_ms": round(max(times), 2), **first_drawings(times, nears),
            # where Python's moves went (median ms): the worker's round trip, and Python's share of it
            **{k + "_p50_ms": round(pct([d[k] for d in split if k in d], 50), 2)
               for k in ("roundTripMs", "pythonMs") if any(k in d for d in split)}}


def vs_controls(browser, sides: dict, moves: int, only=None, cpu_slowdown: float = 1, device: dict | None = None) -> dict:
    """Every control of both galleries (``sides``: {"before": url, "after": url}), figure by figure
    by demo name (the two need not hold the same demos in the same order), each control moved on
    one side then the other in rounds of ``VS_ROUND`` moves, so the machine's drift lands on both:
    ``{"before": {demo: {control: stats}}, "after": ...}``, printed side by side. ``cpu_slowdown`` and
    ``device``: as ``open_gallery``'s (the phone profile: 4 and ``phone.PHONE``)."""
    sliders = {"before": {}, "after": {}}
    opened = {side: open_gallery(browser, url, cpu_slowdown, device) for side, url in sides.items()}
    label = "vs" if cpu_slowdown == 1 else f"vs {cpu_slowdown:g}x"
    names_b = set(opened["before"][2])
    for name in dict.fromkeys(opened["after"][2]):
        if (only and name not in only) or name not in names_b:
            continue
        (i, _, controls), = gallery_controls(opened["after"][1], opened["after"][2], [name])
        (j, _, controls_b), = gallery_controls(opened["before"][1], opened["before"][2], [name])
        by_name = {c["name"]: c for c in controls_b}
        for c in controls:
            where = {"after": (i, c), "before": (j, by_name.get(c["name"]))}
            runs = {"before": [], "after": []}
            for k in range(0, moves, VS_ROUND):
                for side in (("before", "after") if k // VS_ROUND % 2 == 0 else ("after", "before")):
                    index, control = where[side]
                    if control is not None:
                        runs[side].append(move_control(opened[side][1], index, control, min(VS_ROUND, moves - k),
                                                       seed=12345 + k))
            for side in runs:
                sliders[side].setdefault(name, {})[c["name"]] = _merge_runs(runs[side])
    for context, _, _ in opened.values():
        context.close()
    for demo, controls in sliders["after"].items():
        for control, a in controls.items():
            b = sliders["before"][demo][control]
            if "p50_ms" in a and "p50_ms" in b:
                stood = "".join(f"  {side} {r['stand_ins']}/{r['moves']} stood in first, first drawing p50"
                                f" {r['first_p50_ms']:.1f} p95 {r['first_p95_ms']:.1f}"
                                for side, r in (("before", b), ("after", a)) if r.get("stand_ins"))
                trip = "".join(f"  {what} p50 {b[k]:5.1f} -> {a[k]:5.1f}" for what, k in
                               (("trip", "roundTripMs_p50_ms"), ("py", "pythonMs_p50_ms")) if k in a and k in b)
                print(f"{label} {demo:26s} {control:16s} p50 {b['p50_ms']:6.1f} -> {a['p50_ms']:6.1f} ms"
                      f"  p95 {b['p95_ms']:6.1f} -> {a['p95_ms']:6.1f} ms" + trip + stood)
            else:
                print(f"{label} {demo:26s} {control:16s} not measured on both sides"
                      f" (before: {b.get('error') or b.get('skipped')}; after: {a.get('error') or a.get('skipped') or 'measured'})")
    return sliders


def side_by_side(browser, base, before_dir: Path, args, only, report: dict) -> None:
    """This build against another build of the site (``before_dir``, a ``site/public`` written by
    ``scripts/build --browser`` in a checkout of the commit before a change), in one run: cold loads
    in rounds that alternate which side goes first, then every control of ``only`` (default: every
    demo) on desktop with Python live, each side in turn. The drift of a shared machine lands on
    both sides; read the ratios and each round, not one side's times alone."""
    before = devserver.serve(0, directory=before_dir)
    sides = {"before": f"http://127.0.0.1:{before.server_port}", "after": base}
    try:
        cold = {"before": [], "after": []}
        for i in range(args.runs):
            for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
                cold[side].append(ours_cold(browser, sides[side]))
        keys = ("first_figure_ms", "python_ready_ms", "first_python_render_ms")
        medians = {side: {k: statistics.median(r[k] for r in runs) for k in keys} for side, runs in cold.items()}
        # the commit the other build came from, when it is a checkout's site/public
        commit = subprocess.run(["git", "-C", str(before_dir), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        report["vs"] = {"before_dir": str(before_dir), "before_commit": commit,
                        "cold": {"runs": cold, "median": medians}}
        for k in keys:
            b, a = medians["before"][k], medians["after"][k]
            rounds = " ".join(f"{x[k]:.0f}/{y[k]:.0f}" for x, y in zip(cold["before"], cold["after"]))
            print(f"vs {k:24s} before {b:8.0f} ms  after {a:8.0f} ms  after/before {a / b:.3f}"
                  f"  (rounds before/after: {rounds})")
        if not args.cold_only:
            report["vs"]["slider"] = sliders = vs_controls(browser, sides, args.moves, only)
            report["slider"] = sliders["after"]  # the summary row shows the after side; its note the before
            if args.phone_controls:
                report["vs"]["phone_slider"] = phone_vs = vs_controls(
                    browser, sides, args.moves, only, phone.PHONE_CPU_SLOWDOWN, phone.PHONE)
                report["phone_slider"] = phone_vs["after"]
    finally:
        before.shutdown()


def controls_section(browser, base, args, only, report: dict) -> None:
    """Every control of every demo on desktop, Python live (``report["slider"]``) and from the build
    before it (``report["build_moves"]["desktop"]``); with ``--phone-controls`` the 4x phone profile
    too (``report["phone_slider"]``, ``report["build_moves"]["phone"]``)."""
    report["slider"] = control_latency(browser, base, args.moves, only)
    print_controls("desktop", report["slider"], "16 / 33 ms")
    report["build_moves"] = {"desktop": control_latency(browser, base, args.moves, only, python=False)}
    print_controls("desktop build", report["build_moves"]["desktop"], "16 / 33 ms")
    if args.phone_controls:
        phone_controls(browser, base, args.moves, only, report)


def phone_controls(browser, base, moves: int, only, report: dict) -> None:
    """Every control of every demo on the 4x phone profile, Python live and from the build."""
    report["phone_slider"] = phone_sliders(browser, base, moves, only)
    report.setdefault("build_moves", {})["phone"] = control_latency(
        browser, base, moves, only, phone.PHONE_CPU_SLOWDOWN, phone.PHONE, python=False)
    print_controls("phone build", report["build_moves"]["phone"], "33 / 50 ms at 4x CPU")


class _Done(Exception):
    """Leave the browser session early (``--slider-only``, ``--embeds-only``)."""


def main() -> None:
    parser = argparse.ArgumentParser(description="headspace benchmarks")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "bench.json"))
    parser.add_argument("--note", default="", help="what this run is for, in its row of bench/summary.md")
    parser.add_argument("--runs", type=int, default=3, help="cold loads per page (median reported)")
    parser.add_argument("--moves", type=int, default=30, help="moves per control of each demo")
    parser.add_argument("--phone-controls", action="store_true",
                        help="with --slider-only or the full run: every control on the 4x phone profile too"
                             " (the full run's phone section moves them anyway)")
    parser.add_argument("--heap-moves", type=int, default=2000)
    parser.add_argument("--skip-composition", action="store_true")
    parser.add_argument("--skip-score-benchmark", action="store_true",
                        help="skip timing the composition-score benchmark on the zoo (about a minute)")
    parser.add_argument("--skip-scale", action="store_true", help="skip the 7B-shape composition run (about 6 min)")
    parser.add_argument("--skip-training", action="store_true",
                        help="skip the zoo's training time per model (bench/training.py)")
    parser.add_argument("--train-steps", type=int, default=100,
                        help="steps of each next-zoo configuration to time now (0: only the recorded times)")
    parser.add_argument("--skip-embeds", action="store_true", help="skip the four-embeds host page (about 3 min)")
    parser.add_argument("--embeds-only", action="store_true", help="measure only the four-embeds host page")
    parser.add_argument("--cold-only", action="store_true", help="measure only the cold loads (ours against the plain page)")
    parser.add_argument("--slider-only", metavar="DEMOS", default="",
                        help="comma-separated demo names: measure only their slider latency (quick look at new demos)")
    parser.add_argument("--weight-only", action="store_true", help="measure only page weight, Lighthouse, the returning reader")
    parser.add_argument("--skip-weight", action="store_true", help="skip page weight, Lighthouse, the returning reader")
    parser.add_argument("--next-article-only", action="store_true",
                        help="measure only the returning reader's next article, in place against a full navigation (bench/returning.py)")
    parser.add_argument("--returning-only", action="store_true",
                        help="measure only the returning reader: desktop, and the 4x phone profile (bench/returning.py)")
    parser.add_argument("--python-calls", action="store_true",
                        help="only Python's call per demo and control, in Pyodide under Node (bench/python_calls.py)")
    parser.add_argument("--phone", action="store_true", help="measure only the phone section (bench/phone.py, about 15 min)")
    parser.add_argument("--skip-phone", action="store_true", help="skip the phone section")
    parser.add_argument("--own-model", action="store_true",
                        help="measure only the Score-your-model page (bench/own_model.py, about 10 min)")
    parser.add_argument("--skip-own-model", action="store_true", help="skip the Score-your-model page")
    parser.add_argument("--vs", type=Path, metavar="PUBLIC_DIR",
                        help="side by side against another build of the site (its site/public): cold loads and"
                             " every control (--slider-only DEMOS to narrow, --cold-only: no controls,"
                             " --phone-controls: the 4x phone profile too), rounds interleaved")
    phone.add_arguments(parser)
    args = parser.parse_args()
    if args.python_calls:
        import python_calls
        sys.exit(python_calls.main(["--note", args.note]))
    only = [d for d in args.slider_only.split(",") if d]

    plain_dir = PUBLIC / "_bench-plain"
    shutil.rmtree(plain_dir, ignore_errors=True)
    shutil.copytree(ROOT / "bench" / "plain", plain_dir)
    contract = json.loads((ROOT / "site" / "data" / "contract.json").read_text())
    index = plain_dir / "index.html"
    index.write_text(index.read_text().replace("__VENDOR_DIR__", contract["vendor_dir"]))
    plain_js = plain_dir / "plain.js"
    plain_js.write_text(plain_js.read_text().replace("__PYODIDE_DIR__", contract["pyodide_dir"])
                        .replace("__LOCKFILE__", contract.get("plain_lockfile", contract["lockfile"])))
    server = devserver.serve(0)
    base = f"http://127.0.0.1:{server.server_port}"
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "machine": {"cpus": os.cpu_count()}}
    from playwright.sync_api import sync_playwright
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            if args.phone:
                report["phone"] = phone.bench(p, CHROMIUM, CHROMIUM_ARGS, args)
                print(f"phone report written to {phone.write(report['phone'])}")
                phone_controls(browser, base, args.moves, only, report)
                args.skip_composition = args.skip_scale = True
                raise _Done
            if args.next_article_only:
                import returning
                from weight import weight_server
                with weight_server() as (wbase, counter):
                    report["next_article"] = returning.navigation(p, CHROMIUM, CHROMIUM_ARGS, wbase, args.runs)
                returning.print_navigation(report["next_article"])
                args.skip_composition = args.skip_scale = args.skip_score_benchmark = args.skip_training = True
                raise _Done
            if args.returning_only:
                import returning
                from weight import weight_server
                with weight_server() as (wbase, counter):
                    report["returning"] = returning.run(p, CHROMIUM, CHROMIUM_ARGS, wbase, counter, args.runs)
                returning.print_report(report["returning"])
                args.skip_composition = args.skip_scale = args.skip_score_benchmark = args.skip_training = True
                raise _Done
            if args.vs:
                side_by_side(browser, base, args.vs, args, only, report)
                args.skip_composition = args.skip_scale = args.skip_score_benchmark = args.skip_training = True
                raise _Done
            if args.own_model:
                report["own_model"] = own_model.bench(browser, base)
                args.skip_composition = args.skip_scale = args.skip_score_benchmark = args.skip_training = True
                raise _Done
            if only:
                controls_section(browser, base, args, only, report)
                report["drag"] = drag_rate(browser, base, only)
                print_drag(report["drag"])
                args.skip_composition = args.skip_scale = args.skip_score_benchmark = args.skip_training = True
                raise _Done
            if args.weight_only or not (args.skip_weight or args.cold_only or args.embeds_only):
                report.update(weight_bench(p, CHROMIUM, CHROMIUM_ARGS, args.runs))
                if args.weight_only:
                    args.skip_composition = args.skip_scale = True
                    raise _Done
            if args.embeds_only:
                report["embeds"] = embeds_bench(p, CHROMIUM, CHROMIUM_ARGS, base, args.runs, BOOT_MS)
                print_embeds(report["embeds"])
                args.skip_composition = args.skip_scale = True
                raise _Done
            # Rounds interleaved (ours, plain, ours without intent): the machine's drift lands on both sides.
            ours, plain, no_intent = [], [], []
            for _ in range(args.runs):
                ours.append(ours_cold(browser, base))
                plain.append(plain_cold(browser, base))
                no_intent.append(ours_cold(browser, base, intent=False))
            med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
            cold = {"ours": {k: med(ours, k) for k in ours[0]}, "plain": {k: med(plain, k) for k in plain[0]},
                    "runs": {"ours": ours, "plain": plain}}
            cold["first_figure_ratio"] = cold["ours"]["first_figure_ms"] / cold["plain"]["first_figure_ms"]
            cold["first_python_render_ratio"] = cold["ours"]["first_python_render_ms"] / cold["plain"]["first_python_render_ms"]
            cold["round_ratios"] = [o["first_python_render_ms"] / q["first_python_render_ms"] for o, q in zip(ours, plain)]
            cold["no_intent"] = {"first_python_render_ms": med(no_intent, "first_python_render_ms"), "runs": no_intent}
            cold["first_python_render_no_intent_ratio"] = (cold["no_intent"]["first_python_render_ms"]
                                                          / cold["plain"]["first_python_render_ms"])
            report["cold"] = cold
            print(f"first figure        ours {cold['ours']['first_figure_ms']:8.0f} ms  plain {cold['plain']['first_figure_ms']:8.0f} ms"
                  f"  ratio {cold['first_figure_ratio']:.3f} (target < 0.15)")
            print(f"first Python render ours {cold['ours']['first_python_render_ms']:8.0f} ms  plain {cold['plain']['first_python_render_ms']:8.0f} ms"
                  f"  ratio {cold['first_python_render_ratio']:.3f} (target < 0.6; the reader's pointer on the figure from the start)")
            print("  ratio in each round " + " ".join(f"{r:.3f}" for r in cold["round_ratios"]))
            print(f"  no earlier intent   ours {cold['no_intent']['first_python_render_ms']:8.0f} ms"
                  f"  ratio {cold['first_python_render_no_intent_ratio']:.3f} (plotly loads at the first move, after Python is ready)")
            if args.cold_only:
                args.skip_composition = args.skip_scale = True
                raise _Done
            report["warm_second_article"] = warm_second_article(p, base)
            print(f"second article warm: {report['warm_second_article']['runtime_bytes']} bytes of runtime (target 0)")
            controls_section(browser, base, args, None, report)
            report["drag"] = drag_rate(browser, base)
            print_drag(report["drag"])
            report["heap"] = heap_growth(browser, base, args.heap_moves)
            print(f"wasm heap after {report['heap']['moves']} moves: +{report['heap']['growth_bytes']} bytes (target < 1 MB)")
            if not args.skip_embeds:
                report["embeds"] = embeds_bench(p, CHROMIUM, CHROMIUM_ARGS, base, args.runs, BOOT_MS)
                print_embeds(report["embeds"])
            if not args.skip_phone:
                report["phone"] = phone.bench(p, CHROMIUM, CHROMIUM_ARGS, args)
                print(f"phone report written to {phone.write(report['phone'])}")
                phone_controls(browser, base, args.moves, only, report)
            if not args.skip_own_model:
                report["own_model"] = own_model.bench(browser, base)
            browser.close()
    except _Done:
        pass
    finally:
        server.shutdown()
        shutil.rmtree(plain_dir, ignore_errors=True)
    if not args.skip_composition:
        report["composition"] = composition_bench()
    if not args.skip_scale:
        report["scale"] = scale_bench()
    if not args.skip_score_benchmark and not args.python_calls:
        report["score_benchmark"] = score_benchmark_run()
        report["attribution"] = attribution_bench()
    if not args.skip_training and not args.python_calls:
        from training import training_bench  # bench/training.py: the zoo's training time per model
        report["training"] = training_bench(args.train_steps)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"report written to {out}; its row appended to {summary.append(out.name, report, note=args.note)}")


if __name__ == "__main__":
    main()
