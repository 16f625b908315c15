// Page side of the live demos (DOM contract in DESIGN.md).
//
// 1. The page arrives with each figure drawn as static SVG by the build
//    (data-status="static"); plotly redraws it interactively once loaded.
// 2. Then Pyodide boots in a worker: a SharedWorker where the browser has one
//    (one interpreter for every open page of the site, and for every figure a
//    host page embeds), else a dedicated worker. A time limit turns a hung
//    boot into a visible error; a worker that dies later fails every demo visibly.
// 3. On every control change send call(name, params) to the worker. Per demo at
//    most one request is in flight; newer values replace the queued one, so the
//    latest value wins and stale requests are never sent.
// 4. On failure keep the last good figure, set data-status="error" and say why.
// 5. A figure opened from a link in a state (state.js) shows its prerendered
//    defaults until Python has checked the link's parameters, then that state.
// 6. On an embed page (/embed/<demo>/) in a frame, tell the host page our height.

import * as contract from "@params"; // site/data/contract.json, passed by Hugo's js.Build
import { fromQuery, readParams, writeParams } from "./state.js";
import { setupMenu } from "./share.js";
import * as patch from "./patch.js";
import { afterFirstPaint, pageLoaded } from "./first-paint.js";

const script = document.querySelector("script[data-worker]");
// A boot slower than this (from the worker's start, after the first paint) is reported as a
// failure (tests may shorten it).
const BOOT_LIMIT_MS = window.HEADSPACE_BOOT_LIMIT_MS || 60000;
const demos = [...document.querySelectorAll("figure.demo[data-demo]")];
const embedPage = document.body.classList.contains("embed");
const framed = embedPage && window.parent !== window; // an embed page inside another site's iframe

let worker = null;
let booted = null; // promise resolved when Python is ready
let bootProgress = null; // the worker's last {step, of, what} while it boots
let nextId = 1;
const statsWaiters = [];
const marks = {}; // for benchmarks and tests: firstFigure, pythonReady, boot1..boot4, workerKind, sharedWith
const pending = new Map(); // request id -> demo state

// ---------- theme: plots follow the page's light or dark colours ----------
let palette = null; // read once per colour scheme, not on every slider move
function themed(layout) {
  if (!palette) {
    const css = getComputedStyle(document.documentElement);
    palette = { fg: css.getPropertyValue("--fg").trim(), rule: css.getPropertyValue("--rule").trim() };
  }
  const { fg, rule } = palette;
  const axis = (a) => ({ gridcolor: rule, zerolinecolor: rule, linecolor: rule, ...a, fixedrange: true });
  // No drag-to-zoom or pan: a swipe that starts on a figure scrolls the page, and a drag on a
  // laptop never strands the reader in an empty corner. Hover and tap still show values.
  const out = { ...layout, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", dragmode: false,
    font: { family: "system-ui, sans-serif", color: fg, ...(layout.font || {}) }, autosize: !layout.width };
  for (const key of Object.keys(out)) if (/^[xy]axis\d*$/.test(key)) out[key] = axis(out[key]);
  if (!out.xaxis) out.xaxis = axis({});
  if (!out.yaxis) out.yaxis = axis({});
  return out;
}
const PLOT_CONFIG = { responsive: false, displayModeBar: false, scrollZoom: false, doubleClick: false };

// ---------- the width a figure is drawn at ----------
// Python lays each figure out for one of a few widths (headspace.demos._fit.WIDTHS): the widest
// that fits the figure's column. The build drew a static SVG at each and kept each one's layout
// (the prerender script's "layouts", keyed by width); CSS container queries show the SVG this
// column takes, and plotly draws Python's figure at the same width, so the two agree.
function prerender(state) {
  return JSON.parse(state.fig.querySelector('script[data-role="prerender"]').textContent);
}
// The column's width comes from the ResizeObserver below (state.room), read when layout is
// fresh anyway: reading clientWidth on a slider move would force a layout of the whole page
// (the readout's new text) before the move is even sent to Python.
function drawingWidth(state) {
  state.widths ||= Object.keys(prerender(state).layouts).map(Number).sort((a, b) => a - b);
  const room = state.room ?? state.plot.clientWidth;
  return state.widths.filter((w) => w <= room).pop() || state.widths[0];
}

// ---------- reading and writing the DOM ----------
function updateReadouts(fig) {
  for (const input of fig.querySelectorAll("input[type=range]")) {
    const text = `${input.value}${input.dataset.unit || ""}`;
    const readout = input.parentElement.querySelector(".readout");
    if (readout) readout.textContent = text;
    input.setAttribute("aria-valuetext", text); // a screen reader hears "30°", not "30"
  }
}

// ---------- controls that do nothing in the current state ----------
// The registry declares when a control does anything (Param.active_when, here data-active-when:
// {param: {in: [values]}} or {param: {not: [values]}}); otherwise it is disabled and its note
// (the build's, data-role="inactive") says why. Its value stays and is still sent to Python.
const same = (a, b) => (typeof a === "number" && typeof b === "number" ? a === b : JSON.stringify(a) === JSON.stringify(b));
function applyActive(fig) {
  const gated = fig.querySelectorAll("[data-active-when]");
  if (!gated.length) return;
  const params = readParams(fig);
  for (const el of gated) {
    const rules = JSON.parse(el.dataset.activeWhen);
    const on = Object.entries(rules).every(([other, rule]) =>
      ("in" in rule) === (rule.in || rule.not).some((v) => same(params[other], v)));
    el.disabled = !on;
    const note = document.getElementById(`${el.id}-why`);
    if (note) note.hidden = on;
    if (on) el.removeAttribute("aria-describedby");
    else if (note) el.setAttribute("aria-describedby", note.id);
    for (const play of fig.querySelectorAll(`[data-role="play"][data-for="${el.name}"]`)) play.disabled = !on;
  }
}

// ---------- the line that says whether a figure is live ----------
// Before Python is ready a figure is the build's drawing: its line says so, what going live
// costs, the boot's progress, and that a control moved meanwhile is catching up. Once live it
// says so quietly (no announcement) and keeps its height, so the figure never jumps.
const LIVE = "Live: Python recomputes this figure in your browser.";
function setLive(state, text, step) {
  const line = state.fig.querySelector('[data-role="live"]');
  if (!line) return;
  if (text === undefined) return void (line.hidden = true); // failed: the error message says why
  let bar = line.querySelector("progress");
  if (text === null) { // live
    line.removeAttribute("role"); // a status region would announce every figure going live
    bar?.remove();
    line.querySelector(".demo-live-text").textContent = LIVE;
    line.dataset.live = "";
    return;
  }
  line.querySelector(".demo-live-text").textContent = text;
  if (step && !bar) {
    bar = document.createElement("progress");
    bar.setAttribute("aria-hidden", "true"); // the text says the step
    line.prepend(bar);
  }
  if (bar) Object.assign(bar, { max: step ? step.of : 1, value: step ? step.step : 0 });
}

function liveText(state) {
  const p = bootProgress;
  const where = p ? ` (${p.what}, ${p.step}/${p.of})` : "";
  if (state.queued && !marks.pythonReady) return `Catching up: your setting is drawn when ready${where}.`;
  if (!booted) return null; // the build's own sentence stays
  return `Going live${where}. Until then, the figure as built.`;
}
function showProgress() {
  for (const state of states) {
    if (["ready", "error"].includes(state.fig.dataset.status) && !state.queued) continue;
    const text = liveText(state);
    if (text) setLive(state, text, bootProgress);
  }
}

function setStatus(state, status, message) {
  state.fig.dataset.status = status;
  tellHost({ type: "headspace:status", status, demo: state.name });
  const box = state.fig.querySelector('[data-role="error"]');
  if (message) {
    box.textContent = message;
    box.hidden = false;
  } else if (status !== "error") box.hidden = true;
}

// Demos draw "ink" (the light scheme's text colour) for neutral marks; in the
// dark scheme those marks take the page's text colour instead. The places a
// figure uses ink are found once per figure and recoloured in place: no copy of
// the figure's data on every draw.
const INK = contract.ink; // the demos' own neutral colour (Python's _figure.COLORS)
const inkPlaces = new WeakMap(); // figure -> [[object, key]] whose value was INK
function inkOf(figure) {
  let places = inkPlaces.get(figure);
  if (!places) {
    places = [];
    const walk = (value) => {
      if (!value || typeof value !== "object") return;
      for (const key of Object.keys(value)) { // arrays too: per-bar colour lists
        if (value[key] === INK) places.push([value, key]);
        else walk(value[key]);
      }
    };
    walk(figure.data);
    walk(figure.layout);
    inkPlaces.set(figure, places);
  }
  return places;
}

// Draw a figure. While a reader drags, successive figures of a demo differ only in their
// data, and patch.js writes the new data into plotly's SVG within a frame; plotly itself
// (15 to 40 ms a draw) redraws when the structure changes, and once the reader pauses, so
// that hover values are the shown figure's. ``redraw``: from scratch (the colour scheme changed).
const SETTLE_MS = window.HEADSPACE_SETTLE_MS || 200; // tests may lengthen it
function draw(state, figure, redraw = false) {
  if (!window.Plotly) return loadPlotly().then(() => draw(state, figure, redraw));
  for (const poster of state.plot.querySelectorAll(":scope > svg.static-figure")) poster.remove(); // the build's SVG
  const layout = themed(figure.layout); // reads the palette
  const ink = palette.fg.toLowerCase() !== INK ? palette.fg : INK;
  // A figure never recoloured still holds INK: in the light scheme there is nothing to walk.
  if (ink !== INK || inkPlaces.has(figure)) for (const [object, key] of inkOf(figure)) object[key] = ink;
  const frame = { data: figure.data, layout, snapshot: patch.layoutSnapshot(layout) };
  clearTimeout(state.settle);
  if (!redraw && state.shown && patch.patchFigure(state.plot, state.shown, frame)) {
    state.shown = frame;
    state.fig.dataset.patchCount = String(Number(state.fig.dataset.patchCount || 0) + 1); // tests and bench
    state.settle = setTimeout(() => plot(state, state.shown), SETTLE_MS);
    return;
  }
  if (patch.refusal) state.fig.dataset.patchRefused = patch.refusal; // why plotly drew it
  return plot(state, frame, redraw);
}

function plot(state, frame, fresh = false) {
  state.drawn = state.shown = frame;
  return (fresh ? Plotly.newPlot : Plotly.react)(state.plot, frame.data, frame.layout, PLOT_CONFIG);
}

function render(state, result, timing = {}) {
  if (!window.Plotly) { // the build's figure stays until plotly has loaded; then the latest result
    state.waiting = [result, timing];
    loadPlotly().then(() => {
      const waiting = state.waiting;
      state.waiting = null;
      if (waiting) render(state, ...waiting);
    }, () => {});
    return;
  }
  const t0 = performance.now(), patched = state.fig.dataset.patchCount;
  draw(state, result.figure);
  const how = state.fig.dataset.patchCount !== patched ? { patched: true } : { patched: false, refusal: patch.refusal };
  for (const out of state.fig.querySelectorAll("output[data-output]")) {
    const value = result.outputs[out.dataset.output];
    out.dataset.value = JSON.stringify(value);
    out.innerHTML = result.text[out.dataset.output]; // Python's format_outputs: the same (escaped) HTML the build printed
  }
  state.fig.dataset.renderCount = String(Number(state.fig.dataset.renderCount) + 1);
  state.lastFigure = result.figure;
  setStatus(state, "ready");
  if (!state.queued) setLive(state, null);
  // Style and layout now, not at the start of the next frame: a move lands anywhere in a frame,
  // and until that frame begins the main thread would only wait. The frame then has only paint to
  // do (on the gallery a move's frame was 2 to 3 ms shorter, measured side by side). Nothing is
  // laid out twice: the frame finds the layout clean.
  void state.fig.offsetHeight;
  state.fig.dispatchEvent(new CustomEvent("demo:rendered", { detail: { drawMs: performance.now() - t0, ...how, ...timing } }));
  if (state.aheadWanted) askAhead(state);
}

// ---------- figures computed ahead ----------
// A reader who reaches for a control (a pointer over its figure, focus, a move) will most likely
// move it on. Python then computes the figure at that control's other values, nearest first and
// every other setting as it is, in the worker's idle time (worker.js, "ahead"); a move to one of
// them is drawn from that answer at once, without waiting for the worker. Each answer is Python's
// own for exactly those settings at this drawing width (Demo.run is pure), so the figure is the one
// a call would draw. Every answer to a call is kept too, so a drag back needs no Python either.
const ANSWER_CHARS = 32e6; // kept per page (about 32 MB), the oldest dropped first
const AHEAD_VALUES = 400; // values asked for per control, nearest first (every value of the sliders we have: 361 at most)
const answers = new Map(); // answerKey -> Python's JSON
let answerChars = 0;
const answerKey = (state, paramsKey, width) => `${state.index}@${width}:${paramsKey}`;

function keepAnswer(key, json) {
  if (answers.has(key)) return;
  answers.set(key, json);
  answerChars += json.length;
  for (const [old, text] of answers) {
    if (answerChars <= ANSWER_CHARS) break;
    answers.delete(old);
    answerChars -= text.length;
  }
}

// A control's values as readParams would read them, nearest the current one first and the current
// one last (it is on screen; a reader may come back to it); null for a control with no list of
// values (a number, a token text, a matrix).
const nearest = (at) => (a, b) => (a === at) - (b === at) || Math.abs(a - at) - Math.abs(b - at);
function valuesOf(control) {
  if (control.type === "range") {
    const snapped = rangeValues(control);
    const at = Math.round((Number(control.value) - Number(control.min)) / (Number(control.step) || 1));
    return snapped.map((_, k) => k).sort(nearest(at)).slice(0, AHEAD_VALUES).map((k) => snapped[k]);
  }
  if (control.tagName === "SELECT") {
    const options = [...control.options];
    return options.map((_, i) => i).sort(nearest(control.selectedIndex)).map((i) => JSON.parse(options[i].dataset.value));
  }
  if (control.type === "checkbox") return [!control.checked, control.checked];
  return null;
}

// Every value of a range control, in order, as the browser snaps them to its step in decimal
// ("0.3", not 0.1 * 3): asked of a probe once per control and bounds (1.8 ms a move for 361 values).
const snappedValues = new WeakMap(), BOUNDS = ["min", "max", "step"];
function rangeValues(control) {
  const bounds = BOUNDS.map((attr) => control.getAttribute(attr) ?? "");
  const kept = snappedValues.get(control);
  if (kept && same(kept.bounds, bounds)) return kept.values;
  const probe = Object.assign(document.createElement("input"), { type: "range" });
  BOUNDS.forEach((attr, i) => probe.setAttribute(attr, bounds[i]));
  const lo = Number(control.min), step = Number(control.step) || 1;
  const values = Array.from({ length: Math.round((Number(control.max) - lo) / step) + 1 }, (_, k) => {
    probe.value = String(lo + k * step);
    return Number(probe.value);
  });
  snappedValues.set(control, { bounds, values });
  return values;
}

// Ask the worker for ``control``'s other values (once per setting of the figure's other controls),
// when the page is idle and nothing the reader waits for is under way: until plotly has loaded,
// and while a call of this figure is on its way, the list would only compete with them (on a
// cold page, with the reader's first figure).
const whenIdle = window.requestIdleCallback ? (f) => requestIdleCallback(f, { timeout: 200 }) : (f) => setTimeout(f, 50);
function askAhead(state, control) {
  if (control) state.reach = control;
  if (state.aheadSoon) return;
  state.aheadSoon = true;
  whenIdle(() => {
    state.aheadSoon = false;
    sendAhead(state);
  });
}

function sendAhead(state) {
  const control = state.reach;
  const name = control && !control.disabled && control.getAttribute("name");
  if (!name || !marks.pythonReady || !worker) return;
  state.aheadWanted = !window.Plotly || state.inFlight || Boolean(state.queued);
  if (state.aheadWanted) return; // asked again when the figure is drawn (render)
  const params = readParams(state.fig), width = drawingWidth(state);
  const sweep = `${name}@${width}:${JSON.stringify({ ...params, [name]: null })}`;
  if (state.ahead === sweep && !state.missed) return;
  const values = valuesOf(control);
  if (!values) return;
  state.missed = false;
  state.ahead = sweep;
  const items = [];
  for (const value of values) {
    const key = answerKey(state, JSON.stringify({ ...params, [name]: value }), width);
    if (!answers.has(key)) items.push({ key, name: state.name, params: { ...params, [name]: value } });
  }
  for (const other of states) if (other !== state) other.ahead = null; // the worker keeps one list per page
  worker.post({ type: "ahead", width, items });
}

// Draw an answer now, so the next frame shows it; a move that comes before that frame waits for it
// (the latest one wins), so a pointer faster than frames costs one drawing per frame.
function showAnswer(state, json) {
  if (state.frameBooked) return void (state.nextAnswer = json);
  const t = performance.now(), result = JSON.parse(json);
  render(state, result, { ahead: true, parseMs: performance.now() - t });
  state.frameBooked = true;
  requestAnimationFrame(() => {
    state.frameBooked = false;
    const next = state.nextAnswer;
    state.nextAnswer = null;
    if (next) showAnswer(state, next);
  });
}

function onAhead({ key, json }) {
  keepAnswer(key, json);
  const state = states[Number(key.slice(0, key.indexOf("@")))];
  // The reader is already there, waiting behind a call in flight: draw it now.
  if (state && state.queued && answerKey(state, JSON.stringify(state.queued), drawingWidth(state)) === key) request(state, true);
}

// ---------- the worker ----------
// One interface over both kinds: post(message), onmessage, onerror, close().
function openWorker(url, kind) {
  if (kind === "shared" && window.SharedWorker) {
    const shared = new SharedWorker(url, { type: "module", name: "headspace" });
    const port = shared.port;
    return {
      kind: "shared", post: (m) => port.postMessage(m), close: () => port.close(),
      set onmessage(f) { port.onmessage = f; }, set onerror(f) { shared.onerror = f; },
    };
  }
  const dedicated = new Worker(url, { type: "module" });
  return {
    kind: "dedicated", post: (m) => dedicated.postMessage(m), close: () => dedicated.terminate(),
    set onmessage(f) { dedicated.onmessage = f; }, set onerror(f) { dedicated.onerror = f; },
  };
}

function failAll(message) {
  if (worker) worker.close();
  worker = null; // request() sends nothing more once the runtime is gone
  pending.clear();
  answers.clear(); // a figure drawn after this would claim a live Python
  for (const state of states) {
    state.inFlight = false;
    state.queued = state.nextAnswer = null;
    state.link = null;
    showNote(state, "");
    setLive(state, undefined);
    setStatus(state, "error", `${message} The figure shows the values computed when the page was built.`);
  }
}

function bootWorker() {
  if (booted) return booted;
  for (const s of states) if (s.fig.dataset.status === "static") setStatus(s, "loading");
  showProgress();
  booted = new Promise((resolve, reject) => {
    let timer = null;
    const boot = {
      type: "boot", indexURL: new URL(script.dataset.pyodide, location.href).href,
      lockFileURL: new URL(script.dataset.lockfile, location.href).href,
      modelsURL: new URL(script.dataset.models, location.href).href,
      needsModels: demos.some((d) => d.hasAttribute("data-needs-models")),
      demos: demos.map((d) => d.dataset.demo), // the worker imports only these demos' modules first
    };
    const connect = (kind) => {
      let heard = false; // any message from the worker: it runs
      try {
        worker = openWorker(script.dataset.worker, kind);
      } catch (err) {
        if (kind !== "dedicated") return connect("dedicated");
        clearTimeout(timer);
        reject(new Error(`This browser cannot run the Python worker (${err.message}).`));
        return;
      }
      marks.workerKind = worker.kind;
      worker.onerror = (event) => {
        event.preventDefault();
        // A browser may refuse a SharedWorker (in another site's frame, with third-party
        // storage blocked): fall back to a worker of our own.
        if (worker.kind === "shared" && !heard) {
          worker.close();
          connect("dedicated");
          return;
        }
        clearTimeout(timer);
        const message = `The Python worker crashed: ${event.message || "it could not be loaded"}.`;
        if (marks.pythonReady) failAll(message); // after boot: nothing will answer any more
        else reject(new Error(message));
      };
      worker.onmessage = ({ data }) => {
        heard = true;
        if (data.type === "ready") {
          clearTimeout(timer);
          marks.sharedWith = data.clients; // pages this interpreter serves (1 with a dedicated worker)
          resolve(data.ms);
        } else if (data.type === "progress") {
          // when each boot step began (scripts/bench), perhaps before this page asked (warm.js)
          marks[`boot${data.step}`] ||= data.at - performance.timeOrigin;
          bootProgress = data;
          showProgress();
        } else if (data.type === "stats") {
          for (const resolveStats of statsWaiters.splice(0)) resolveStats(data);
        } else if (data.type === "ahead") {
          onAhead(data);
        } else if (data.type === "error" && data.fatal) {
          clearTimeout(timer);
          reject(new Error(data.message + "."));
        } else onReply(data);
      };
      worker.post(boot);
    };
    // The worker starts once the page's first frame is on screen (first-paint.js); the time
    // limit runs from then.
    afterFirstPaint().then(() => {
      timer = setTimeout(() => reject(new Error(`Python did not start within ${BOOT_LIMIT_MS / 1000} s.`)), BOOT_LIMIT_MS);
      connect(window.HEADSPACE_WORKER || "shared");
    });
  });
  booted.then(() => {
    marks.pythonReady = performance.now();
    for (const s of states) {
      if (!s.queued && !s.link) setLive(s, null); // a figure catching up says so until it is drawn
      if (s.link) sendLink(s); // stays "loading" until Python has checked the link
      else {
        if (s.fig.dataset.status === "loading") setStatus(s, "ready"); // a prerender error stays
        if (s.queued) send(s);
      }
      askAhead(s); // the control a reader reached for before Python was ready
    }
  }, (err) => failAll(err.message));
  return booted;
}

function post(state, params, kind) {
  state.inFlight = true;
  const id = nextId++;
  state.width = drawingWidth(state);
  pending.set(id, { state, kind, params, width: state.width, sent: performance.now() });
  worker.post({ type: "call", id, name: state.name, params, width: state.width });
}

function send(state) {
  const params = state.queued;
  state.queued = null;
  post(state, params, "controls");
}

// A link's parameters go to Python first: the registry checks them, and only
// parameters it accepts reach the controls.
function sendLink(state) {
  const params = state.link;
  state.link = null;
  post(state, params, "link");
}

function onReply(data) {
  const call = pending.get(data.id);
  if (!call) return;
  pending.delete(data.id);
  const { state, kind, params } = call;
  state.inFlight = false;
  if (data.type === "result") keepAnswer(answerKey(state, JSON.stringify(params), call.width), data.json);
  if (state.superseded) { // the reader moved on and that figure was drawn from an answer ahead
    state.superseded = false;
    if (state.queued) send(state);
    else if (state.aheadWanted) askAhead(state);
    return;
  }
  if (kind === "link") showNote(state, "");
  if (data.type === "result") {
    if (kind === "link" && !state.queued) {
      writeParams(state.fig, params);
      applyActive(state.fig);
      const now = readParams(state.fig);
      state.lastKey = JSON.stringify(now);
      updateReadouts(state.fig);
      // A value between a slider's steps snaps to a step: compute what the controls now hold.
      if (state.lastKey === JSON.stringify(params)) render(state, JSON.parse(data.json));
      else state.queued = now;
    } else if (kind === "controls") {
      if (state.queued) send(state); // Python computes the next figure while this one is drawn
      const t = performance.now();
      const result = JSON.parse(data.json);
      render(state, result, { roundTripMs: t - call.sent, pythonMs: data.pythonMs, parseMs: performance.now() - t });
    }
  } else if (kind === "link") {
    state.waiting = null; // a result still waiting for plotly is older than this refusal
    const why = data.message.replace(/^ValueError: /, "");
    setStatus(state, "error", `The link's settings were not applied: ${why}. The figure shows its default settings.`);
  } else {
    // A parameter Python refused (a mistyped token, say) is the reader's input, not a fault.
    state.waiting = null;
    const bad = /^ValueError: (parameter .*)$/s.exec(data.message);
    setStatus(state, "error", bad ? `${bad[1]}. The figure still shows the last valid input.`
      : `Python raised an error: ${data.message}`);
  }
  if (state.queued && !state.inFlight) send(state);
}

function showNote(state, text) {
  let note = state.fig.querySelector('[data-role="note"]');
  if (!note && text) {
    note = document.createElement("p");
    note.className = "demo-note";
    note.dataset.role = "note";
    note.setAttribute("role", "status");
    state.fig.querySelector('[data-role="error"]').before(note);
  }
  if (note) {
    note.textContent = text;
    note.hidden = !text;
  }
}

function request(state, again = false) {
  state.link = null; // the reader's own move wins over a link still waiting for Python
  showNote(state, "");
  const params = readParams(state.fig);
  const key = JSON.stringify(params);
  if (key === state.lastKey && !again) return; // a slider's "change" after its last "input": nothing new
  state.lastKey = key;
  state.queued = params; // latest value wins
  if (!again) updateReadouts(state.fig);
  const answer = worker && marks.pythonReady && answers.get(answerKey(state, key, drawingWidth(state)));
  state.nextAnswer = null; // a newer setting than the one waiting for the next frame
  if (answer) {
    state.queued = null;
    if (state.inFlight) state.superseded = true; // its answer is older than this one
    showAnswer(state, answer);
    return;
  }
  state.missed = true; // a call: the values ahead are asked for again, nearest this one first
  if (!booted) bootWorker();
  if (!marks.pythonReady) setLive(state, liveText(state), bootProgress);
  if (state.fig.dataset.status === "error" && !worker) return;
  booted.then(() => { if (!state.inFlight && state.queued) send(state); }, () => {});
}

// ---------- animation: a play button steps an animated range parameter ----------
const reducedMotion = matchMedia("(prefers-reduced-motion: reduce)");
function setupPlay(state, button) {
  const input = state.fig.querySelector(`input[name="${button.dataset.for}"]`);
  let timer = null;
  const stop = () => { clearInterval(timer); timer = null; button.textContent = "Play"; button.setAttribute("aria-pressed", "false"); };
  const start = () => {
    button.textContent = "Pause"; button.setAttribute("aria-pressed", "true");
    askAhead(state, input);
    timer = setInterval(() => {
      if (state.inFlight) return; // never queue frames faster than Python answers
      const step = Number(input.step) || 1;
      let v = Number(input.value) + step;
      if (v > Number(input.max)) v = Number(input.min);
      input.value = String(v);
      request(state);
    }, 80);
  };
  let pausedByReader = false; // a figure the reader paused never starts again by itself
  button.addEventListener("click", () => {
    pausedByReader = Boolean(timer);
    return timer ? stop() : start();
  });
  state.stopAnimation = stop;
  state.startAnimation = () => { if (!timer && !pausedByReader && !reducedMotion.matches) start(); };
  reducedMotion.addEventListener("change", () => reducedMotion.matches && stop());
}

// ---------- a token sequence: "Random repeat" writes a random span twice ----------
function setupRandomTokens(state, button) {
  const input = state.fig.querySelector(`input[name="${button.dataset.for}"]`);
  button.addEventListener("click", () => {
    const lo = Number(input.dataset.min), hi = Number(input.dataset.max);
    const most = Number(input.dataset.length);
    const token = () => lo + Math.floor(Math.random() * (hi - lo + 1));
    const span = Array.from({ length: Math.min(12, Math.floor(most / 3)) }, token);
    const prefix = Array.from({ length: Math.min(4, most - 2 * span.length) }, token);
    input.value = [...prefix, ...span, ...span].join(" ");
    request(state);
  });
}

// ---------- start ----------
// plotly.js is 1.3 MB and about a second of main-thread work on a phone, for hover values
// and for drawing frames Python computed. Until a reader shows they want a figure (a pointer
// over it, a touch, keyboard focus, a moved control) or a figure needs a live draw (an
// animation, a link to a state), each figure is the build's static SVG, and plotly stays
// unloaded. The page prefetches the file (prefetchPlotly), so loading it is a parse, not a download
// (except under the browser's data saver, where nothing is fetched ahead).
let plotlyLoading = null;
function loadPlotly() {
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve, reject) => {
      if (window.Plotly) return resolve();
      const tag = document.createElement("script");
      tag.src = script.dataset.plotly;
      tag.onload = () => resolve();
      tag.onerror = () => reject(new Error("The drawing library (plotly.js) could not be loaded."));
      document.head.append(tag);
    });
    plotlyLoading.then(takeOver, (err) => failAll(err.message));
  }
  return plotlyLoading;
}

// plotly's file is prefetched (the browser's lowest priority) once the page is on screen and
// loaded. Asked for while the page still arrived, its 457 kB shared a slow link with the page's
// own fonts: Lighthouse's mobile runs put it on the way to the largest paint whenever the parser
// reached the tag first (4.4 s against 1.9 s, half the runs of one article).
const PREFETCH_WAIT_MS = 3000;
function prefetchPlotly() {
  if (plotlyLoading) return;
  const link = Object.assign(document.createElement("link"), { rel: "prefetch", href: script.dataset.plotly });
  document.head.append(link);
}

// The build's figure, laid out for this figure's drawing width (the layout the static SVG shows).
function prerendered(state) {
  const pre = prerender(state);
  state.width = drawingWidth(state);
  return { data: pre.figure.data, layout: pre.layouts[state.width] };
}

// plotly redraws each figure Python has not drawn yet from the build's figure, interactive: the
// one the reader reached for first, then the rest nearest the screen first, one figure a task.
// All in one task held the page for 860 ms on composition-and-subspaces on our 2-core machine
// (a phone is 3 to 4 times slower), during which a scroll or a click waited. marks.firstFigure:
// every figure drawn.
let reachedFirst = null; // the figure whose pointer, touch or focus loaded plotly

function nextTask() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function offScreen(state) {
  const box = state.fig.getBoundingClientRect();
  return Math.max(0, box.top - innerHeight, -box.bottom); // px away from the viewport; 0 on screen
}

async function takeOver() {
  const away = new Map(states.map((s) => [s, s === reachedFirst ? -1 : offScreen(s)])); // one layout
  const order = states.slice().sort((a, b) => away.get(a) - away.get(b));
  for (const state of order) {
    await nextTask(); // not in plotly's own (long) task; a reader's input or a Python result goes between two figures
    if (state.lastFigure) continue; // Python answered first; never draw over it
    try {
      state.lastFigure = prerendered(state);
      draw(state, state.lastFigure);
    } catch (err) {
      setStatus(state, "error", `The prerendered figure could not be drawn: ${err.message}`);
    }
  }
  marks.firstFigure = performance.now();
  for (const state of states) if (state.aheadWanted) askAhead(state); // waited for plotly
}

const states = demos.map((fig, index) => ({
  fig, index, name: fig.dataset.demo, plot: fig.querySelector('[data-role="plot"]'),
  inFlight: false, queued: null, lastFigure: null, lastKey: JSON.stringify(readParams(fig)),
}));

// Under the browser's data saver, Python (up to the size each figure states) starts only when
// the reader moves a control or follows a link to a figure's state; otherwise it starts once the
// page is on screen, in the worker, so the figures are live by the time a reader reaches for one
// (scripts/bench).
const saveData = Boolean(navigator.connection && navigator.connection.saveData);

if (states.length) {
  if (saveData) {
    for (const state of states) {
      const cost = state.fig.querySelector('[data-role="live"]')?.dataset.cost; // the build's sum of the runtime's files
      setLive(state, `Data saver: as built until you move a control; then Python starts (${cost}, once).`);
    }
  } else {
    bootWorker();
    // (at most PREFETCH_WAIT_MS after the first paint: a slow image may hold the load event back)
    afterFirstPaint().then(() => Promise.race([pageLoaded(), new Promise((resolve) => setTimeout(resolve, PREFETCH_WAIT_MS))])).then(prefetchPlotly);
  }
  for (const state of states) {
    for (const intent of ["pointerover", "touchstart", "focusin"]) {
      state.fig.addEventListener(intent, () => { reachedFirst ||= state; loadPlotly(); }, { once: true, passive: true });
    }
  }
  // A link to a figure in a state: ?params on an embed page, ?params#figure-id elsewhere.
  const linked = location.search && (embedPage ? states[0]
    : states.find((s) => s.fig.id === decodeURIComponent(location.hash.slice(1))));
  if (linked) {
    linked.link = fromQuery(linked.fig, location.search);
    linked.fromLink = true; // never animates by itself: it would move away from the linked state
    if (linked.link) showNote(linked, "Showing the default settings until Python has started; then this figure opens with the settings in the link.");
    if (linked.link && saveData) bootWorker(); // following a link to a state asks for Python
  }
  for (const state of states) {
    setupMenu(state.fig, state.plot.getAttribute("aria-label") || state.name);
    const controls = state.fig.querySelector(".demo-controls");
    applyActive(state.fig); // a browser may have restored other values (back, reload) than the build's
    for (const kind of ["input", "change"]) {
      controls.addEventListener(kind, (event) => {
        applyActive(state.fig);
        request(state);
        askAhead(state, event.target.closest("[name]"));
      });
    }
    // A pointer over a figure or a control focused: its values are computed ahead (the one under
    // the pointer, else the figure's first).
    const named = [...controls.querySelectorAll("[name]")];
    const first = ["range", "select-one", "checkbox"].map((type) => named.find((c) => c.type === type)).find(Boolean);
    const reach = (event) => askAhead(state, event.target.closest?.(".demo-controls [name]") || state.reach || first);
    for (const intent of ["pointerover", "focusin"]) state.fig.addEventListener(intent, reach, { passive: true });
    for (const button of state.fig.querySelectorAll('[data-role="play"]')) setupPlay(state, button);
    for (const button of state.fig.querySelectorAll('[data-role="random-tokens"]')) setupRandomTokens(state, button);
  }
  // Animations start when their figure comes into view (never under reduced motion).
  const near = new IntersectionObserver((entries) => {
    for (const e of entries) {
      const state = states.find((s) => s.fig === e.target);
      if (!state || !state.startAnimation || state.fromLink) continue;
      state.inView = e.isIntersecting;
      // Python may finish booting after the figure has left the screen: start only if still in view.
      if (e.isIntersecting && (booted || !saveData)) bootWorker().then(() => state.inView && state.startAnimation(), () => {});
      else state.stopAnimation();
    }
  }, { rootMargin: "100px" });
  for (const s of states) near.observe(s.fig);
  // A column that crosses one of the drawing widths (a phone turned, a window resized): the
  // static SVG follows by CSS; a figure plotly drew is laid out again for the new width.
  const resized = new ResizeObserver((entries) => {
    for (const e of entries) states.find((s) => s.plot === e.target).room = e.target.clientWidth; // all read before any draw
    for (const s of states) {
      if (!s.lastFigure || drawingWidth(s) === s.width) continue;
      if (Number(s.fig.dataset.renderCount) > 0) { s.lastKey = null; request(s); } // Python lays it out again
      else { s.lastFigure = prerendered(s); draw(s, s.lastFigure, true); }
    }
  });
  for (const s of states) resized.observe(s.plot);
  // A figure away from the screen is neither painted nor composited (content-visibility), so a
  // slider's frame costs what the figures on screen cost (on the gallery 1 to 2 ms less a move,
  // measured side by side). Its height stays the one it was laid out at, so nothing moves: its
  // box is measured here and the browser keeps the size it was last drawn at ("auto").
  const heights = states.map((s) => s.fig.offsetHeight);
  states.forEach((s, i) => Object.assign(s.fig.style, { containIntrinsicHeight: `auto ${heights[i]}px`, contentVisibility: "auto" }));
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    palette = null;
    for (const s of states) if (s.lastFigure) draw(s, s.lastFigure, true);
  });
}

// A page that goes away stops the worker computing ahead for it (a SharedWorker serves other pages).
addEventListener("pagehide", () => {
  if (worker && states.some((s) => s.ahead)) worker.post({ type: "ahead", items: [] });
  for (const s of states) s.ahead = null;
});

// ---------- an embed page in a frame tells its host how tall it is (static/embed.js listens) ----------
function tellHost(message) {
  if (framed) window.parent.postMessage(message, "*"); // heights and statuses only: nothing private
}
if (framed) {
  const sendHeight = () => tellHost({ type: "headspace:height", height: Math.ceil(document.body.getBoundingClientRect().height),
    demo: demos[0] && demos[0].dataset.demo });
  new ResizeObserver(sendHeight).observe(document.body);
  window.addEventListener("message", (e) => {
    if (e.source === window.parent && e.data && e.data.type === "headspace:hello") sendHeight();
  });
}

// For tests and benchmarks: boot now, a figure's current parameters, timing marks,
// and the worker's wasm heap size.
window.headspace = {
  ready: () => bootWorker(),
  // Let plotly draw every figure shown by patch.js now (tests compare the two drawings).
  settle: () => Promise.all(states.filter((s) => s.shown && s.shown !== s.drawn).map((s) => {
    clearTimeout(s.settle);
    return plot(s, s.shown);
  })),
  params: (fig) => readParams(fig), // what the next call would send for this figure
  answered: (fig) => [...answers.keys()].filter((k) => k.startsWith(`${demos.indexOf(fig)}@`)).length, // kept answers
  busy: () => states.some((s) => s.inFlight), // a call is on its way to Python
  marks,
  stats: () => bootWorker().then(() => new Promise((resolve) => {
    if (!worker) return resolve({ heapBytes: null }); // the worker is gone (a crash, say)
    statsWaiters.push(resolve);
    worker.post({ type: "stats" });
  })),
};
