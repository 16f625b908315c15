// A figure's controls: their readouts, the ones that do nothing in the current state, a play
// button, a random token sequence, the answer grid a slider keeps to until Python is live, and a
// vertical swipe that starts on a slider, which scrolls the page and leaves the slider alone.

import { readParams } from "../state.js";
import { key } from "./page.js";
import { answerGrid, nearestGridIndex, rangeValues } from "./answers.js";

export function updateReadouts(fig) {
  for (const input of fig.querySelectorAll("[data-kind=range]")) { // Python's Param.kind
    const text = `${input.value}${input.dataset.unit || ""}`;
    const readout = input.parentElement.querySelector(".readout");
    // written only when it changes: the figure's other sliders keep theirs on a move of this one
    if (readout && readout.textContent !== text) readout.textContent = text;
    if (input.getAttribute("aria-valuetext") !== text) input.setAttribute("aria-valuetext", text); // a screen reader hears "30°", not "30"
  }
}

// ---------- controls that do nothing in the current state ----------
// Python decides when a control does anything (Param.active): the build's settings arrive decided
// (Param.control), and for a move each gated control carries Python's table of the other
// controls' values that switch it off (Param.off_when, here data-off-when: {param: [keys]}, each
// value's key written by Python). The page looks the current keys up in it, nothing more; a
// control switched off is disabled and its note (the build's, data-role="inactive") says why.
// Its value stays and is still sent to Python.
export function applyActive(fig) {
  const gated = fig.querySelectorAll("[data-off-when]");
  if (!gated.length) return;
  const params = readParams(fig);
  for (const el of gated) {
    const off = JSON.parse(el.dataset.offWhen);
    const on = !Object.entries(off).some(([other, keys]) => keys.includes(key(params[other])));
    // Only what changes is written: each write restyles the figure, on every move of a drag.
    if (el.disabled === on) el.disabled = !on;
    const note = document.getElementById(`${el.id}-why`);
    if (note && note.hidden !== on) note.hidden = on;
    if (on && el.hasAttribute("aria-describedby")) el.removeAttribute("aria-describedby");
    else if (!on && note && el.getAttribute("aria-describedby") !== note.id) el.setAttribute("aria-describedby", note.id);
    for (const play of fig.querySelectorAll(`[data-role="play"][data-for="${el.name}"]`)) if (play.disabled === on) play.disabled = !on;
  }
}

// ---------- the answer grid ----------
// A slider answered from the build on a coarser grid than its own step (data-answered holds the
// grid's values) keeps to the grid while the reader moves it by hand before Python is live: a touch or a
// drag lands on the nearest grid value, and an arrow key moves one grid step. A value set another
// way (a link, a test) is left as it is, and waits for Python.
export function keepToGrid(slider, isLive) {
  const grid = answerGrid(slider);
  if (!grid.length || grid.length === rangeValues(slider).length) return;
  let byHand = false;
  slider.addEventListener("pointerdown", () => { byHand = true; }, { passive: true });
  addEventListener("pointerup", () => { byHand = false; }, { passive: true });
  slider.addEventListener("input", () => {
    if (!byHand || isLive()) return;
    const value = Number(slider.value);
    slider.value = String(grid[nearestGridIndex(grid, value)]);
  }, { capture: true });
  slider.addEventListener("keydown", (event) => {
    const dir = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[event.key];
    if (!dir || isLive() || slider.disabled) return;
    event.preventDefault();
    const value = Number(slider.value);
    const next = dir > 0 ? grid.find((v) => v > value) : grid.findLast((v) => v < value);
    if (next === undefined) return;
    slider.value = String(next);
    slider.dispatchEvent(new Event("input", { bubbles: true }));
    slider.dispatchEvent(new Event("change", { bubbles: true }));
  });
}

// ---------- a swipe that starts on a slider ----------
// On a touch screen a slider says it pans vertically (CSS: touch-action: pan-y), so a vertical
// swipe scrolls the page. The browser has already moved the thumb to the touch point when it takes
// the gesture over (pointercancel): the value from before the touch comes back, and no figure is
// asked for the value the thumb jumped to.
export function keepOnSwipe(slider, onRestore) {
  let before = null;
  slider.addEventListener("pointerdown", (event) => {
    if (event.pointerType === "touch") before = slider.value;
  }, { passive: true });
  slider.addEventListener("pointercancel", () => {
    if (before === null || slider.value === before) return void (before = null);
    slider.value = before;
    before = null;
    onRestore();
  }, { passive: true });
  slider.addEventListener("pointerup", () => { before = null; }, { passive: true });
}

// ---------- animation: a play button steps an animated range parameter ----------
// It plays while its figure is in view once Python is live. Before that, a figure in view that will
// play is "armed": its button already says Pause (as its caption does), and pressing it keeps the
// figure still when Python arrives.
const reducedMotion = matchMedia("(prefers-reduced-motion: reduce)");
export function setupPlay(view, button, { move, reach }) {
  const input = view.fig.querySelector(`input[name="${button.dataset.for}"]`);
  let timer = null, armed = false;
  const pressed = (on) => { button.textContent = on ? "Pause" : "Play"; button.setAttribute("aria-pressed", String(on)); };
  const stop = () => { clearInterval(timer); timer = null; armed = false; pressed(false); };
  const start = () => {
    armed = false;
    pressed(true);
    reach(input);
    timer = setInterval(() => {
      if (view.state.inFlight) return; // never queue frames faster than Python answers
      const step = Number(input.step) || 1;
      let v = Number(input.value) + step;
      if (v > Number(input.max)) v = Number(input.min);
      input.value = String(v);
      move();
    }, 80);
  };
  let pausedByReader = false; // a figure the reader paused never starts again by itself
  button.addEventListener("click", () => {
    pausedByReader = Boolean(timer) || armed;
    return timer || armed ? stop() : start();
  });
  view.stopAnimation = stop;
  const willPlay = () => !timer && !pausedByReader && !reducedMotion.matches;
  view.startAnimation = () => { if (willPlay()) start(); };
  view.armAnimation = () => { if (willPlay()) { armed = true; pressed(true); } };
  reducedMotion.addEventListener("change", () => reducedMotion.matches && stop());
}

// ---------- a token sequence: "Random repeat" writes a random span twice ----------
export function setupRandomTokens(fig, button, move) {
  const input = fig.querySelector(`input[name="${button.dataset.for}"]`);
  button.addEventListener("click", () => {
    const lo = Number(input.dataset.min), hi = Number(input.dataset.max);
    const most = Number(input.dataset.length);
    const token = () => lo + Math.floor(Math.random() * (hi - lo + 1));
    const span = Array.from({ length: Math.min(12, Math.floor(most / 3)) }, token);
    const prefix = Array.from({ length: Math.min(4, most - 2 * span.length) }, token);
    input.value = [...prefix, ...span, ...span].join(" ");
    move();
  });
}
