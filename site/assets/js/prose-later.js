// While a long article arrives, a phone lays out its typeset maths each time the parser adds a
// piece, and the answer to a reader's first touch of a figure waits behind those layouts. So on a
// touch screen (a phone's or a tablet's CPU; a desktop lays the maths out in a fraction of that
// time, and its figures' places stay exact as the page arrives), until the page has loaded, prose
// away from the screen is skipped (content-visibility: auto, which still lays out whatever the
// reader scrolls near). Then the prose is laid out whole, a few blocks a frame from the top (all
// at once held a phone's main thread for half a second, just as the first answers came), so that
// nothing moves later when the reader jumps to a figure or a link's target.
// Runs from the head of every page with figures (warm.js). Equations and tables are never skipped:
// scroll-regions.js measures their width.

import { pageLoaded } from "./first-paint.js";

const PROSE = ".post > :is(p, ul, ol)";
const BLOCKS_A_FRAME = 8;

/** Skip off-screen prose until the page has loaded, then lay it all out, a few blocks a frame. */
export function skipProseWhileLoading() {
  if (document.readyState !== "loading" || !matchMedia("(pointer: coarse)").matches
      || !window.CSS || !CSS.supports("content-visibility", "auto")) return;
  const skip = document.createElement("style");
  skip.textContent = `${PROSE} { content-visibility: auto; contain-intrinsic-size: auto 7em; }`;
  document.head.append(skip);
  pageLoaded().then(() => {
    const blocks = [...document.querySelectorAll(PROSE)];
    const step = () => {
      for (const block of blocks.splice(0, BLOCKS_A_FRAME)) block.style.contentVisibility = "visible";
      if (blocks.length) return void requestAnimationFrame(step);
      skip.remove();
      for (const block of document.querySelectorAll(PROSE)) block.style.removeProperty("content-visibility");
    };
    requestAnimationFrame(step);
  });
}
