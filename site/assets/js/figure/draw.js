// Drawing a figure: the figure engine's SVG drawings (the page's own, the build's answers and
// Python's moves), and plotly where a reader's pointer is, for its hover values. plotly is loaded
// when a mouse comes over a figure or a finger touches a plot: on a phone its download would only
// compete with the runtime's download and the reader's first touches.

import * as contract from "@params"; // site/data/contract.json, passed by Hugo's js.Build
import { script } from "./page.js";
import { drawingWidth as widthFor } from "./widths.js";

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
// Python lays each figure out for one of a few widths (figure/widths.json): the widest that fits the
// figure's plot box (widths.js); the build's CSS shows its drawing for the same box. ``view``: demos.js's.
export function prerender(view) {
  view.pre ||= JSON.parse(view.fig.querySelector('script[data-role="prerender"]').textContent);
  return view.pre;
}
// The column's width comes from a ResizeObserver (view.room), read when layout is fresh anyway:
// reading clientWidth on a slider move would lay out the whole page before the move is sent.
export function drawingWidth(view) {
  return widthFor(view.room ?? view.plot.clientWidth);
}

// ---------- outputs ----------
// An output whose text is unchanged is left alone: rewriting it would lay out and repaint the
// figure's text on every move of a drag. One whose markup keeps its elements (a matrix whose
// numbers change) gets the new words in its existing nodes, as a drawing does (writePieces).
const written = new WeakMap(); // output element -> {html: last written, shown: its pieces}
export function writeOutputs(view, outputs, text) {
  for (const out of view.fig.querySelectorAll("output[data-output]")) {
    const value = JSON.stringify(outputs[out.dataset.output]), html = text[out.dataset.output];
    if (out.dataset.value !== value) out.dataset.value = value;
    const was = written.get(out); // Python's format_outputs: the same (escaped) HTML the build printed
    if (was?.html === html) continue;
    const shown = was && writePieces(was.shown, html) ? was.shown : ((out.innerHTML = html), piecesOf(out, html));
    written.set(out, { html, shown });
  }
}

// ---------- the drawings: one engine (headspace_site.figure.svg) for the build's and Python's ----------
// A move shows the new drawing by writing into the one on screen only what differs (a slider moves
// numbers, not elements), so it costs a frame.
const parser = document.createElement("template");

/** Show a drawing: ``svg`` an answer's (the build's or Python's; clip ids still "HSFIGURE"), or null
 * for the page's own drawing of the starting settings. Returns whether it was written in place. */
export function showDrawing(view, svg) {
  let html = svg === null ? view.startDrawing : svg.replaceAll("HSFIGURE", `${view.fig.id}-`); // unique ids, as demo.html does
  // Over Python's drawing (one width), the build's (every width: its start, an answer standing in)
  // is the one of this width, marked as Python marks its own: the same elements, written in place.
  if (!view.plotly && view.drawing?.startsWith(LIVE)) html = oneWidth(html, drawingWidth(view));
  if (view.plotly && window.Plotly) Plotly.purge(view.plot);
  const how = view.plotly ? null : writePieces(view.pieces, html) ? "pieces" : writeInto(view.plot, html) ? "elements" : null;
  if (!how) view.plot.innerHTML = html;
  if (how !== "pieces") view.pieces = piecesOf(view.plot, html);
  view.plotly = false;
  view.drawing = html; // what the plot shows, as the engine wrote it (tests)
  return Boolean(how);
}

const LIVE = '<svg class="static-figure live"'; // how Python's drawing of a move begins (runtime.call)
/** Of a drawing the build made at every width (``html``: one <svg class="static-figure w{width}"> a
 * width), the one ``width`` px wide, its class that of a live drawing ("static-figure live"): what
 * Python draws for that setting at that width, but for how hard its heatmaps are deflated. ``html``
 * itself if it has none. */
export function oneWidth(html, width) {
  const head = `<svg class="static-figure w${width}"`, at = html.indexOf(head);
  if (at < 0) return html;
  return LIVE + html.slice(at + head.length, html.indexOf("</svg>", at) + "</svg>".length); // (a drawing holds no other <svg>)
}

// The drawing on screen as the engine wrote it, in pieces (its tags and the texts between them),
// with the node each piece made. A new drawing whose tags name the same elements in the same order
// (a slider moves numbers, not elements) is written by comparing the two texts piece by piece: no
// parsing, no walk over every attribute of every element.
const TAGS = /(<[^>]*>)/;
const ATTRIBUTE = /\s([^\s=]+)="([^"]*)"/g;
const ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#x27;": "'" };
const OTHER_ENTITY = /&(?!amp;|lt;|gt;|quot;|#x27;)/;
const unescape = (text) => text.replace(/&(amp|lt|gt|quot|#x27);/g, (e) => ENTITIES[e]);
const nameOf = (tag) => tag.match(/^<\/?[^\s/>]*/)[0];

function piecesOf(plot, html) {
  const pieces = html.split(TAGS), nodes = new Array(pieces.length);
  const walker = document.createTreeWalker(plot, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  for (let i = 0; i < pieces.length; i++) if (pieces[i] && !pieces[i].startsWith("</")) nodes[i] = walker.nextNode();
  // every piece made the node expected (an element for a tag, a text for a text), and no more
  const made = nodes.every((n, i) => n && n.nodeType === (i % 2 ? Node.ELEMENT_NODE : Node.TEXT_NODE));
  return made && !walker.nextNode() ? { pieces, nodes } : null;
}

function writePieces(shown, html) {
  if (!shown || OTHER_ENTITY.test(html)) return false; // a text this page does not unescape itself
  const pieces = html.split(TAGS), before = shown.pieces, changed = [];
  if (pieces.length !== before.length) return false;
  for (let i = 0; i < pieces.length; i++) {
    if (pieces[i] === before[i]) continue;
    if (i % 2 ? nameOf(pieces[i]) !== nameOf(before[i]) : !pieces[i] !== !before[i]) return false; // another element, a text come or gone
    changed.push(i);
  }
  for (const i of changed) {
    const node = shown.nodes[i];
    if (i % 2 === 0) {
      node.data = unescape(pieces[i]);
      continue;
    }
    const want = new Map(Array.from(pieces[i].matchAll(ATTRIBUTE), ([, name, value]) => [name, unescape(value)]));
    for (const [name, value] of want) if (node.getAttribute(name) !== value) node.setAttribute(name, value);
    for (const [, name] of before[i].matchAll(ATTRIBUTE)) if (!want.has(name)) node.removeAttribute(name);
  }
  shown.pieces = pieces;
  return true;
}

// ``html`` (SVG drawings) into ``plot``, whose drawings have the same elements at the top (false
// and nothing written otherwise): attributes and text where they differ, an element's children
// replaced where their number changed.
function writeInto(plot, html) {
  parser.innerHTML = html;
  const now = [...parser.content.children], shown = plot.children;
  if (!now.length || now.length !== shown.length || now.some((n, k) => n.tagName !== shown[k].tagName)) return false;
  now.forEach((n, k) => become(shown[k], n));
  return true;
}
function become(node, want) {
  if (node.nodeType !== Node.ELEMENT_NODE) {
    if (node.data !== want.data) node.data = want.data;
    return;
  }
  for (const { name, value } of want.attributes) if (node.getAttribute(name) !== value) node.setAttribute(name, value);
  for (const name of node.getAttributeNames()) if (!want.hasAttribute(name)) node.removeAttribute(name);
  const have = node.childNodes, wanted = [...want.childNodes];
  if (have.length !== wanted.length) return void node.replaceChildren(...wanted);
  wanted.forEach((w, k) => {
    const h = have[k];
    if (h.nodeType === w.nodeType && h.nodeName === w.nodeName) become(h, w);
    else node.replaceChild(w, h);
  });
}

// ---------- plotly: hover values and tools where a pointer is ----------
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

/** plotly draws the figure shown, for a reader's pointer (resolves once drawn). ``dataOf(view)``: a
 * promise of its data, or of null where there are none (a build's answer): the drawing then stays. */
export function settle(view, dataOf) {
  if (view.plotly) return Promise.resolve();
  const shown = view.drawing;
  return dataOf(view).then((figure) => figure && loadPlotly().then(() => {
    if (view.drawing === shown && !view.plotly) return plot(view, figure); // unless the reader moved on
  }));
}

/** plotly draws ``figure`` in place of the drawing, in the page's colours. */
export function plot(view, figure) {
  const layout = themed(figure.layout); // reads the palette
  const ink = palette.fg.toLowerCase() !== INK ? palette.fg : INK;
  if (ink !== INK || inkPlaces.has(figure)) for (const [object, key] of inkOf(figure)) object[key] = ink;
  for (const drawing of view.plot.querySelectorAll(":scope > svg.static-figure")) drawing.remove();
  view.plotly = true;
  view.pieces = null;
  view.onPlot(figure); // the figure's state: plotly shows it
  return Plotly.react(view.plot, figure.data, layout, PLOT_CONFIG);
}

// ---------- plotly.js: loaded when wanted ----------
let plotlyLoading = null;
/** plotly, loaded once: a promise that rejects with a readable message if it could not be (each
 * figure a pointer reaches then says so: settle's callers). */
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
    plotlyLoading.catch(() => {}); // a mouse's early load (pointerover) is not a failure anyone waits for
  }
  return plotlyLoading;
}

// plotly's file is prefetched (the browser's lowest priority) once the page is on screen and
// loaded, where a reader has a mouse: asked for while the page still arrived, it shared a slow
// link with the page's own fonts and held back the largest paint.
export function prefetchPlotly() {
  if (plotlyLoading) return;
  document.head.append(Object.assign(document.createElement("link"), { rel: "prefetch", href: script.dataset.plotly }));
}

/** The build's figure of the starting settings, laid out for this figure's drawing width. */
export function prerendered(view) {
  const pre = prerender(view), width = drawingWidth(view);
  return { data: pre.figure.data, layout: pre.layouts[width], width };
}
