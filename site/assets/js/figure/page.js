// What every part of the page script shares: the page's figures, its script tag's settings and
// the timing marks that tests and benchmarks read (window.headspace.marks).

export const script = document.querySelector("script[data-worker]");
// The page's figures in document order, each added by demos.js once the parser has passed its end.
export const demos = [];
// Resolves once the whole page has been parsed (its figures all known).
export const parsed = () => new Promise((resolve) => {
  if (document.readyState !== "loading") resolve();
  else document.addEventListener("DOMContentLoaded", () => resolve(), { once: true });
});
export const embedPage = document.body.classList.contains("embed");
export const framed = embedPage && window.parent !== window; // an embed page inside another site's iframe
// pythonReady, firstAnswer, boot1..boot4, workerKind, sharedWith (ms since navigation)
export const marks = {};
// Under the browser's data saver nothing of the runtime is fetched until the reader asks for it.
export const saveData = Boolean(navigator.connection && navigator.connection.saveData);
// A phone keeps fewer answers than a laptop: navigator.deviceMemory (GB, rounded; Chromium only)
// where the browser tells, else a touch screen counts as a phone.
const memoryGB = navigator.deviceMemory || (matchMedia("(pointer: coarse)").matches ? 2 : 8);
export const ANSWER_CHARS = Math.min(32e6, memoryGB * 2e6); // about 2 MB of answers per GB, 32 MB at most
// A control's value's key is its JSON: Python writes the keys the page compares with
// (headspace_site.figure.keys: each option's data-value, the keys of data-off-when).
export const key = (value) => JSON.stringify(value);
export const same = (a, b) => key(a) === key(b);
