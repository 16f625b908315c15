// Registers the site's service worker (sw.js), which keeps what a reader has downloaded so that a
// second visit reads the runtime from disk and the site reads offline (issue 13).
//
// The page registers it once every figure is live (or once loaded, on a page without figures), and
// then asks it to keep the files this visit used: they sit in the browser's HTTP cache, and it
// copies them from there without touching the network. Registered any earlier, on a first visit it
// would take control while Python boots and pass the runtime through its own thread and Cache
// Storage, on the same cores, and delay the first Python render (scripts/bench).

import { sw, scope } from "@params";
import { pageLoaded } from "./first-paint.js";

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

// The service worker answers "kept" once the files are in its cache: the page is then readable
// offline, and says so on <html data-offline-copy="kept">.
function markKept(event) {
  if (event.data && event.data.type === "kept") document.documentElement.dataset.offlineCopy = "kept";
}

async function keepThisVisit() {
  const registration = await navigator.serviceWorker.ready;
  navigator.serviceWorker.addEventListener("message", markKept);
  // A worker's script is not among the page's resource entries: demos.js's tag names it.
  const worker = document.querySelector("script[data-worker]")?.dataset.worker;
  const urls = [location.href, ...performance.getEntriesByType("resource").map((e) => e.name)]
    .concat(worker ? [new URL(worker, location.href).href] : [])
    .filter((u) => new URL(u).origin === location.origin);
  registration.active.postMessage({ type: "keep", urls });
}

if ("serviceWorker" in navigator) {
  // updateViaCache "none": the browser checks sw.js itself on every visit, so a new build reaches readers.
  Promise.all([pageLoaded(), allLive()])
    .then(() => navigator.serviceWorker.register(sw, { scope, updateViaCache: "none" }))
    .then(keepThisVisit)
    .catch((err) => console.info("headspace: no offline copy:", err.message)); // e.g. storage blocked in a frame
}
