// Drawing a figure: the build's SVG drawings (the page's own, and answers from the build) and
// Python's figures through plotly, which is loaded only once a reader reaches for a figure with a
// mouse or the keyboard, or Python is live (on a phone, its 1.3 MB would only compete with the
// runtime's download and the reader's first touches, which the build's drawings answer).

import * as contract from "@params"; // site/data/contract.json, passed by Hugo's js.Build
import * as patch from "../patch.js";
import { marks, script } from "./page.js";
import { setStatus } from "./status.js";

// ---------- theme: plots follow the page's light or dark colours ----------
let palette = null; // read once per colour scheme, not on every slider move
export function forgetPalette() { palette = null; }
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
// Python lays each figure out for one of a few widths (headspace.figure.fit.WIDTHS): the widest
// that fits the figure's column. The build drew a static SVG at each and kept each one's layout;
// CSS shows the SVG this column takes, and plotly draws Python's figure at the same width.
export function prerender(state) {
  state.pre ||= JSON.parse(state.fig.querySelector('script[data-role="prerender"]').textContent);
  return state.pre;
}
// The column's width comes from a ResizeObserver (state.room), read when layout is fresh anyway:
// reading clientWidth on a slider move would lay out the whole page before the move is sent.
export function drawingWidth(state) {
  state.widths ||= Object.keys(prerender(state).layouts).map(Number).sort((a, b) => a - b);
  const room = state.room ?? state.plot.clientWidth;
  return state.widths.filter((w) => w <= room).pop() || state.widths[0];
}

// ---------- outputs and readouts ----------
// An output whose text is unchanged is left alone: rewriting it would lay out and repaint the
// figure's text on every move of a drag. One whose markup keeps its elements (a matrix whose
// numbers change) gets the new words in its existing text nodes: no elements parsed and built.
const written = new WeakMap(); // output element -> the HTML last written into it
export function writeOutputs(state, outputs, text) {
  for (const out of state.fig.querySelectorAll("output[data-output]")) {
    const value = JSON.stringify(outputs[out.dataset.output]), html = text[out.dataset.output];
    if (out.dataset.value !== value) out.dataset.value = value;
    const before = written.get(out);
    if (before === html) continue;
    // Python's format_outputs: the same (escaped) HTML the build printed
    if (before === undefined || !reword(out, before, html)) out.innerHTML = html;
    written.set(out, html);
  }
}

// ``html`` written into ``node`` as new text in the text nodes ``before`` made, if both have the
// same tags in the same order (else false, nothing changed). Text is as format_outputs escapes it.
const TAG = /<[^>]*>/g;
const ENTITY = { "&amp;": "&", "&lt;": "<", "&gt;": ">" };
function reword(node, before, html) {
  const tags = (h) => h.match(TAG) || [];
  const words = (h) => h.split(TAG);
  const [a, b] = [tags(before), tags(html)];
  if (a.length !== b.length || a.some((t, k) => t !== b[k])) return false;
  const [old, now] = [words(before), words(html)];
  if (old.some((w, k) => !w !== !now[k]) || now.some((w) => /&(?!amp;|lt;|gt;)/.test(w))) return false;
  const nodes = [];
  const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) nodes.push(walker.currentNode);
  const kept = now.filter((w) => w);
  if (nodes.length !== kept.length) return false;
  kept.forEach((w, k) => {
    const data = w.replace(/&(amp|lt|gt);/g, (e) => ENTITY[e]);
    if (nodes[k].data !== data) nodes[k].data = data;
  });
  return true;
}

// ---------- the build's drawings ----------
/** Show a drawing the build made: ``svg`` an answer's (its clip ids still "HSFIGURE"), or null for
 * the page's own drawing of the starting settings. It replaces whatever plotly drew. */
export function showDrawing(state, svg) {
  if (state.shown && window.Plotly) Plotly.purge(state.plot);
  state.shown = state.drawn = state.lastFigure = null;
  state.plot.innerHTML = svg === null ? state.startDrawing : svg.replaceAll("HSFIGURE", `${state.fig.id}-`); // unique ids, as demo.html does
  state.showing = svg === null ? "start" : "answer";
}

// ---------- Python's figures, through plotly ----------
// Demos draw "ink" (the light scheme's text colour) for neutral marks; in the dark scheme those
// marks take the page's text colour instead, found once per figure and recoloured in place.
const INK = contract.ink;
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

// While a reader drags, successive figures of a demo differ only in their data, and patch.js
// writes the new data into plotly's SVG within a frame; plotly itself redraws when the structure
// changes. plotly's own copy of the figure (what its hover values read) then lags the drawing:
// ``settle`` brings it up to date when something reads it (a pointer on the plot, an export).
// Not after every pause: a redraw of a whole figure is one long task, which on a phone's CPU
// held the reader's next touch back after each pause.
export function draw(state, figure, redraw = false) {
  if (!window.Plotly) return loadPlotly().then(() => draw(state, figure, redraw));
  if (state.showing !== "plotly") for (const poster of state.plot.querySelectorAll(":scope > svg.static-figure")) poster.remove(); // the build's SVG
  const layout = themed(figure.layout); // reads the palette
  const ink = palette.fg.toLowerCase() !== INK ? palette.fg : INK;
  if (ink !== INK || inkPlaces.has(figure)) for (const [object, key] of inkOf(figure)) object[key] = ink;
  const frame = { data: figure.data, layout, snapshot: patch.layoutSnapshot(layout) };
  if (!redraw && state.shown && patch.patchFigure(state.plot, state.shown, frame)) {
    state.shown = frame;
    state.fig.dataset.patchCount = String(Number(state.fig.dataset.patchCount || 0) + 1); // tests and bench
    return;
  }
  if (patch.refusal) state.fig.dataset.patchRefused = patch.refusal; // why plotly drew it
  return plot(state, frame, redraw);
}

/** plotly draws the figure patch.js last drew in place, if any (resolves once drawn). */
export function settle(state) {
  if (!state.shown || state.shown === state.drawn || !window.Plotly) return Promise.resolve();
  return plot(state, state.shown);
}

export function plot(state, frame, fresh = false) {
  state.drawn = state.shown = frame;
  state.showing = "plotly";
  patch.restore(state.plot); // plotly's own points, where a patch drew them as one path
  return (fresh ? Plotly.newPlot : Plotly.react)(state.plot, frame.data, frame.layout, PLOT_CONFIG);
}

// ---------- plotly.js: loaded when wanted ----------
let plotlyLoading = null;
let onLoaded = () => {}, onFailed = () => {};
/** What happens once plotly has loaded (the page redraws its figures) or could not be. */
export function whenPlotly(loaded, failed) { onLoaded = loaded; onFailed = failed; }
export function loadPlotly() {
  if (!plotlyLoading) {
    plotlyLoading = new Promise((resolve, reject) => {
      if (window.Plotly) return resolve();
      const tag = document.createElement("script");
      tag.src = script.dataset.plotly;
      tag.onload = () => resolve();
      tag.onerror = () => reject(new Error("The drawing library (plotly.js) could not be loaded."));
      document.head.append(tag);
    });
    plotlyLoading.then(() => onLoaded(), (err) => onFailed(err.message));
  }
  return plotlyLoading;
}
export const plotlyRequested = () => Boolean(plotlyLoading);

// plotly's file is prefetched (the browser's lowest priority) once the page is on screen and
// loaded, where a reader has a mouse: asked for while the page still arrived, it shared a slow
// link with the page's own fonts and held back the largest paint.
export function prefetchPlotly() {
  if (plotlyLoading) return;
  document.head.append(Object.assign(document.createElement("link"), { rel: "prefetch", href: script.dataset.plotly }));
}

/** The build's figure of the starting settings, laid out for this figure's drawing width. */
export function prerendered(state) {
  const pre = prerender(state);
  state.width = drawingWidth(state);
  return { data: pre.figure.data, layout: pre.layouts[state.width] };
}

const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));
function offScreen(state) {
  const box = state.fig.getBoundingClientRect();
  return Math.max(0, box.top - innerHeight, -box.bottom); // px away from the viewport; 0 on screen
}

/** plotly redraws each figure still showing the build's drawing of its starting settings, the one
 * the reader reached for first, then the rest nearest the screen first, one figure a task (all in
 * one task held the page for most of a second on a long article). A figure showing an answer from
 * the build keeps it until Python draws that setting. marks.firstFigure: every figure drawn. */
export async function takeOver(states, first) {
  const away = new Map(states.map((s) => [s, s === first ? -1 : offScreen(s)])); // one layout
  const order = states.slice().sort((a, b) => away.get(a) - away.get(b));
  for (const state of order) {
    await nextTask(); // a reader's input or a Python result goes between two figures
    if (state.lastFigure || state.showing !== "start") continue; // never draw over a newer drawing
    try {
      state.lastFigure = prerendered(state);
      draw(state, state.lastFigure);
    } catch (err) {
      setStatus(state, "error", `The prerendered figure could not be drawn: ${err.message}`);
    }
  }
  marks.firstFigure = performance.now();
}
