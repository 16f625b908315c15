// Resolves once the page's first contentful frame is on screen (or after a limit, for a page
// that is hidden or paints nothing): Python's worker starts then, not before.
//
// Why: compiling the interpreter's 10 MB of wasm fills every core of a small machine for most
// of a second. Started while the first frame was still on its way to the screen, it held that
// frame back: on a 2-core machine, Lighthouse's mobile runs of one article saw the first paint
// at about 250 ms in most runs and at 1,290 ms in the rest (the frame was painted at 268 ms and
// shown only after the compile). The worker's downloads begin a few tens of milliseconds later.
const LIMIT_MS = 1500;

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
