// What a figure says, written from its state (reduce.js), never read back: data-life, data-status,
// the line under its controls, its note and its error. The error (one element, data-role="error")
// sits next to what it is about: under a refused control (marked aria-invalid), at the figure's top
// for a link's settings, above the plot for the figure as a whole; the line is hidden beside it.

import { framed } from "./page.js";
import { dataStatus } from "./reduce.js";
import { progress } from "./python.js";

// A figure's line, its data-* and its notes are written only where they change: every move of a
// drag passes through here, and a text written again is a new text node for the browser to lay out.
const setText = (node, text) => { if (node.textContent !== text) node.textContent = text; };
const setData = (node, key, value) => { if (node.dataset[key] !== value) node.dataset[key] = value; };

/** Write what ``view``'s state says into its figure (``view.said``: the state last written). */
export function show(view) {
  const s = view.state, was = view.said || {}, fig = view.fig;
  view.said = s;
  const status = dataStatus(s);
  setData(fig, "life", s.life);
  setData(fig, "renderCount", String(s.renderCount));
  if (s.answerCount) setData(fig, "answerCount", String(s.answerCount)); // moves the build answered (tests, bench)
  if (s.catchCount) setData(fig, "catchCount", String(s.catchCount)); // drawings that stood in while Python caught up
  // while catching up, what stands in: "nearest" (dimmed by the CSS: not this setting) or "built"
  const catching = s.catching ? (s.catching.exact ? "built" : "nearest") : undefined;
  if (fig.dataset.catchingUp !== catching) {
    if (catching) fig.dataset.catchingUp = catching;
    else delete fig.dataset.catchingUp;
  }
  if (fig.dataset.status !== status) {
    fig.dataset.status = status;
    if (framed) window.parent.postMessage({ type: "headspace:status", status, demo: s.name }, "*");
  }
  if (s.note !== was.note) showNote(fig, s.note);
  if (s.error !== was.error) showError(view, s.error);
  if (s.life !== was.life || s.python !== was.python || s.error !== was.error || s.catching !== was.catching) say(view);
}

// ---------- errors ----------
const labelOf = (control) => (control.labels?.[0] || control.querySelector?.("legend"))?.textContent.trim() || control.getAttribute("name");

// A link's refused parameters, in the words of the figure: the control's label, the link's text,
// and what Python expected (its message).
function problemText(controls, { name, raw, message, text }) {
  if (text) return text;
  const control = controls[name];
  if (!control) {
    const known = Object.entries(controls).map(([n, c]) => `${labelOf(c)} (${n})`).join(", ");
    return `${name}=${raw}: this figure has no parameter '${name}'. Its settings are ${known}.`;
  }
  return `${labelOf(control)} (${name}=${raw} in the link): ${message}.`;
}

/** An error's words: a sentence, or [a sentence, [one line per problem]] (a link's settings). */
function words(controls, error) {
  if (error.message) return error.message;
  if (error.linkError) return `The link's settings were not applied: ${error.linkError}. The figure shows its default settings.`;
  if (error.problems) {
    const n = error.problems.length;
    return [`${n === 1 ? "One setting" : `${n} settings`} in the link could not be applied, so the figure ` +
      `shows ${error.applied ? "the link's other settings" : "its default settings"}:`, error.problems.map((p) => problemText(controls, p))];
  }
  const { kind, parameter, message } = error.refused, control = controls[error.about];
  if (!control) return kind === "parameter" ? `${message}. The figure still shows the last valid input.` : `Python raised an error: ${message}`;
  const label = labelOf(control), named = label.toLowerCase().includes(parameter) ? "" : ` (${parameter})`; // unless the label names it
  // Python's message may name the control by its label already ("Tokens: token 3 must be ..."): once is enough
  const lead = message.startsWith(label) ? "" : `${label}${named}: `;
  return `${lead}${message}. The figure still shows the last valid input.`;
}

function showError(view, error) {
  const fig = view.fig, box = fig.querySelector('[data-role="error"]');
  unmark(fig);
  if (!error) return void (box.hidden = true);
  const control = view.controls[error.about];
  if (control) {
    (control.closest(".control") || control).after(box); // under the control, in the controls' flow
    control.setAttribute("aria-invalid", "true");
    control.setAttribute("aria-errormessage", box.id);
    control.dataset.describedBy = control.getAttribute("aria-describedby") || "";
    control.setAttribute("aria-describedby", `${control.dataset.describedBy} ${box.id}`.trim());
  } else if (error.about === "top") fig.prepend(box);
  else fig.querySelector('[data-role="plot"]').before(box);
  const text = words(view.controls, error), [sentence, problems = []] = Array.isArray(text) ? text : [text];
  box.replaceChildren(sentence);
  if (problems.length) {
    const list = document.createElement("ul");
    list.append(...problems.map((p) => Object.assign(document.createElement("li"), { textContent: p })));
    box.append(list);
  }
  box.hidden = false;
  // The reader typing in the control sees the message with it; a link's message at the top of a
  // figure on screen is scrolled to (the browser keeps the plot where it was as the message comes).
  if (control?.contains(document.activeElement)) requestAnimationFrame(() => inView(control, box));
  else if (error.about === "top") requestAnimationFrame(() => onScreen(fig) && inView(box, box));
}

const onScreen = (el) => { const r = el.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; };
function inView(top, bottom) {
  const t = top.getBoundingClientRect().top, b = bottom.getBoundingClientRect().bottom;
  if (b > innerHeight) scrollBy(0, Math.min(b - innerHeight + 8, t - 8));
  else if (t < 0) scrollBy(0, t - 8);
}

/** The controls of ``fig`` are no longer marked invalid. */
function unmark(fig) {
  for (const control of fig.querySelectorAll(".demo-controls [aria-invalid]")) {
    control.removeAttribute("aria-invalid");
    control.removeAttribute("aria-errormessage");
    if (control.dataset.describedBy) control.setAttribute("aria-describedby", control.dataset.describedBy);
    else control.removeAttribute("aria-describedby");
    delete control.dataset.describedBy;
  }
}

// ---------- the line under the controls ----------
const MB = (bytes) => (bytes / 1e6).toFixed(1);
const perSecond = (rate) => (rate >= 1e6 ? `${MB(rate)} MB/s` : `${Math.round(rate / 1e3)} kB/s`);
/** The runtime's progress in words: " (downloading Python, 1/4): x/y MB, z kB/s". */
export function progressText() {
  const p = progress.now;
  if (!p) return "";
  let text = ` (${p.what}, ${p.step}/${p.of})`;
  if (p.total && p.bytes < p.total) text += `: ${MB(p.bytes)}/${MB(p.total)} MB${p.rate ? `, ${perSecond(p.rate)}` : ""}`;
  return text;
}

const LIVE = "Live: Python recomputes this figure in your browser.";
/** What the line says while an answer the page has stands in for Python's (reduce.js's catching). */
export const catchingText = ({ exact }) => `Catching up: showing ${exact ? "the answer computed when the page was built" : "the nearest computed answer"} while Python computes this setting.`;
function lineText(s) {
  const where = progressText();
  if (s.catching) return catchingText(s.catching);
  switch (s.life) {
    case "live": return null;
    // (once Python is live, a setting being checked keeps the line as it is until drawn or refused)
    case "asking": return s.python === "live" ? undefined : `Catching up when Python is live${where}.`;
    case "answered": return `Precomputed for this setting; Python${where}.`;
    case "built":
      if (s.python === "off") return undefined; // the build's sentence (or the data saver's) stays
      return s.answered ? `Until Python is ready, the build answers one control moved at a time${where}.` : `Going live${where}. Until then, as built.`;
    default: return ""; // refused, failed: the error says why
  }
}

/** Write the line under a figure's controls for its state. Its height never changes, so the figure never jumps. */
export function say(view) {
  const line = view.fig.querySelector('[data-role="live"]');
  if (!line) return;
  const text = view.state.error ? "" : lineText(view.state); // beside an error, no promise and no progress
  if (text === undefined) return;
  if (text === "") {
    if (!line.hidden) line.hidden = true;
    return void line.querySelector("progress")?.remove();
  }
  if (line.hidden) line.hidden = false;
  let bar = line.querySelector("progress");
  if (text === null || view.state.catching) { // live (and catching up: words, and no progress bar)
    bar?.remove();
    if (text !== null) return void setText(line.querySelector(".demo-live-text"), text);
    if (line.hasAttribute("role")) line.removeAttribute("role"); // a status region would announce every figure going live
    setText(line.querySelector(".demo-live-text"), LIVE);
    setData(line, "live", "");
    return;
  }
  setText(line.querySelector(".demo-live-text"), text);
  const p = progress.now;
  if (p && !bar) {
    bar = document.createElement("progress");
    bar.setAttribute("aria-hidden", "true"); // the text says the step
    line.prepend(bar);
  }
  if (bar && p) Object.assign(bar, p.total ? { max: p.total, value: Math.min(p.bytes, p.total) } : { max: p.of, value: p.step });
}

function showNote(fig, text) {
  let note = fig.querySelector('[data-role="note"]');
  if (!note && text) {
    note = Object.assign(document.createElement("p"), { className: "demo-note" });
    note.dataset.role = "note";
    note.setAttribute("role", "status");
    fig.querySelector('[data-role="error"]').before(note);
  }
  if (note) {
    setText(note, text);
    if (note.hidden !== !text) note.hidden = !text;
  }
}
