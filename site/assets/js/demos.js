// Page side of the live demos (DOM contract in docs/contracts.md): each figure's life from the build's
// drawing to Python's, as the reader moves its controls. The parts live in figure/:
//   life.js      the states of a figure and the one transition function (docs/architecture.md)
//   status.js    what a figure says: data-life, data-status, the line under its controls, errors
//   draw.js      the drawings (the build's and Python's, one engine), plotly where a pointer is
//   answers.js   answers drawn without waiting: Python's, kept and asked ahead; the build's
//   python.js    the worker: its boot (which fails on a stall, not on a slow link) and messages
//   controls.js  readouts, inactive controls, play, random tokens, the answer grid, swipes
//   embed-host.js  an embed page tells its host page its height
//
// 1. The page arrives with each figure drawn by the build (life "built", data-status "static").
// 2. Python boots in a worker once the page is on screen (under the data saver, when a reader
//    moves a control). A figure whose reader moves one control alone is drawn at once from the
//    build's answer for that setting ("answered"); any other setting waits for Python ("asking").
// 3. Once Python is live, every move is sent as call(name, params); per figure at most one call is
//    in flight and the latest setting wins. Python's drawing of it is shown ("live"); plotly draws
//    the figure shown when a reader's pointer comes onto it, for its hover values.
// 4. On failure the last good drawing stays, data-status="error" and the message says why.
// 5. A figure opened from a link in a state (state.js) shows its starting settings until Python
//    has checked the link's parameters, then that state; a parameter Python refuses is left out
//    and named, with every other one refused, at the top of the figure.

import { fromQuery, readParams, writeParams } from "./state.js";
import { setupMenu } from "./share.js";
import { afterPageLoad } from "./first-paint.js";
import { demos, embedPage, marks, same, saveData } from "./figure/page.js";
import { advance, boot as bootState, refresh, say, sayRaw, setStatus, showNote, unmark } from "./figure/status.js";
import * as draw from "./figure/draw.js";
import * as answers from "./figure/answers.js";
import * as python from "./figure/python.js";
import { applyActive, keepOnSwipe, keepToGrid, setupPlay, setupRandomTokens, updateReadouts } from "./figure/controls.js";
import { reportHeight } from "./figure/embed-host.js";
import { THEMES } from "./theme.js";

// Each figure is wired as soon as its markup has been parsed (wireParsed, below): on a long article
// the reader's first touch is answered while the rest of the page is still being parsed and laid
// out (issue 32).
const states = [];
function stateOf(fig) {
  const plot = fig.querySelector('[data-role="plot"]');
  const outputs = [...fig.querySelectorAll("output[data-output]")];
  const state = {
    fig, index: states.length, name: fig.dataset.demo, plot, life: "built", showing: "start", startDrawing: plot.innerHTML,
    shown: null, // the settings (their JSON) and width of the answer on screen: {key, width}
    // the settings and outputs the build drew: a reader who moves back to them gets that drawing again
    startOutputs: Object.fromEntries(outputs.map((o) => [o.dataset.output, [o.dataset.value, o.innerHTML]])),
    controls: Object.fromEntries([...fig.querySelectorAll(".demo-controls [name]")].map((c) => [c.getAttribute("name"), c])),
    start: readParams(fig, { asBuilt: true }), answered: Boolean(fig.dataset.answers),
    inFlight: false, queued: null, lastFigure: null,
  };
  state.lastKey = JSON.stringify(state.start);
  return state;
}

// ---------- a reader's move ----------
function request(state, again = false) {
  state.link = state.linkProblems = null; // the reader's own move wins over a link still waiting for Python
  showNote(state, "");
  const params = readParams(state.fig);
  const key = JSON.stringify(params);
  if (key === state.lastKey && !again) return; // a slider's "change" after its last "input": nothing new
  state.lastKey = key;
  state.queued = params; // latest value wins
  if (!again) updateReadouts(state.fig);
  state.nextAnswer = null; // a newer setting than the one waiting for the next frame
  if (python.live()) {
    const answer = answers.kept(answers.answerKey(state, key, draw.drawingWidth(state)));
    if (answer) {
      state.queued = null;
      if (state.inFlight) state.superseded = true; // its answer is older than this one
      showAnswer(state, answer, { key, width: draw.drawingWidth(state) });
      return;
    }
    state.missed = true; // a call: the values ahead are asked for again, nearest this one first
    if (state.life === "refused") advance(state, "ask"); // a new input after a refusal: being checked
    if (!state.inFlight) send(state);
    return;
  }
  fromTheBuild(state, params, key);
  if (state.life === "failed") return;
  bootPython().then(() => { if (!state.inFlight && state.queued) send(state); }, () => {});
}

// Before Python is live: the build's drawing for this setting, if it made one. The setting stays
// queued, so Python draws it once it is live.
function fromTheBuild(state, params, key) {
  if (key === JSON.stringify(state.start)) {
    draw.showDrawing(state, null);
    draw.writeOutputs(state, ...startOutputs(state));
    countAnswer(state); // the build's first drawing answers a move back to it
    return advance(state, "back");
  }
  const where = answers.buildAnswerURL(state, params);
  if (!where) return advance(state, "ask");
  answers.fetchBuildAnswer(where.url).then((answer) => {
    if (state.lastKey !== key || python.live()) return; // the reader moved on, or Python answers now
    if (!same(answer.params[where.name], params[where.name])) return advance(state, "ask"); // another grid: a stale build
    draw.showDrawing(state, answer.svg, "answer");
    state.shown = { key, width: draw.drawingWidth(state) }; // CSS shows the build's drawing for this width
    draw.writeOutputs(state, answer.outputs, answer.text);
    countAnswer(state);
    advance(state, "answer");
  }, () => state.lastKey === key && advance(state, "ask"));
}

// data-answer-count: how many moves the build's drawings answered (tests and bench).
function countAnswer(state) {
  state.fig.dataset.answerCount = String(Number(state.fig.dataset.answerCount || 0) + 1);
  marks.firstAnswer ||= performance.now();
}

function startOutputs(state) {
  const values = {}, text = {};
  for (const [name, [value, html]] of Object.entries(state.startOutputs)) {
    values[name] = JSON.parse(value);
    text[name] = html;
  }
  return [values, text];
}

// ---------- Python's answers ----------
function render(state, result, shown, timing = {}) {
  const t0 = performance.now();
  const how = { patched: draw.showDrawing(state, result.svg) }; // in place: tests and bench count
  state.shown = shown;
  state.width = shown.width; // the width it was drawn for: a resize to another one asks again
  if (how.patched) state.fig.dataset.patchCount = String(Number(state.fig.dataset.patchCount || 0) + 1);
  draw.writeOutputs(state, result.outputs, result.text);
  state.fig.dataset.renderCount = String(Number(state.fig.dataset.renderCount) + 1);
  unmark(state.fig);
  advance(state, "drawn");
  if (state.linkProblems) { // a link's settings drawn without the ones Python refused: say which
    advance(state, "refuse", linkMessage(state, state.linkProblems), "top");
    state.linkProblems = null;
  }
  // Style and layout now, not at the start of the next frame: a move lands anywhere in a frame,
  // and until that frame begins the main thread would only wait.
  void state.fig.offsetHeight;
  state.fig.dispatchEvent(new CustomEvent("demo:rendered", { detail: { drawMs: performance.now() - t0, ...how, ...timing } }));
  if (state.aheadWanted) askAhead(state);
}

// Draw an answer now, so the next frame shows it; a move that comes before that frame waits for it
// (the latest one wins), so a pointer faster than frames costs one drawing per frame.
function showAnswer(state, json, shown) {
  if (state.frameBooked) return void (state.nextAnswer = [json, shown]);
  const t = performance.now(), result = JSON.parse(json);
  render(state, result, shown, { ahead: true, parseMs: performance.now() - t });
  state.frameBooked = true;
  requestAnimationFrame(() => {
    state.frameBooked = false;
    const next = state.nextAnswer;
    state.nextAnswer = null;
    if (next) showAnswer(state, ...next);
  });
}

function send(state) {
  const params = state.queued;
  state.queued = null;
  post(state, params, "controls");
}

// A link's parameters go to Python first: the registry checks them, and only parameters it
// accepts reach the controls. Python names one refused parameter per call: the link is asked
// again without it until what is left is accepted, so that every bad parameter is named.
function sendLink(state) {
  const params = state.link;
  state.link = null;
  post(state, params, "link");
}

// A link's refused parameters, in the words of the figure: the control's label, the link's text,
// and what Python expected (its message).
function problemText(state, { name, raw, message, text }) {
  if (text) return text;
  const control = state.controls[name];
  if (!control) {
    const known = Object.entries(state.controls).map(([n, c]) => `${labelOf(c)} (${n})`).join(", ");
    return `${name}=${raw}: this figure has no parameter '${name}'. Its settings are ${known}.`;
  }
  return `${labelOf(control)} (${name}=${raw} in the link): ${message}.`;
}
const labelOf = (control) => (control.labels?.[0] || control.querySelector?.("legend"))?.textContent.trim() || control.getAttribute("name");

function linkMessage(state, problems) {
  const one = problems.length === 1;
  return [`${one ? "One setting" : `${problems.length} settings`} in the link could not be applied, so the figure ` +
    `shows ${state.linkApplied ? "the link's other settings" : "its default settings"}:`, problems.map((p) => problemText(state, p))];
}

function post(state, params, kind) {
  state.inFlight = true;
  python.call({ state, kind }, state.name, params, draw.drawingWidth(state));
}

function onReply(call, data) {
  const { state, kind, params, width } = call;
  state.inFlight = false;
  if (data.type === "result") answers.keep(answers.answerKey(state, JSON.stringify(params), width), data.json);
  if (state.superseded) { // the reader moved on and that figure was drawn from an answer ahead
    state.superseded = false;
    if (state.queued) send(state);
    else if (state.aheadWanted) askAhead(state);
    return;
  }
  if (kind === "link") showNote(state, "");
  if (data.type === "result") {
    if (kind === "link" && !state.queued) {
      const result = JSON.parse(data.json);
      writeParams(state.fig, result.controls, Object.keys(params)); // Python's texts
      applyActive(state.fig);
      const now = readParams(state.fig);
      state.lastKey = JSON.stringify(now);
      updateReadouts(state.fig);
      // A value between a slider's steps snaps to a step: compute what the controls now hold.
      if (state.lastKey === JSON.stringify(params)) render(state, result, { key: state.lastKey, width });
      else state.queued = now;
    } else if (kind === "controls") {
      if (state.queued) send(state); // Python computes the next figure while this one is drawn
      const t = performance.now();
      const result = JSON.parse(data.json);
      render(state, result, { key: JSON.stringify(params), width }, { roundTripMs: t - call.sent, pythonMs: data.pythonMs, parseMs: performance.now() - t });
    }
  } else if (kind === "link" && data.error.kind === "parameter" && data.error.parameter in params && !state.queued) {
    // Leave the refused parameter out and ask again: every bad one is named, the good ones applied.
    const { parameter, message } = data.error, { [parameter]: refused, ...rest } = params;
    (state.linkProblems ||= []).push({ name: parameter, raw: state.linkText[parameter] ?? JSON.stringify(refused), message });
    state.linkApplied = Object.keys(rest).length > 0;
    state.link = rest;
    sendLink(state);
  } else if (kind === "link") {
    const problems = state.linkProblems || [];
    state.linkProblems = null;
    advance(state, "refuse", problems.length ? linkMessage(state, problems)
      : `The link's settings were not applied: ${data.error.message}. The figure shows its default settings.`, "top");
  } else {
    // A parameter Python refused (a mistyped token, say) is the reader's input, not a fault: the
    // message sits under its control, which is marked until a setting is drawn.
    const { kind: why, parameter, message } = data.error;
    const control = why === "parameter" ? state.controls[parameter] : undefined;
    const label = control ? labelOf(control) : ""; // with the code name, unless the label holds it
    const named = label.toLowerCase().includes(parameter) ? "" : ` (${parameter})`;
    // Python's message names the control by its label already ("Tokens: token 3 must be ..."): once is enough
    const lead = message.startsWith(label) ? "" : `${label}${named}: `;
    advance(state, "refuse", control ? `${lead}${message}. The figure still shows the last valid input.`
      : why === "parameter" ? `${message}. The figure still shows the last valid input.`
        : `Python raised an error: ${message}`, control);
  }
  if (state.queued && !state.inFlight) send(state);
}

function failAll(message) {
  python.close(); // nothing is sent once the runtime is gone
  answers.forgetAll(); // a figure drawn after this would claim a live Python
  for (const state of states) {
    state.inFlight = false;
    state.queued = state.nextAnswer = null;
    state.link = null;
    showNote(state, "");
    advance(state, "fail", `${message} The figure shows the values computed when the page was built.`);
  }
}

function bootPython() {
  const booting = python.boot();
  if (!bootState.announced) {
    bootState.announced = true;
    for (const state of states) refresh(state); // "loading", and the line says how far the boot is
    booting.then(() => {
      bootState.live = true;
      for (const s of states) {
        if (s.link) sendLink(s); // stays "loading" until Python has checked the link
        else {
          if (s.fig.dataset.status !== "error" || s.life !== "built") advance(s, "ready");
          if (s.queued && !s.inFlight) send(s);
        }
        askAhead(s); // the control a reader reached for before Python was ready
      }
    }, (err) => failAll(err.message));
  }
  return booting;
}

python.listen({
  progress: () => { for (const state of states) if (state.life !== "live") say(state); },
  reply: onReply,
  ahead: ({ key, json }) => {
    answers.keep(key, json);
    const state = states[Number(key.slice(0, key.indexOf("@")))];
    // The reader is already there, waiting behind a call in flight: draw it now.
    if (state && state.queued && answers.answerKey(state, JSON.stringify(state.queued), draw.drawingWidth(state)) === key) request(state, true);
  },
  lost: failAll,
});

// ---------- figures computed ahead ----------
// A reader who reaches for a control (a pointer over its figure, focus, a move) will most likely
// move it on: Python computes the figure at that control's other values in the worker's idle time,
// and a move to one of them is drawn from that answer at once. Asked for when the page is idle and
// nothing the reader waits for is under way.
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
  if (!name || !python.live()) return;
  state.aheadWanted = state.inFlight || Boolean(state.queued);
  if (state.aheadWanted) return; // asked again when the figure is drawn (render)
  const params = readParams(state.fig), width = draw.drawingWidth(state);
  const sweep = `${name}@${width}:${JSON.stringify({ ...params, [name]: null })}`;
  if (state.ahead === sweep && !state.missed) return;
  if (!answers.valuesOf(control)) return;
  state.missed = false;
  state.ahead = sweep;
  const items = answers.aheadItems(state, control, width);
  for (const other of states) if (other !== state) other.ahead = null; // the worker keeps one list per page
  python.ahead(width, items);
}

// ---------- plotly: hover values only ----------
// plotly draws the figure shown once a pointer is on it. Its data: the build's for the starting
// settings; for any other, Python's, asked for then (an answer carries only its drawing), once per
// setting shown. A build's answer before Python is live has none: its drawing stays. Without
// plotly a figure still answers every move: the one a pointer reached says what is missing.
const settle = (state) => draw.settle(state, figureShown).catch((err) =>
  setStatus(state, "error", `${err.message} Values under the pointer are not shown; the controls still redraw the figure.`));
function figureShown(state) {
  if (state.showing === "start") return Promise.resolve(draw.prerendered(state));
  const { key, width } = state.shown || {};
  if (!key) return Promise.resolve(null);
  if (state.figureAsked?.key !== key || state.figureAsked.width !== width) {
    const figure = python.figureData(state.name, JSON.parse(key), width).then((answer) => answer && answer.figure);
    state.figureAsked = { key, width, figure };
    figure.then((f) => {
      if (!f && state.figureAsked?.figure === figure) state.figureAsked = null; // none came: asked again next time
    });
  }
  return state.figureAsked.figure;
}

// For tests and benchmarks: boot now, a figure's current parameters, timing marks, and the
// worker's wasm heap size.
window.headspace = {
  ready: () => bootPython(),
  // plotly draws every figure shown now, as for a reader's pointer (tests compare the two drawings).
  settle: () => Promise.all(states.map(settle)),
  params: (fig) => readParams(fig), // what the next call would send for this figure
  drawing: (fig) => states.find((s) => s.fig === fig)?.drawing, // the SVG last shown, as drawn
  wired: (fig) => demos.includes(fig), // the page listens to this figure's controls (its markup is parsed)
  answered: (fig) => answers.keptFor(demos.indexOf(fig)), // kept answers
  busy: () => states.some((s) => s.inFlight), // a call is on its way to Python
  marks,
  stats: () => bootPython().then(python.stats, python.stats),
};

// ---------- start ----------
// The page's script tag is at the start of <body> (scripts.html), so it runs as soon as it has
// arrived, usually while the article is still being parsed: each figure is wired once the parser
// has passed its end, and what concerns the whole page waits for the whole page.
const query = new URLSearchParams(location.search);
const theme = embedPage && query.get("theme");
if (embedPage) query.delete("theme");
const linkedTo = (query.size || (theme && !THEMES.includes(theme)))
  ? (fig, index) => (embedPage ? index === 0 : fig.id === decodeURIComponent(location.hash.slice(1))) : () => false;

// Animations start when their figure comes into view (never under reduced motion).
const near = new IntersectionObserver((entries) => {
  for (const e of entries) {
    const state = states.find((s) => s.fig === e.target);
    if (!state || !state.startAnimation || state.fromLink) continue;
    state.inView = e.isIntersecting;
    // Python may finish booting after the figure has left the screen: start only if still in view.
    // Until then its button says it will play (controls.js).
    if (e.isIntersecting && (bootState.started || !saveData)) {
      if (!python.live()) state.armAnimation();
      bootPython().then(() => state.inView && state.startAnimation(), () => state.stopAnimation());
    }
    else state.stopAnimation();
  }
}, { rootMargin: "100px" });
// A column that crosses one of the drawing widths (a phone turned, a window resized): the build's
// drawings follow by CSS; Python draws its setting again for the new width, and plotly the build's.
const resized = new ResizeObserver((entries) => {
  for (const e of entries) states.find((s) => s.plot === e.target).room = e.target.clientWidth; // all read before any draw
  for (const s of states) {
    if (!["python", "plotly"].includes(s.showing) || draw.drawingWidth(s) === s.width) continue;
    if (Number(s.fig.dataset.renderCount) > 0) { s.lastKey = null; request(s); } // Python lays it out again
    else draw.plot(s, draw.prerendered(s));
  }
});

/** Wire one figure whose markup has been parsed: its controls, menu, link and observers. */
function wire(fig) {
  const state = stateOf(fig);
  demos.push(fig);
  states.push(state);
  // The head's script enabled the controls as they were parsed (controls-on.js); should it not have run, here.
  const controls = fig.querySelector(".demo-controls");
  if (controls.matches('fieldset[disabled]')) controls.disabled = false;
  if (!saveData && states.length === 1) {
    bootPython();
    // plotly is fetched ahead only where a reader has a mouse; on a touch screen it waits for Python.
    if (matchMedia("(pointer: fine)").matches) afterPageLoad().then(draw.prefetchPlotly);
  }
  if (bootState.announced) refresh(state); // "loading", and how far the boot is
  else { // the data saver: nothing until the reader asks
    const cost = fig.querySelector('[data-role="live"]')?.dataset.cost; // the build's sum of the runtime's files
    sayRaw(state, `Data saver: as built until you move a control; then Python starts (${cost}, once).`);
  }
  // plotly (hover values) loads when a mouse reaches a figure, before it is on the plot; a finger
  // on the plot loads it then (settle).
  fig.addEventListener("pointerover", (e) => e.pointerType === "mouse" && draw.loadPlotly(), { passive: true });
  // A link to a figure in a state: ?params on an embed page, ?params#figure-id elsewhere. An embed
  // page's ?theme= is the page's colour scheme (theme.js), not the figure's: a bad one is named.
  if (linkedTo(fig, state.index) && !states.some((s) => s.fromLink)) {
    const linked = state;
    linked.link = fromQuery(linked.fig, query.toString()) || {};
    linked.linkText = Object.fromEntries(query);
    linked.linkApplied = Object.keys(linked.link).length > 0;
    if (theme && !THEMES.includes(theme)) {
      linked.linkProblems = [{ text: `Colour scheme (theme=${theme} in the link): must be ${THEMES.join(", ").replace(/, (?=\w+$)/, " or ")}.` }];
    }
    linked.fromLink = true; // never animates by itself: it would move away from the linked state
    if (linked.link) showNote(linked, "Showing the default settings until Python has started; then this figure opens with the settings in the link.");
    if (linked.link && saveData) bootPython(); // following a link to a state asks for Python
  }
  setupMenu(fig, state.plot.getAttribute("aria-label") || state.name);
  // A pointer coming onto the plot (a mouse, a finger), or moving over it, is about to read plotly's
  // hover values. Not the browser's own pointer events when the drawing changes under a pointer
  // at rest (they carry no movement): every move would then be drawn by plotly.
  state.plot.addEventListener("pointerenter", () => settle(state), { passive: true });
  state.plot.addEventListener("pointermove", (e) => (e.movementX || e.movementY) && settle(state), { passive: true });
  applyActive(fig); // a browser may have restored other values (back, reload) than the build's
  const move = () => {
    applyActive(fig);
    request(state);
  };
  for (const kind of ["input", "change"]) {
    controls.addEventListener(kind, (event) => {
      move();
      askAhead(state, event.target.closest("[name]"));
      if (saveData) bootPython(); // the reader asks for Python
    });
  }
  for (const slider of controls.querySelectorAll("input[type=range]")) {
    keepToGrid(slider, python.live);
    keepOnSwipe(slider, move);
  }
  // A pointer over a figure or a control focused: its values are computed ahead (the one under
  // the pointer, else the figure's first).
  const named = [...controls.querySelectorAll("[name]")];
  const first = ["range", "select", "checkbox"].map((kind) => named.find((c) => c.dataset.kind === kind)).find(Boolean);
  const reach = (event) => askAhead(state, event.target.closest?.(".demo-controls [name]") || state.reach || first);
  for (const intent of ["pointerover", "focusin"]) fig.addEventListener(intent, reach, { passive: true });
  for (const button of fig.querySelectorAll('[data-role="play"]')) setupPlay(state, button, { move: () => request(state), reach: (c) => askAhead(state, c) });
  for (const button of fig.querySelectorAll('[data-role="random-tokens"]')) setupRandomTokens(state, button, () => request(state));
  // A control moved before this script ran (a slow phone), or restored by the browser (back,
  // reload): that setting, not the build's.
  if (!state.link && JSON.stringify(readParams(fig)) !== state.lastKey) move();
  near.observe(fig);
  resized.observe(state.plot);
}

// A figure is parsed once anything follows it in the document (the parser only appends).
const parsedPast = (node) => {
  for (; node && node !== document.body; node = node.parentNode) if (node.nextSibling) return true;
  return false;
};
const figures = document.getElementsByTagName("figure"); // live: grows as the page is parsed
let looked = 0;
function wireParsed() {
  for (; looked < figures.length; looked++) {
    const fig = figures[looked];
    if (document.readyState === "loading" && !parsedPast(fig)) return;
    if (fig.matches("figure.demo[data-demo]")) wire(fig);
  }
}

/** Once the whole page is parsed: what concerns every figure at once. */
function wholePage() {
  wireParsed();
  // A figure away from the screen is neither painted nor composited (content-visibility), so a
  // slider's frame costs what the figures on screen cost. Its height stays the one it was laid out
  // at, so nothing moves.
  const heights = states.map((s) => s.fig.offsetHeight);
  states.forEach((s, i) => Object.assign(s.fig.style, { containIntrinsicHeight: `auto ${heights[i]}px`, contentVisibility: "auto" }));
  matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    draw.forgetPalette();
    for (const s of states) if (s.showing === "plotly") draw.plot(s, s.lastFigure); // the build's and Python's drawings follow by CSS
  });
}

if (document.readyState === "loading") {
  const parsing = new MutationObserver(wireParsed);
  parsing.observe(document.body, { childList: true, subtree: true });
  wireParsed();
  document.addEventListener("DOMContentLoaded", () => { parsing.disconnect(); wholePage(); }, { once: true });
} else wholePage();

// A page that goes away stops the worker computing ahead for it (a SharedWorker serves other pages).
addEventListener("pagehide", () => {
  if (states.some((s) => s.ahead)) python.ahead(0, []);
  for (const s of states) s.ahead = null;
});

reportHeight();

