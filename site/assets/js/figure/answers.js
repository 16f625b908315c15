// Answers a figure is drawn from without waiting: Python's (each call's kept, and the values of the
// control reached for asked ahead), and the build's (scripts/sitebuild/answers.py).

import { ANSWER_CHARS, same, saveData } from "./page.js";
import { readParams, typed } from "../state.js";
import { answerKey } from "./reduce.js";

// ---------- Python's answers, kept per page ----------
const answers = new Map(); // answerKey -> Python's JSON
let answerChars = 0;
export const kept = (key) => answers.get(key);
export const keptFor = (index) => [...answers.keys()].filter((k) => k.startsWith(`${index}@`)).length;
export function forgetAll() { answers.clear(); answerChars = 0; }

export function keep(key, json) {
  if (answers.has(key)) return;
  answers.set(key, json);
  answerChars += json.length;
  for (const [old, text] of answers) { // the oldest dropped first
    if (answerChars <= ANSWER_CHARS) break;
    answers.delete(old);
    answerChars -= text.length;
  }
}

// ---------- values ahead: a control's other values, nearest the current one first ----------
const AHEAD_VALUES = 400; // values asked for per control (every value of the sliders we have)
const nearest = (at) => (a, b) => (a === at) - (b === at) || Math.abs(a - at) - Math.abs(b - at);
/** A control's values as readParams reads them, nearest the current one first and the current one
 * last; null for a control with no list of values (a number, a token text, a matrix). */
export function valuesOf(control) {
  const kind = control.dataset.kind; // Python's Param.kind
  if (kind === "range") {
    const snapped = rangeValues(control);
    const at = Math.round((Number(control.value) - Number(control.min)) / (Number(control.step) || 1));
    return snapped.map((_, k) => k).sort(nearest(at)).slice(0, AHEAD_VALUES).map((k) => snapped[k]);
  }
  if (kind === "select") {
    const options = [...control.options];
    return options.map((_, i) => i).sort(nearest(control.selectedIndex)).map((i) => typed(control, options[i].dataset.value));
  }
  if (kind === "checkbox") return [!control.checked, control.checked];
  return null;
}

// Every value of a slider, in order, as the browser snaps them to its step in decimal ("0.3", not
// 0.1 * 3): asked of a probe once per slider (the browser's rule, not ours).
const snappedValues = new WeakMap();
export function rangeValues(control) {
  if (snappedValues.has(control)) return snappedValues.get(control);
  const probe = Object.assign(document.createElement("input"), { type: "range" });
  for (const attr of ["min", "max", "step"]) probe.setAttribute(attr, control.getAttribute(attr) ?? "");
  const lo = Number(probe.min), by = Number(probe.step) || 1;
  const values = Array.from({ length: Math.floor((Number(probe.max) - lo) / by + 1e-9) + 1 }, (_, k) => {
    probe.value = String(lo + k * by);
    return Number(probe.value);
  });
  snappedValues.set(control, values);
  return values;
}

/** The items of an "ahead" request for ``control``'s values (those not kept yet), nearest first. */
export function aheadItems(view, control, width) {
  const name = control.getAttribute("name"), params = readParams(view.fig), { index, name: demo } = view.state;
  const items = [];
  for (const value of valuesOf(control) || []) {
    const key = answerKey(index, JSON.stringify({ ...params, [name]: value }), width);
    if (!answers.has(key)) items.push({ key, name: demo, params: { ...params, [name]: value } });
  }
  return items;
}

// ---------- the build's answers ----------
// A setting that differs from the built one (view.start) in one answered control alone is in the
// figure's folder (data-answers), named by that control and the value's place on the grid Python
// wrote into it (data-answered).

/** Where the build's answer for ``params`` is ({url, name}: its file, and the one control moved
 * from the start), or null if the build has none. */
export function buildAnswerURL(view, params) {
  const folder = view.fig.dataset.answers;
  if (!folder) return null;
  const moved = Object.keys(params).filter((name) => !same(params[name], view.start[name]));
  if (moved.length !== 1) return null;
  const control = view.controls[moved[0]];
  if (!control || !control.hasAttribute("data-answered") || control.disabled) return null;
  const index = answerGrid(control).findIndex((v) => same(v, params[moved[0]]));
  return index < 0 ? null : { url: `${folder}${moved[0]}/${index}.json`, name: moved[0] };
}

// A reader who reaches for a control before Python is live will most likely move it a step or two:
// the build's answers for the values nearest its own are fetched (and parsed), one at a time and
// only while no answer a move asked for is on its way, so that such a move waits for no network
// and a move's own fetch never shares a phone's slow link with more than one of them. A few only
// (an answer is about 30 kB, and Python's runtime shares the link too); under the data saver none.
const PREFETCH_VALUES = 4;

/** Fetch the build's answers for the PREFETCH_VALUES values of ``control`` nearest its current one. */
export async function prefetchNearest(view, control) {
  if (saveData || !control || control.disabled || !control.hasAttribute("data-answered")) return;
  const grid = answerGrid(control), name = control.getAttribute("name"), params = readParams(view.fig);
  const at = nearestGridIndex(grid, params[name]);
  if (at < 0) return;
  const order = grid.map((_, i) => i).filter((i) => i !== at).sort((a, b) => Math.abs(a - at) - Math.abs(b - at) || a - b);
  for (const i of order.slice(0, PREFETCH_VALUES)) {
    const where = buildAnswerURL(view, { ...params, [name]: grid[i] });
    if (!where) continue;
    while (movesFetching.size) await Promise.allSettled([...movesFetching]);
    await fetchBuildAnswer(where.url, "low").catch(() => {}); // (kept once, as a move's own fetch is)
  }
}

/** The place on ``grid`` of ``value`` (or, for a number between the grid's values, of the nearest;
 * the first of two as near): -1 if none. */
export function nearestGridIndex(grid, value) {
  const exact = grid.findIndex((v) => same(v, value));
  if (exact >= 0 || typeof value !== "number") return exact;
  let best = -1;
  grid.forEach((v, i) => { if (typeof v === "number" && (best < 0 || Math.abs(v - value) < Math.abs(grid[best] - value))) best = i; });
  return best;
}

/** The values of a control the build answered, in the order of their files (Python's grid). */
const grids = new WeakMap();
export function answerGrid(control) {
  if (!grids.has(control)) grids.set(control, JSON.parse(control.dataset.answered || "[]"));
  return grids.get(control);
}

// ---------- the nearest answer the page has ----------
// A move Python cannot answer within a frame or two (a new seed's curves) is shown, meanwhile, with
// the answer nearest its settings: Python's kept ones, the build's (its start, and each answered
// control moved alone from it), fewest settings apart; among those as near, one that agrees on the
// control the reader moved last, so the drawing follows the reader's hand; and among those, the one
// on screen, which then stays (a reader typing in a text box sees the last sequence drawn, not an
// older one, while Python computes the new one).

/** The answer nearest ``params`` at ``width`` the page has: {shown (its settings' JSON), exact
 * (no setting apart), and json (Python's kept answer), start (the page's own drawing) or build
 * (buildAnswerURL's)}, or null if it has none. ``moved``: the name of the control moved last;
 * ``onScreen``: the settings' JSON of the drawing shown now. */
export function nearestAnswer(view, params, width, moved, onScreen = null) {
  const names = Object.keys(params);
  let best = null;
  const consider = (candidate, settings) => {
    const apart = names.filter((n) => !same(settings[n], params[n])).length;
    const agrees = moved != null && same(settings[moved], params[moved]);
    const onIt = candidate.shown === onScreen;
    if (!best || apart < best.apart || (apart === best.apart && (agrees && !best.agrees
        || (agrees === best.agrees && onIt && !best.onIt)))) best = { ...candidate, apart, agrees, onIt };
  };
  const prefix = answerKey(view.state.index, "", width);
  for (const [key, json] of answers) {
    if (key.startsWith(prefix)) consider({ shown: key.slice(prefix.length), json }, JSON.parse(key.slice(prefix.length)));
  }
  consider({ shown: JSON.stringify(view.start), start: true }, view.start);
  for (const name of names) {
    const settings = { ...view.start, [name]: params[name] }, build = buildAnswerURL(view, settings);
    if (build) consider({ shown: JSON.stringify(settings), build }, settings);
  }
  return best && { shown: best.shown, exact: best.apart === 0, json: best.json, start: best.start, build: best.build };
}

// Fetched answers, kept by address (a promise each), so a drag back and forth asks once.
const fetched = new Map();
const movesFetching = new Set(); // the answers moves asked for, on their way (prefetches wait for them)
const requested = new Map(); // address -> a response requested ahead of its reading (a click's move)

/** Start fetching the build's answer at ``url`` without reading it: fetchBuildAnswer reads it if
 * it is wanted, and until then the page spends no time on it (the body arrives off the thread). */
export function requestBuildAnswer(url) {
  if (fetched.has(url) || requested.has(url)) return;
  const response = fetch(url, { priority: "high" });
  response.catch(() => requested.delete(url)); // asked again next time
  requested.set(url, response);
}

export function fetchBuildAnswer(url, priority = "high") {
  if (!fetched.has(url)) {
    const response = requested.get(url) || fetch(url, { priority });
    requested.delete(url);
    const answer = response.then((r) => {
      if (!r.ok) throw new Error(`${url} answered ${r.status}`);
      return r.json();
    });
    answer.catch(() => fetched.delete(url)); // asked again next time
    fetched.set(url, answer);
    if (priority === "high") {
      movesFetching.add(answer);
      answer.finally(() => movesFetching.delete(answer)).catch(() => {});
    }
  }
  return fetched.get(url);
}
