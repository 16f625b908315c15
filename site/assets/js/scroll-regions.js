// A display equation, a code block or a figure's output table wider than the column scrolls sideways. A region that
// scrolls must be reachable by keyboard and named for a screen reader (WCAG 2.1.1; axe's
// scrollable-region-focusable), and only those that do scroll should add a tab stop: mark
// exactly the overflowing ones, again whenever the column's width changes.
const REGIONS = { ".katex-display": "Equation", "pre": "Code", ".attr": "Signature", ".output-scroll": "Table" };

function mark(el, name) {
  const scrolls = el.scrollWidth > el.clientWidth;
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
for (const [selector, name] of Object.entries(REGIONS)) {
  for (const el of document.querySelectorAll(selector)) if (!names.has(el)) names.set(el, name);
}
const watch = new ResizeObserver((entries) => entries.forEach((e) => mark(e.target, names.get(e.target))));
for (const [el, name] of names) {
  mark(el, name);
  watch.observe(el);
}
