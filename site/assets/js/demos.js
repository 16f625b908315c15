// Page side of the live demos (DOM contract: docs/contracts.md). A figure's state is one plain object
// changed only by figure/reduce.js; this file turns the reader's moves, the worker's messages and the
// page's observers into events, and carries out the effects in one place (dispatch).

import { controlTexts, fromQuery, readParams, setControlTexts, writeParams } from "./state.js";
import { setupMenu } from "./share.js";
import { afterPageLoad } from "./first-paint.js";
import { demos, embedPage, marks, same, saveData } from "./figure/page.js";
import { CATCH_UP_MS, EXACT_AFTER_MS, answerKey, initial, reduce } from "./figure/reduce.js";
import { say, show } from "./figure/status.js";
import * as draw from "./figure/draw.js";
import * as answers from "./figure/answers.js";
import * as python from "./figure/python.js";
import { applyActive, keepOnSwipe, keepToGrid, setupPlay, setupRandomTokens, updateReadouts } from "./figure/controls.js";
import { reportHeight } from "./figure/embed-host.js";
import { THEMES } from "./theme.js";
import { setupNavigation } from "./navigate.js";

// A view: a figure's elements, what is drawn in them (draw.js), and its state. Its index counts on
// across the pages an in-page navigation shows (navigate.js), so that an answer Python computed for
// a figure of the page left is never taken for one of the page shown.
const views = [];
let firstIndex = 0;
function viewOf(fig) {
  const plot = fig.querySelector('[data-role="plot"]');
  const start = readParams(fig, { asBuilt: true });
  const outputs = [...fig.querySelectorAll("output[data-output]")];
  return {
    fig, plot, start, startDrawing: plot.innerHTML,
    // the outputs the build drew: a reader who moves back to its settings gets them again
    startOutputs: [Object.fromEntries(outputs.map((o) => [o.dataset.output, JSON.parse(o.dataset.value)])),
      Object.fromEntries(outputs.map((o) => [o.dataset.output, o.innerHTML]))],
    controls: Object.fromEntries([...fig.querySelectorAll(".demo-controls [name]")].map((c) => [c.getAttribute("name"), c])),
    state: initial({ index: firstIndex + views.length, name: fig.dataset.demo, startKey: JSON.stringify(start), answered: Boolean(fig.dataset.answers) }),
  };
}

/** The one place a figure changes: its state by reduce, what it says from that state, then the effects. */
function dispatch(view, event) {
  if (view.gone) return; // a figure of a page left (navigate.js): a late reply changes nothing
  const { state, effects } = reduce(view.state, event);
  view.state = state;
  show(view);
  for (const effect of effects) EFFECTS[effect.type](view, effect);
}

// Whether a build answer fetched for the control ``name`` is on the grid of the settings ``key`` (their
// JSON): an answer file of another grid (a stale build) says another value.
const answerFor = (answer, name, key) => same(answer.params[name], JSON.parse(key)[name]);

const whenIdle = window.requestIdleCallback ? (f) => requestIdleCallback(f, { timeout: 200 }) : (f) => setTimeout(f, 50);
const EFFECTS = {
  post: (view, { kind, params }) => python.call({ view, kind }, view.state.name, params, draw.drawingWidth(view)),
  fetch: (view, { url, name, key }) => answers.fetchBuildAnswer(url).then(
    (answer) => dispatch(view, { type: "built", key, answer, width: draw.drawingWidth(view), grid: answerFor(answer, name, key) }),
    () => dispatch(view, { type: "unbuilt", key })),
  draw: drawAnswer,
  readouts: (view) => updateReadouts(view.fig),
  boot: () => bootPython().catch(() => {}), // a failure is the event "fail"
  retry: () => retryPython(),
  frame: (view) => requestAnimationFrame(() => dispatch(view, { type: "frame" })),
  keep: (view, { key, json }) => answers.keep(key, json),
  late: (view, { key, build }) => { // (tests may lengthen either wait)
    if (build) setTimeout(() => dispatch(view, { type: "lateExact", key, build }), window.HEADSPACE_EXACT_AFTER_MS ?? EXACT_AFTER_MS);
    setTimeout(() => dispatch(view, { type: "late", key }), window.HEADSPACE_CATCH_UP_MS ?? CATCH_UP_MS);
  },
  near: standIn,
  request: (view, { url }) => answers.requestBuildAnswer(url), // read, if wanted, by "exact"
  // Python live and slow for this setting: the build's answer of it, drawn unless Python's came first.
  exact: (view, { url, name, key }) => answers.fetchBuildAnswer(url).then((answer) => {
    if (answerFor(answer, name, key)) {
      dispatch(view, { type: "nearAnswer", key, shown: key, answer, exact: true, width: draw.drawingWidth(view) });
    }
  }, () => {}), // (Python answers anyway)
  // A link's settings Python accepted go into the controls (its texts), which are read back.
  controls: (view, { result, params, width }) => {
    writeParams(view.fig, result.controls, Object.keys(params));
    applyActive(view.fig);
    updateReadouts(view.fig);
    const now = readParams(view.fig);
    dispatch(view, { type: "linked", params: now, key: JSON.stringify(now), asked: JSON.stringify(params), result, width });
  },
  // A reader who reaches for a control will most likely move it: Python computes its other values
  // in the worker's idle time, and a move to one of them is drawn from that answer at once.
  idle: (view) => whenIdle(() => {
    const control = view.controls[view.state.reach];
    dispatch(view, { type: "idle", usable: Boolean(control && !control.disabled), hasValues: Boolean(control && answers.valuesOf(control)),
      params: readParams(view.fig), width: draw.drawingWidth(view) });
  }),
  ahead: (view, { control, width }) => {
    for (const other of views) if (other !== view && other.state.ahead) dispatch(other, { type: "aheadDropped" }); // one list per page
    python.ahead(width, answers.aheadItems(view, view.controls[control], width));
  },
  ask: (view) => move(view),
  prefetch: (view, { control }) => whenIdle(() => answers.prefetchNearest(view, view.controls[control])),
  plot: (view) => draw.plot(view, draw.prerendered(view)),
};

// The nearest answer the page has for the setting ``key``, standing in while Python computes it
// (reduce.js's nearAnswer): Python's kept answer or the page's start at once, the build's once fetched.
function standIn(view, { key }) {
  const width = draw.drawingWidth(view), params = JSON.parse(key);
  const { showing, shown, startKey } = view.state;
  const near = answers.nearestAnswer(view, params, width, view.state.reach, showing === "start" ? startKey : shown?.key);
  const none = () => dispatch(view, { type: "nearAnswer", key, width });
  if (!near) return none();
  const found = (answer) => dispatch(view, { type: "nearAnswer", key, width, shown: near.shown, answer, exact: near.exact });
  if (near.json) return found(JSON.parse(near.json));
  if (near.start) return found(null);
  const name = near.build.name;
  answers.fetchBuildAnswer(near.build.url).then( // (an answer of another grid than this page's: none)
    (answer) => (answerFor(answer, name, near.shown) ? found(answer) : none()), none);
}

// A drawing, with the outputs it comes with; Python's counted and timed (tests and bench).
function drawAnswer(view, { from, answer, json, result, timing }) {
  if (from !== "python") {
    const start = answer === undefined ? from === "start" : answer === null; // the nearest may be the start
    draw.showDrawing(view, start ? null : answer.svg);
    draw.writeOutputs(view, ...(start ? view.startOutputs : [answer.outputs, answer.text]));
    if (from !== "near") marks.firstAnswer ||= performance.now();
    return;
  }
  const t = performance.now();
  result ||= JSON.parse(json);
  const t0 = performance.now(), patched = draw.showDrawing(view, result.svg); // in place: tests and bench count
  if (patched) view.fig.dataset.patchCount = String(Number(view.fig.dataset.patchCount || 0) + 1);
  draw.writeOutputs(view, result.outputs, result.text);
  // Style and layout now, not at the start of the next frame: a move lands anywhere in a frame,
  // and until that frame begins the main thread would only wait.
  void view.fig.offsetHeight;
  const detail = { drawMs: performance.now() - t0, patched, ...timing, ...(json && { parseMs: t0 - t }) };
  view.fig.dispatchEvent(new CustomEvent("demo:rendered", { detail }));
}

// ---------- the reader's move, and the worker's messages ----------
const CLICKED = new Set(["select", "checkbox"]); // a move is a click: the build's answer is requested with the call (reduce.js)
function move(view, again = false) {
  const params = readParams(view.fig), key = JSON.stringify(params), width = draw.drawingWidth(view);
  const live = view.state.python === "live";
  const kept = live ? answers.kept(answerKey(view.state.index, key, width)) : null;
  // the build's answer: before Python, or while Python computes it (not for a data saver: no extra bytes)
  const build = kept || (live && saveData) ? null : answers.buildAnswerURL(view, params);
  if (build && live) build.atOnce = CLICKED.has(view.controls[build.name].dataset.kind);
  dispatch(view, { type: "move", params, key, width, again, kept, build });
}

let failure = null; // the runtime failed on this page: a figure wired later says so too
function failAll(message, retryable = false) {
  python.close(); // nothing is sent once the runtime is gone
  answers.forgetAll(); // a figure drawn after this would claim a live Python
  failure = { type: "fail", message, retryable };
  for (const view of views) dispatch(view, failure);
  startRest(); // (an in-place arrival waits for its Python before wiring the rest)
}

// A boot that stalled (offline, say) starts again when the connection returns or a reader moves a control.
function retryPython() {
  if (python.started() || !views.some((v) => v.state.python === "stalled")) return;
  announced = false;
  failure = null;
  for (const view of views) {
    const params = readParams(view.fig);
    dispatch(view, { type: "retry", params, key: JSON.stringify(params) });
  }
  bootPython().catch(() => {});
}
addEventListener("online", retryPython);

let announced = false;
function bootPython() {
  const booting = python.boot();
  if (!announced) {
    announced = true;
    for (const view of views) dispatch(view, { type: "booting" }); // "loading", and how far the boot is
    const page = pageCount; // (a page shown in place meanwhile is live once the worker has its demos)
    booting.then(() => page === pageCount && liveHere(), (err) => failAll(err.message, err.retryable));
  }
  return booting;
}

python.listen({
  progress: () => { for (const view of views) if (view.state.life !== "live") say(view); },
  reply: ({ view, kind, params, width, sent }, data) => dispatch(view, {
    type: "reply", kind, params, width, data, result: kind === "link" && data.type === "result" ? JSON.parse(data.json) : undefined,
    timing: { roundTripMs: performance.now() - sent, pythonMs: data.pythonMs } }),
  ahead: ({ key, json }) => {
    answers.keep(key, json);
    const index = Number(key.slice(0, key.indexOf("@")));
    const view = views.find((v) => v.state.index === index);
    if (view?.state.queued) dispatch(view, { type: "aheadAnswer", key, json, width: draw.drawingWidth(view) });
  },
  lost: failAll,
});

// ---------- plotly: hover values only ----------
// plotly draws the figure shown once a pointer is on it, from the build's data (the start) or
// Python's, asked for then, once per setting (an answer carries only its drawing).
const settle = (view) => draw.settle(view, figureShown).catch((err) => dispatch(view, { type: "plotlyFailed", message: err.message }));
function figureShown(view) {
  const { showing, shown, name } = view.state;
  if (showing === "start") return Promise.resolve(draw.prerendered(view));
  if (!shown) return Promise.resolve(null);
  const { key, width } = shown;
  if (view.asked?.key !== key || view.asked.width !== width) {
    const figure = python.figureData(name, JSON.parse(key), width).then((answer) => answer && answer.figure);
    view.asked = { key, width, figure };
    figure.then((f) => {
      if (!f && view.asked?.figure === figure) view.asked = null; // none came: asked again next time
    });
  }
  return view.asked.figure;
}

// For tests and benchmarks.
const viewOfFig = (fig) => views.find((v) => v.fig === fig);
window.headspace = {
  ready: () => bootPython(),
  // plotly draws every figure shown now, as for a reader's pointer (tests compare the two drawings).
  settle: () => Promise.all(views.map(settle)),
  params: (fig) => readParams(fig), // what the next call would send for this figure
  drawing: (fig) => viewOfFig(fig)?.drawing, // the SVG last shown, as drawn
  state: (fig) => viewOfFig(fig)?.state, // everything the figure knows (reduce.js)
  wired: (fig) => views.some((v) => v.fig === fig), // the page listens to this figure's controls (it is set up)
  answered: (fig) => answers.keptFor(viewOfFig(fig)?.state.index), // kept answers
  busy: () => views.some((v) => v.state.inFlight), // a call is on its way to Python
  marks,
  stats: () => bootPython().then(python.stats, python.stats),
  workers: () => python.workers(), // {opened, kind}: an in-page navigation keeps the one worker
};

// ---------- start ----------
// This script runs as soon as it arrives (its tag starts <body>), usually while the article is
// still being parsed: each figure is wired once the parser has passed its end.
const query = new URLSearchParams(location.search);
const theme = embedPage && query.get("theme");
if (embedPage) query.delete("theme");
let linkedTo = (query.size || (theme && !THEMES.includes(theme)))
  ? (fig, index) => (embedPage ? index === 0 : fig.id === decodeURIComponent(location.hash.slice(1))) : () => false;

// Animations start when their figure comes into view (never under reduced motion).
const near = new IntersectionObserver((entries) => {
  for (const e of entries) {
    const view = viewOfFig(e.target);
    if (!view || !view.startAnimation || view.state.fromLink) continue; // a link's state never animates away
    view.inView = e.isIntersecting;
    // Python may finish booting after the figure has left the screen: start only if still in view.
    if (e.isIntersecting && (python.started() || !saveData)) {
      if (!python.live()) view.armAnimation();
      bootPython().then(() => view.inView && view.startAnimation(), () => view.stopAnimation());
    } else view.stopAnimation();
  }
}, { rootMargin: "100px" });
// A column that crosses one of the drawing widths (a phone turned, a window resized): the build's
// drawings follow by CSS; Python draws its setting again for the new width, and plotly the build's.
const resized = new ResizeObserver((entries) => {
  const changed = entries.map((e) => Object.assign(views.find((v) => v.plot === e.target), { room: e.target.clientWidth })); // all read before any draw
  for (const view of changed) dispatch(view, { type: "resize", width: draw.drawingWidth(view) });
});

/** Wire one figure whose markup has been parsed: its controls, menu, link and observers. */
function wire(fig) {
  const view = viewOf(fig);
  view.onPlot = (figure) => dispatch(view, { type: "plotted", figure, width: figure.width });
  views.push(view);
  // The controls arrive disabled, and stay so until this script names the figure (name, below);
  // with JavaScript off they stay disabled and say why.
  const controls = fig.querySelector(".demo-controls");
  if (announced) dispatch(view, { type: "booting" }); // "loading", and how far the boot is
  else { // the data saver: nothing until the reader asks
    const cost = fig.querySelector('[data-role="live"]')?.dataset.cost; // the build's sum of the runtime's files
    const line = fig.querySelector('[data-role="live"] .demo-live-text');
    if (line) line.textContent = `Data saver: as built until you move a control; then Python starts (${cost}, once).`;
  }
  // plotly (hover values) loads when a mouse reaches a figure, before it is on the plot; a finger
  // on the plot loads it then (settle).
  fig.addEventListener("pointerover", (e) => e.pointerType === "mouse" && draw.loadPlotly(), { passive: true });
  // A link to a figure in a state: ?params on an embed page, ?params#figure-id elsewhere. An embed
  // page's ?theme= is the page's colour scheme (theme.js), not the figure's: a bad one is named.
  if (linkedTo(fig, views.length - 1) && !views.some((v) => v.state.fromLink)) {
    const problems = theme && !THEMES.includes(theme)
      ? [{ text: `Colour scheme (theme=${theme} in the link): must be ${THEMES.join(", ").replace(/, (?=\w+$)/, " or ")}.` }] : null;
    dispatch(view, { type: "link", params: fromQuery(fig, query.toString()) || {}, text: Object.fromEntries(query), problems });
    if (saveData) bootPython(); // following a link to a state asks for Python
  }
  setupMenu(fig, view.plot.getAttribute("aria-label") || view.state.name);
  // A pointer coming onto the plot, or moving over it (not the browser's own events as the drawing
  // changes under a pointer at rest), is about to read plotly's hover values.
  view.plot.addEventListener("pointerenter", () => settle(view), { passive: true });
  view.plot.addEventListener("pointermove", (e) => (e.movementX || e.movementY) && settle(view), { passive: true });
  applyActive(fig); // a browser may have restored other values (back, reload) than the build's
  const moved = () => {
    applyActive(fig);
    move(view);
  };
  const reach = (control) => dispatch(view, { type: "reach", control: control?.getAttribute("name") });
  for (const kind of ["input", "change"]) {
    controls.addEventListener(kind, (event) => {
      moved();
      reach(event.target.closest("[name]"));
      if (saveData) bootPython(); // the reader asks for Python
    });
  }
  for (const slider of controls.querySelectorAll("[data-kind=range]")) {
    keepToGrid(slider, python.live);
    keepOnSwipe(slider, moved);
  }
  // A pointer over a figure or a control focused: its values are computed ahead (the one under
  // the pointer, else the figure's first).
  const named = [...controls.querySelectorAll("[name]")];
  const first = ["range", "select", "checkbox"].map((kind) => named.find((c) => c.dataset.kind === kind)).find(Boolean);
  const reached = (event) => reach(event.target.closest?.(".demo-controls [name]") || view.controls[view.state.reach] || first);
  for (const intent of ["pointerover", "focusin"]) fig.addEventListener(intent, reached, { passive: true });
  for (const button of fig.querySelectorAll('[data-role="play"]')) setupPlay(view, button, { move: () => move(view), reach });
  for (const button of fig.querySelectorAll('[data-role="random-tokens"]')) setupRandomTokens(fig, button, () => move(view));
  // A setting restored by the browser (back, reload), or kept in the page's history entry when the
  // reader left it (navigate.js): that setting, not the build's.
  if (!view.state.link && restoring[fig.id]) setControlTexts(fig, restoring[fig.id]);
  if (!view.state.link && JSON.stringify(readParams(fig)) !== view.state.lastKey) moved();
  near.observe(fig);
  resized.observe(view.plot);
  if (failure) dispatch(view, failure);
  else if (pageLive) becomeLive(view);
}

// ---------- setting the figures up: those on screen first ----------
// Wiring a figure (viewOf, its controls, menu and observers) costs the main thread tens of ms, four
// times that on a phone, and a page's figures wired in one task kept the first one from answering
// until all were (decision 0011). So each figure is named as soon as it is parsed (the worker imports
// every named figure's demo at once), wired as soon as it is on screen, and the others are wired one
// an idle moment at a time, those near the screen first; one scrolled to before its turn is wired
// at once. After an in-page navigation the others wait until the page's Python answers, so that no
// wiring stands between the worker's "ready" and the figures on screen.
const unwired = []; // figures named but not wired yet, in the order they are to be wired
let pageCount = 0; // pages shown in this document (navigate.js): a late callback for a page left does nothing
let pageLive = false; // this page's Python answers: a figure wired now is live at once
let restHeld = false; // an in-place arrival's Python not answered yet: the off-screen figures wait
let restBooked = false;
// Settings the reader left figures of this page at ({figure id: its controls' texts}), from the
// page's history entry (navigate.js): applied as each figure is wired.
let restoring = (!embedPage && history.state?.figures) || {};

/** This page's Python answers: every figure wired is told, and one wired later is at once. */
function liveHere() {
  pageLive = true;
  for (const view of views) becomeLive(view);
  startRest();
}
function becomeLive(view) {
  if (onShow()) marks.pageLive ||= performance.now(); // tests and bench: the first figure answers from Python
  dispatch(view, { type: "live" });
}
// The page's marks are the page on show's: from a click on a link (or back) until the next page is
// swapped in (navigate.js), the page being left is not, though it may still wire a figure.
const onShow = () => marks.navigationStart == null || marks.pageShown != null;

// The screen and half a screen either side: a figure there is wired now (on screen) or next (near).
const soon = new IntersectionObserver((entries) => {
  const near = entries.filter((e) => e.isIntersecting && unwired.includes(e.target));
  const away = (e) => Math.max(0, -e.boundingClientRect.bottom, e.boundingClientRect.top - innerHeight); // px off screen
  const shown = near.filter((e) => away(e) === 0).map((e) => e.target);
  // None on screen (an article's top): the nearest is the one the reader reaches first, wired now too.
  if (!shown.length && near.length) shown.push(near.reduce((a, b) => (away(b) < away(a) ? b : a)).target);
  setUp(shown);
  for (const e of near) if (!shown.includes(e.target)) unwired.unshift(...unwired.splice(unwired.indexOf(e.target), 1));
  bookRest();
}, { rootMargin: "50% 0px" });

/** Name a parsed figure: the worker's boot or rejoin takes its demo; wired once on screen, reached
 * (useFirst) or idle. Its controls are usable from now on: a keyboard reader tabs into them in order,
 * whether or not the figure is wired yet. */
function name(fig) {
  demos.push(fig);
  unwired.push(fig);
  fig.querySelector(".demo-controls").disabled = false;
  soon.observe(fig);
  if (!saveData && demos.length === 1) {
    bootPython();
    // plotly is fetched ahead only where a reader has a mouse; on a touch screen it waits for Python.
    if (matchMedia("(pointer: fine)").matches) afterPageLoad().then(draw.prefetchPlotly);
  }
  bookRest();
}

/** Wire ``figs`` (named, not wired yet), then keep them off the paint while away from the screen. */
function setUp(figs) {
  if (!figs.length) return;
  const first = views.length;
  for (const fig of figs) {
    unwired.splice(unwired.indexOf(fig), 1);
    soon.unobserve(fig);
    wire(fig);
  }
  if (onShow()) {
    marks.pageWired ||= performance.now(); // tests and bench: the first figures wired
    if (!unwired.length) marks.pageSetUp = performance.now(); // every figure of the page
  }
  skipOffScreen(views.slice(first));
}

// A reader who reaches into a figure not wired yet (a control tabbed to or focused, a pointer, a
// value changed) has it wired at once, before the event reaches the figure's own listeners (wire adds
// them; this listens on the document, capturing, so the same event reaches them): the control the
// reader is on answers as on a wired figure.
const REACH = ["focusin", "pointerdown", "input", "change"];
for (const kind of REACH) {
  document.addEventListener(kind, (event) => {
    const fig = event.target.closest?.("figure.demo[data-demo]");
    if (fig && unwired.includes(fig)) setUp([fig]);
  }, { capture: true, passive: true });
}

// The figures off screen: one per idle moment (a figure's wiring is one task: input waits at most that long).
function bookRest() {
  if (restBooked || restHeld || !unwired.length) return;
  restBooked = true;
  const page = pageCount;
  whenIdle(() => {
    if (page !== pageCount) return;
    restBooked = false;
    if (restHeld) return;
    setUp(unwired.slice(0, 1));
    bookRest();
  });
}
function startRest() {
  restHeld = false;
  bookRest();
}

// A figure is parsed once anything follows it in the document (the parser only appends).
const parsedPast = (node) => {
  for (; node && node !== document.body; node = node.parentNode) if (node.nextSibling) return true;
  return false;
};
const figures = document.getElementsByTagName("figure"); // live: grows as the page is parsed
let looked = 0;
function nameParsed() {
  for (; looked < figures.length; looked++) {
    const fig = figures[looked];
    if (document.readyState === "loading" && !parsedPast(fig)) return;
    if (fig.matches("figure.demo[data-demo]")) name(fig);
  }
}

// A figure away from the screen is neither painted nor composited (a slider's frame costs what the
// figures on screen cost), at the height it was laid out at, so nothing moves.
function skipOffScreen(some) {
  const heights = some.map((v) => v.fig.offsetHeight);
  some.forEach((v, i) => Object.assign(v.fig.style, { containIntrinsicHeight: `auto ${heights[i]}px`, contentVisibility: "auto" }));
}

/** Once the whole page is parsed: what concerns every figure at once. */
function wholePage() {
  nameParsed();
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    draw.forgetPalette();
    for (const v of views) if (v.state.showing === "plotly") draw.plot(v, v.state.lastFigure); // the build's and Python's drawings follow by CSS
  });
}

if (document.readyState === "loading") {
  const parsing = new MutationObserver(nameParsed);
  parsing.observe(document.body, { childList: true, subtree: true });
  nameParsed();
  document.addEventListener("DOMContentLoaded", () => { parsing.disconnect(); wholePage(); }, { once: true });
} else wholePage();

// A page that goes away stops the worker computing ahead for it (a SharedWorker serves other pages).
addEventListener("pagehide", () => {
  if (views.some((v) => v.state.ahead)) python.ahead(0, []);
  for (const view of views) if (view.state.ahead) dispatch(view, { type: "aheadDropped" });
});

reportHeight();

// ---------- another article shown in this page (navigate.js) ----------
// The page's figures go, with everything that listened to them; the worker, and Python in it, stay.
function leavePage() {
  if (views.some((v) => v.state.ahead)) python.ahead(0, []);
  for (const view of views) {
    view.stopAnimation?.();
    near.unobserve(view.fig);
    resized.unobserve(view.plot);
    view.gone = true;
  }
  answers.forgetAll(); // kept for figures no longer on show
  firstIndex += views.length;
  views.length = 0;
  demos.length = 0;
  soon.disconnect();
  unwired.length = 0;
  pageCount += 1;
  Object.assign(marks, { pageWired: null, pageLive: null, pageSetUp: null });
  pageLive = false;
  restBooked = false;
  failure = null;
  linkedTo = () => false; // links with a query are not followed in place
}

// The new page's figures, set up as on a fresh load (those on screen first): each shows the build's
// drawing and answers from the build at once, and is live once the worker has imported the page's
// demos (python.rejoin). ``kept``: the settings the reader left them at, if the page is shown again.
function arrivePage(kept) {
  restoring = kept || {};
  const shown = [...document.querySelectorAll("figure.demo[data-demo]")];
  looked = figures.length;
  const joined = shown.length && python.started() ? python.rejoin : null; // else naming boots, as a first page does
  restHeld = Boolean(joined);
  // The worker is asked for the new page's demos first (the names are all it needs), and imports
  // them while the page is laid out and the figures on screen are wired (soon).
  for (const fig of shown) name(fig);
  if (!joined) return Promise.resolve();
  const page = pageCount;
  const joining = joined();
  joining.then((ms) => {
    if (page !== pageCount) return; // the reader followed another link first
    marks.pageImportMs = ms; // the worker's time for them (demos imported, models installed)
    liveHere();
  }, (err) => page === pageCount && failAll(err.message, err.retryable));
  return joining;
}

if (!embedPage) {
  setupNavigation({
    leave: leavePage, arrive: arrivePage,
    // Each moved figure's controls as the reader left them (navigate.js keeps them in the page's history entry).
    settings: () => Object.fromEntries(views.filter((v) => JSON.stringify(readParams(v.fig)) !== v.state.startKey)
      .map((v) => [v.fig.id, controlTexts(v.fig)])),
  });
}
