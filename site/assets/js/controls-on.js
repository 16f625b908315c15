// A figure's controls arrive disabled (demo.html: with JavaScript off they stay so, and the figure
// says why). This runs in the head of every page with figures (warm.js) and enables each figure's
// controls as the parser reaches them, so a reader can move one before demos.js has run.

const SELECTOR = 'fieldset[data-role="controls"][disabled]';
export function enableControls() {
  const on = () => { for (const set of document.querySelectorAll(SELECTOR)) set.disabled = false; };
  const watch = new MutationObserver(on);
  watch.observe(document.documentElement, { childList: true, subtree: true });
  document.addEventListener("DOMContentLoaded", () => { on(); watch.disconnect(); }, { once: true });
}
