// What a figure says about itself: data-life and data-status (life.js), the line under its controls
// (which part of the figure responds now, and the runtime's progress), the error, and the note a
// link to a state shows while it waits for Python.
//
// An error sits next to what it is about (one element, data-role="error", moved there): under the
// control Python refused, which is marked aria-invalid and names the message as its error until a
// setting is drawn; at the top of the figure for a link's settings; in place of the line above the
// plot for a failure of the figure as a whole. While an error shows, the line (and its progress
// bar) does not.

import { framed, marks } from "./page.js";
import * as life from "./life.js";

// The runtime's progress, as the worker reports it: {step, of, what, bytes, total, rate}.
export const boot = { progress: null, started: false, live: false };

/** Move ``state`` (a figure) on by ``event``; data-life, data-status and the line follow. ``message``
 * (an error) goes next to ``about``: a control, "top" (a link's settings), or the figure. */
export function advance(state, event, message, about) {
  state.life = life.next(state.life, event);
  setStatus(state, life.status(state.life, boot.started), message, about);
  setData(state.fig, "life", state.life);
  say(state);
}

/** Say the state again (the boot started, or moved on), without a transition. */
export function refresh(state) {
  if (state.fig.dataset.status === "error") return; // a drawing that failed says so until the next one
  setStatus(state, life.status(state.life, boot.started));
  setData(state.fig, "life", state.life);
  say(state);
}

// A figure's line, its data-* and its notes are written only where they change: every move of a
// drag passes through here, and a text written again is a new text node for the browser to lay out.
const setText = (node, text) => { if (node.textContent !== text) node.textContent = text; };
const setData = (node, key, value) => { if (node.dataset[key] !== value) node.dataset[key] = value; };

export function setStatus(state, status, message, about) {
  setData(state.fig, "status", status);
  if (framed) window.parent.postMessage({ type: "headspace:status", status, demo: state.name }, "*");
  const box = state.fig.querySelector('[data-role="error"]');
  if (message) showError(state, box, message, about);
  else if (status !== "error") {
    if (!box.hidden) box.hidden = true;
    unmark(state.fig);
  }
}

// ``message``: a sentence, or [a sentence, [one line per problem]] (a link's settings).
function showError(state, box, message, about) {
  unmark(state.fig);
  const control = about instanceof Element ? about : null;
  if (control) {
    (control.closest(".control") || control).after(box); // under the control, in the controls' flow
    control.setAttribute("aria-invalid", "true");
    marked.add(state.fig);
    control.setAttribute("aria-errormessage", box.id);
    control.dataset.describedBy = control.getAttribute("aria-describedby") || "";
    control.setAttribute("aria-describedby", `${control.dataset.describedBy} ${box.id}`.trim());
    // The reader typing in it sees the message with it: scrolled to, if either is off the screen.
    if (control.contains(document.activeElement)) requestAnimationFrame(() => {
      const top = control.getBoundingClientRect().top, bottom = box.getBoundingClientRect().bottom;
      if (bottom > innerHeight) scrollBy(0, Math.min(bottom - innerHeight + 8, top - 8));
      else if (top < 0) scrollBy(0, top - 8);
    });
  } else if (about === "top") state.fig.prepend(box);
  else state.fig.querySelector('[data-role="plot"]').before(box);
  const [sentence, problems] = Array.isArray(message) ? message : [message, []];
  box.replaceChildren(sentence);
  if (problems.length) {
    const list = document.createElement("ul");
    for (const problem of problems) list.append(Object.assign(document.createElement("li"), { textContent: problem }));
    box.append(list);
  }
  box.hidden = false;
  say(state);
}

const marked = new WeakSet(); // figures with a control marked invalid: most never have one
/** The controls of ``fig`` are no longer marked invalid (a setting was drawn, or a new error came). */
export function unmark(fig) {
  if (!marked.has(fig)) return; // (a search of the whole figure on every move, otherwise)
  marked.delete(fig);
  for (const control of fig.querySelectorAll("[aria-invalid]")) {
    control.removeAttribute("aria-invalid");
    control.removeAttribute("aria-errormessage");
    if (control.dataset.describedBy) control.setAttribute("aria-describedby", control.dataset.describedBy);
    else control.removeAttribute("aria-describedby");
    delete control.dataset.describedBy;
  }
}

const MB = (bytes) => (bytes / 1e6).toFixed(1);
const perSecond = (rate) => (rate >= 1e6 ? `${MB(rate)} MB/s` : `${Math.round(rate / 1e3)} kB/s`);
/** The runtime's progress in words: "(downloading Python, 1/4): 3.1/19.8 MB, 180 kB/s". */
export function progressText() {
  const p = boot.progress;
  if (!p) return "";
  let text = ` (${p.what}, ${p.step}/${p.of})`;
  if (p.total && p.bytes < p.total) text += `: ${MB(p.bytes)}/${MB(p.total)} MB${p.rate ? `, ${perSecond(p.rate)}` : ""}`;
  return text;
}

const LIVE = "Live: Python recomputes this figure in your browser.";
function lineText(state) {
  const where = progressText();
  switch (state.life) {
    case "live": return null;
    // (once Python is live, a setting being checked keeps the line as it is until drawn or refused)
    case "asking": return boot.live ? undefined : `Catching up when Python is live${where}.`;
    case "answered": return `Precomputed for this setting; Python${where}.`;
    case "built":
      if (!boot.started) return undefined; // the build's sentence (or the data saver's) stays
      return state.answered ? `Until Python is ready, the build answers one control moved at a time${where}.` : `Going live${where}. Until then, as built.`;
    default: return ""; // refused, failed: the error says why
  }
}

/** Write the line under a figure's controls for its state. Its height never changes, so the figure never jumps. */
export function say(state) {
  const line = state.fig.querySelector('[data-role="live"]');
  if (!line) return;
  const error = !state.fig.querySelector('[data-role="error"]').hidden;
  const text = error ? "" : lineText(state); // beside an error, no promise and no progress
  if (text === undefined) return;
  if (text === "") {
    if (!line.hidden) line.hidden = true;
    return void line.querySelector("progress")?.remove();
  }
  if (line.hidden) line.hidden = false;
  let bar = line.querySelector("progress");
  if (text === null) { // live
    if (line.hasAttribute("role")) line.removeAttribute("role"); // a status region would announce every figure going live
    bar?.remove();
    setText(line.querySelector(".demo-live-text"), LIVE);
    setData(line, "live", "");
    return;
  }
  setText(line.querySelector(".demo-live-text"), text);
  const p = boot.progress;
  if (p && !bar) {
    bar = document.createElement("progress");
    bar.setAttribute("aria-hidden", "true"); // the text says the step
    line.prepend(bar);
  }
  if (bar && p) Object.assign(bar, p.total ? { max: p.total, value: Math.min(p.bytes, p.total) } : { max: p.of, value: p.step });
}

/** Say something in a figure's own line before Python (the data saver's sentence). */
export function sayRaw(state, text) {
  const line = state.fig.querySelector('[data-role="live"]');
  if (line) line.querySelector(".demo-live-text").textContent = text;
}

export function showNote(state, text) {
  let note = state.fig.querySelector('[data-role="note"]');
  if (!note && text) {
    note = document.createElement("p");
    note.className = "demo-note";
    note.dataset.role = "note";
    note.setAttribute("role", "status");
    state.fig.querySelector('[data-role="error"]').before(note);
  }
  if (note) {
    setText(note, text);
    if (note.hidden !== !text) note.hidden = !text;
  }
}

export { marks };
