// While a long article arrives, a phone lays out its typeset maths each time the parser adds a
// piece, and the answer to a reader's first touch of a figure waits behind those layouts. So on a
// touch screen (a phone's or a tablet's CPU; a desktop lays the maths out in a fraction of that
// time, and its figures' places stay exact as the page arrives), until the page has loaded, prose
// away from the screen is skipped (content-visibility: auto, which still lays out whatever the
// reader scrolls near). Then the prose is laid out whole, a few blocks a frame from the top (all
// at once held a phone's main thread for half a second, just as the first answers came), so that
// nothing moves later when the reader jumps to a figure or a link's target.
// Runs from the head of every page with figures (warm.js); an article shown in place (navigate.js)
// is skipped the same way until its figures answer from Python. Equations and tables are never
// skipped: scroll-regions.js measures their width.

import { pageLoaded } from "./first-paint.js";

const PROSE = ".post > :is(p, ul, ol)";
const BLOCKS_A_FRAME = 8;
let skipping = null; // the stylesheet that skips prose now, if any

/** Skip off-screen prose until the page has loaded, then lay it all out, a few blocks a frame. */
export function skipProseWhileLoading() {
  if (document.readyState !== "loading" || !matchMedia("(pointer: coarse)").matches) return;
  const layOut = skipProse();
  if (layOut) pageLoaded().then(layOut);
}

/** From now on, prose away from the screen is skipped (content-visibility: auto); returns the
 * function that lays it all out, a few blocks a frame (or null where the browser cannot skip). Used
 * while a page arrives, and while an article shown in place (navigate.js) has its figures wired: its
 * first layout, which scroll-regions.js forces when it measures the new equations, then covers the
 * equations, headings and figures, not every line of inline maths. */
export function skipProse() {
  if (!window.CSS || !CSS.supports("content-visibility", "auto")) return null;
  const skip = document.createElement("style");
  skip.textContent = `${PROSE} { content-visibility: auto; contain-intrinsic-size: auto 7em; }`;
  skipping?.remove(); // a page left before its prose was laid out: the new one's skipping takes over
  skipping = skip;
  document.head.append(skip);
  let started = false;
  return () => {
    if (started) return;
    started = true;
    const blocks = [...document.querySelectorAll(PROSE)];
    const step = () => {
      if (skipping !== skip) return; // another page's skipping took over (a newer navigation)
      for (const block of blocks.splice(0, BLOCKS_A_FRAME)) block.style.contentVisibility = "visible";
      if (blocks.length) return void requestAnimationFrame(step);
      skip.remove();
      skipping = null;
      for (const block of document.querySelectorAll(PROSE)) block.style.removeProperty("content-visibility");
    };
    requestAnimationFrame(step);
  };
}
