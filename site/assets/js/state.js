// A figure's state as a URL, and back.
//
// A link to a figure in a state: /posts/polariser/?theta=30#demo-polarizer-1, /embed/polarizer/?theta=30.
// Strings are written as they are, numbers, booleans and matrices as JSON. Reading a link types each
// value by its control and leaves every check to Python, which names a bad parameter or value.

import { key } from "./figure/page.js";

/** Every control's current value, as the worker receives it: {name: value}, each typed by ``typed``.
 * ``asBuilt``: the values the page arrived with (the build's), whatever the reader or the browser
 * did since. */
export function readParams(fig, { asBuilt = false } = {}) {
  const params = {};
  const text = (el) => (asBuilt ? el.defaultValue : el.value);
  for (const el of fig.querySelectorAll(".demo-controls [name]")) {
    const name = el.getAttribute("name"), kind = el.dataset.kind; // Python's Param.kind
    if (kind === "matrix") {
      const rows = [];
      for (const cell of el.querySelectorAll("input[data-row]")) {
        (rows[+cell.dataset.row] ||= [])[+cell.dataset.col] = typed(cell, text(cell));
      }
      params[name] = rows;
    } else if (kind === "checkbox") params[name] = asBuilt ? el.defaultChecked : el.checked;
    else if (kind === "select") {
      const option = asBuilt ? [...el.options].find((o) => o.defaultSelected) || el.options[0] : el.selectedOptions[0];
      params[name] = typed(el, option.dataset.value);
    } else params[name] = typed(el, text(el));
  }
  return params;
}

/** Write into the controls named in ``names`` what Python says they hold: ``controls`` is a
 * result's (``Param.control`` through ``runtime.call``: a number's text, a drop-down's option, a
 * tick box's state, a matrix's cells), for settings Python accepted. The page writes no value as
 * text itself. */
export function writeParams(fig, controls, names = Object.keys(controls)) {
  for (const name of names) {
    const el = control(fig, name), c = controls[name];
    if (!el || !c) continue;
    const kind = el.dataset.kind;
    if (kind === "matrix") {
      for (const cell of el.querySelectorAll("input[data-row]")) cell.value = c.text[+cell.dataset.row][+cell.dataset.col];
    } else if (kind === "checkbox") el.checked = c.checked;
    else if (kind === "select") el.selectedIndex = c.option;
    else el.value = c.text;
  }
}

// A figure's controls as the reader left them, and back (navigate.js keeps them in the page's
// history entry): each box's text, tick and option as it stands, as a browser's own form restoration
// keeps them, so the page writes no value as text itself.
const FIELDS = ".demo-controls :is(input:not([type=button]), select)";

/** The text, tick or option of each of ``fig``'s controls (a matrix's cells one by one): ``[30, true, 2]``. */
export function controlTexts(fig) {
  return [...fig.querySelectorAll(FIELDS)].map((el) => (el.type === "checkbox" ? el.checked : el.localName === "select" ? el.selectedIndex : el.value));
}

/** Put back what ``controlTexts`` read; nothing if the figure's controls are not those it read from. */
export function setControlTexts(fig, texts) {
  const fields = [...fig.querySelectorAll(FIELDS)];
  const fits = (el, t) => (el.type === "checkbox" ? typeof t === "boolean" : el.localName === "select" ? Number.isInteger(t) && t < el.options.length : typeof t === "string");
  if (!Array.isArray(texts) || texts.length !== fields.length || !fields.every((el, i) => fits(el, texts[i]))) return;
  fields.forEach((el, i) => {
    if (el.type === "checkbox") el.checked = texts[i];
    else if (el.localName === "select") el.selectedIndex = texts[i];
    else el.value = texts[i];
  });
}

/** The query string of a state: ``theta=30&middle=false``. */
export function toQuery(params) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) query.set(name, typeof value === "string" ? value : JSON.stringify(value));
  return query.toString();
}

/** The parameters a query names for ``fig``, typed by its controls, or null if it names none. */
export function fromQuery(fig, search) {
  const query = new URLSearchParams(search);
  const params = {};
  for (const [name, raw] of query) params[name] = typed(control(fig, name), raw);
  return Object.keys(params).length ? params : null;
}

/** The address of ``fig`` in state ``params``: its embed page, or its place on this page. */
export function linkTo(fig, params, { embed = false } = {}) {
  const query = toQuery(params);
  if (embed || document.body.classList.contains("embed")) {
    return new URL(`${embedPath(fig)}${query ? `?${query}` : ""}`, location.href).href;
  }
  const url = new URL(location.href);
  url.search = query;
  url.hash = fig.id;
  return url.href;
}

export function embedPath(fig) {
  const root = document.querySelector("script[data-worker]").dataset.embedRoot;
  return `${root}${fig.dataset.demo}/`;
}

function control(fig, name) {
  return [...fig.querySelectorAll(".demo-controls [name]")].find((el) => el.getAttribute("name") === name) || null;
}

// A number as a number box holds one (HTML's floating-point number: "30", "-0.5", ".5", "1e-3").
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** How a control's text becomes the value sent to Python, the one reader for a control's own text
 * and a link's alike. Python wrote every text the build put there (``Param.control``; a
 * drop-down's option by its key, ``data-value``): a number as a number; a drop-down's option by
 * its key (a link may also write a string option bare: ``?pairs=two``); token text as it is;
 * other JSON (``true``, a matrix) parsed; anything else (a word, an empty box) as its text, which
 * Python refuses by name (``Param.validate`` checks and types every value). */
export function typed(el, text) {
  if (el && el.dataset.kind === "tokens") return text; // Python reads the ids and names a bad one
  let value = text;
  if (NUMBER.test(text)) value = Number(text);
  else try { value = JSON.parse(text); } catch { /* a word: a string option, or a bad value Python names */ }
  if (el && el.dataset.kind === "select") {
    const option = [...el.options].find((o) => o.dataset.value === key(value)) ||
      [...el.options].find((o) => o.dataset.value === key(text));
    if (option) return JSON.parse(option.dataset.value);
  }
  return value;
}
