// When the page can take background work: once its first contentful frame is on screen
// (afterFirstPaint) and once it has loaded (pageLoaded); Python's worker starts after both
// (afterPageLoad).
//
// Why: compiling the interpreter's wasm fills every core of a small machine, and started during the
// first frame it held that frame back (docs/decisions/0002-timings.md).
const LIMIT_MS = 1500;

// Resolves at the page's load event, or at once if it has passed.
export function pageLoaded() {
  return new Promise((resolve) => {
    if (document.readyState === "complete") resolve();
    else addEventListener("load", () => resolve(), { once: true });
  });
}

// Resolves at the first contentful paint, or after LIMIT_MS (a hidden page, or one that paints
// nothing contentful).
export function afterFirstPaint() {
  return new Promise((resolve) => {
    const painted = () => performance.getEntriesByName("first-contentful-paint").length > 0;
    // A browser without paint timing starts at once, as before (observing an unknown type
    // would not throw: it would only wait out the limit).
    if (!window.PerformanceObserver || !(PerformanceObserver.supportedEntryTypes || []).includes("paint") || painted()) return resolve();
    const timer = setTimeout(done, LIMIT_MS);
    const watch = new PerformanceObserver(() => { if (painted()) done(); });
    function done() {
      clearTimeout(timer);
      watch.disconnect();
      resolve();
    }
    try {
      watch.observe({ type: "paint", buffered: true });
    } catch (err) {
      done(); // refused (an older browser's observe without "type"): start at once
    }
  });
}

// Resolves once the page's own files are in (the load event), at most LOADED_LIMIT_MS after the
// first paint (a slow image may hold the load event back). Python's runtime starts then: started
// at the first paint, the runtime shared a phone's slow link with the page's own script, fonts and
// the first answers from the build, which a reader's first touch waits for.
const LOADED_LIMIT_MS = 3000;
export function afterPageLoad() {
  return afterFirstPaint().then(() => Promise.race([pageLoaded(), new Promise((resolve) => setTimeout(resolve, LOADED_LIMIT_MS))]));
}
