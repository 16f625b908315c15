// What a figure says about itself: data-life and data-status (life.js), the line under its controls
// (which part of the figure responds now, and the runtime's progress), the error under it, and
// the note a link to a state shows while it waits for Python.

import { framed, marks } from "./page.js";
import * as life from "./life.js";

// The runtime's progress, as the worker reports it: {step, of, what, bytes, total, rate}.
export const boot = { progress: null, started: false, live: false };

/** Move ``state`` (a figure) on by ``event``; data-life, data-status and the line follow. */
export function advance(state, event, message) {
  state.life = life.next(state.life, event);
  setStatus(state, life.status(state.life, boot.started), message);
  state.fig.dataset.life = state.life;
  say(state);
}

/** Say the state again (the boot started, or moved on), without a transition. */
export function refresh(state) {
  if (state.fig.dataset.status === "error") return; // a drawing that failed says so until the next one
  setStatus(state, life.status(state.life, boot.started));
  state.fig.dataset.life = state.life;
  say(state);
}

export function setStatus(state, status, message) {
  state.fig.dataset.status = status;
  if (framed) window.parent.postMessage({ type: "headspace:status", status, demo: state.name }, "*");
  const box = state.fig.querySelector('[data-role="error"]');
  if (message) {
    box.textContent = message;
    box.hidden = false;
  } else if (status !== "error") box.hidden = true;
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
      return state.answered ? `One control at a time responds now${where}.` : `Going live${where}. Until then, as built.`;
    default: return ""; // refused, failed: the error says why
  }
}

/** Write the line under a figure's controls for its state. Its height never changes, so the figure never jumps. */
export function say(state) {
  const line = state.fig.querySelector('[data-role="live"]');
  if (!line) return;
  const text = lineText(state);
  if (text === undefined) return;
  if (text === "") return void (line.hidden = true);
  line.hidden = false;
  let bar = line.querySelector("progress");
  if (text === null) { // live
    line.removeAttribute("role"); // a status region would announce every figure going live
    bar?.remove();
    line.querySelector(".demo-live-text").textContent = LIVE;
    line.dataset.live = "";
    return;
  }
  line.querySelector(".demo-live-text").textContent = text;
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
    note.textContent = text;
    note.hidden = !text;
  }
}

export { marks };
