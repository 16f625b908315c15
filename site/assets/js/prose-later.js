// While a long article arrives, a phone lays out its typeset maths each time the parser adds a
// piece, and the answer to a reader's first touch of a figure waits behind those layouts. So on a
// touch screen (a phone's or a tablet's CPU; a desktop lays the maths out in a fraction of that
// time, and its figures' places stay exact as the page arrives), until the page is parsed, prose
// away from the screen is skipped (content-visibility: auto, which still lays out whatever the
// reader scrolls near). Then the prose is laid out whole, so that nothing moves when the reader
// jumps to a figure or a link's target: at once where that is quick, else a few blocks a frame
// from the top, so that no frame waits long for it.
// Runs from the head of every page with figures (warm.js). Equations and tables are never skipped:
// scroll-regions.js measures their width.

const PROSE = ".post > :is(p, ul, ol)";
const BLOCKS_A_FRAME = 8;
// Laying out the rest at once is chosen when the first blocks suggest it takes less than this.
const AT_ONCE_MS = 150;

/** Skip off-screen prose until the page is parsed, then lay it all out. */
export function skipProseWhileLoading() {
  if (document.readyState !== "loading" || !matchMedia("(pointer: coarse)").matches
      || !window.CSS || !CSS.supports("content-visibility", "auto")) return;
  const skip = document.createElement("style");
  skip.textContent = `${PROSE} { content-visibility: auto; contain-intrinsic-size: auto 7em; }`;
  document.head.append(skip);
  document.addEventListener("DOMContentLoaded", () => {
    const blocks = [...document.querySelectorAll(PROSE)], total = blocks.length;
    const show = (n) => { for (const block of blocks.splice(0, n)) block.style.contentVisibility = "visible"; };
    const done = () => {
      skip.remove();
      for (const block of document.querySelectorAll(PROSE)) block.style.removeProperty("content-visibility");
    };
    const t0 = performance.now();
    show(BLOCKS_A_FRAME);
    void document.body.offsetHeight; // lay those blocks out now, to time them
    const estimate = ((performance.now() - t0) * total) / BLOCKS_A_FRAME;
    if (estimate < AT_ONCE_MS) return done();
    const step = () => {
      show(BLOCKS_A_FRAME);
      if (blocks.length) requestAnimationFrame(step);
      else done();
    };
    requestAnimationFrame(step);
  }, { once: true });
}
