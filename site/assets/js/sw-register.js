// Registers the site's service worker (sw.js), which keeps what a reader has downloaded so that a
// second visit reads the runtime from disk and the site reads offline (issue 13).
//
// Once every figure on the page is live (or at once on a page without figures), the page asks the
// service worker to keep the files this visit used: the ones fetched before it took control sit in
// the browser's HTTP cache, and it copies them from there without touching the network.

import { sw, scope } from "@params";

function allLive() {
  const figures = [...document.querySelectorAll("figure.demo")];
  const live = () => figures.every((f) => f.dataset.status === "ready" || f.dataset.status === "error");
  return new Promise((resolve) => {
    if (live()) return resolve();
    const watch = new MutationObserver(() => {
      if (live()) { watch.disconnect(); resolve(); }
    });
    for (const f of figures) watch.observe(f, { attributes: true, attributeFilter: ["data-status"] });
  });
}

const loaded = new Promise((resolve) => {
  if (document.readyState === "complete") resolve();
  else addEventListener("load", resolve, { once: true });
});

async function keepThisVisit() {
  const registration = await navigator.serviceWorker.ready;
  await Promise.all([loaded, allLive()]);
  const urls = [location.href, ...performance.getEntriesByType("resource").map((e) => e.name)]
    .filter((u) => new URL(u).origin === location.origin);
  registration.active.postMessage({ type: "keep", urls });
}

if ("serviceWorker" in navigator) {
  // updateViaCache "none": the browser checks sw.js itself on every visit, so a new build reaches readers.
  navigator.serviceWorker.register(sw, { scope, updateViaCache: "none" })
    .then(keepThisVisit)
    .catch((err) => console.info("headspace: no offline copy:", err.message)); // e.g. storage blocked in a frame
}
