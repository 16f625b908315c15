// A display equation, a code block or a figure's output table wider than the column scrolls sideways. A region that
// scrolls must be reachable by keyboard and named for a screen reader (WCAG 2.1.1; axe's
// scrollable-region-focusable), and only those that do scroll should add a tab stop: mark
// exactly the overflowing ones, again whenever the column's width changes.
//
// Every region's width is read before any is marked: one layout of the page, not one per region.
// They are marked at once, not first from the ResizeObserver: it says nothing of a region inside a
// figure the browser skips off screen (content-visibility), which a keyboard could then tab past.
const REGIONS = { ".katex-display": "Equation", "pre": "Code", ".attr": "Signature", ".output-scroll": "Table",
  ".md-table": "Table" };

function mark(el, name, scrolls) {
  el.classList.toggle("scrolls", scrolls);
  if (scrolls) {
    el.tabIndex = 0;
    el.setAttribute("role", "region");
    el.setAttribute("aria-label", `${name} (scrolls sideways)`);
  } else if (el.hasAttribute("role")) {
    el.removeAttribute("tabindex");
    el.removeAttribute("role");
    el.removeAttribute("aria-label");
  }
}

const names = new Map();
function markAll(regions) {
  const widths = regions.map((el) => [el, el.scrollWidth > el.clientWidth]);
  for (const [el, scrolls] of widths) mark(el, names.get(el), scrolls);
}
const watch = new ResizeObserver((entries) => markAll(entries.map((e) => e.target)));

function markPage() {
  watch.disconnect();
  names.clear();
  for (const [selector, name] of Object.entries(REGIONS)) {
    for (const el of document.querySelectorAll(selector)) if (!names.has(el)) names.set(el, name);
  }
  markAll([...names.keys()]);
  for (const el of names.keys()) watch.observe(el);
}
markPage();
// Another article shown in this page (navigate.js): its regions, as on a fresh load.
document.addEventListener("headspace:page", markPage);
