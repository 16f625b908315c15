{{- /*
public/sw.js: the service worker (registered by assets/js/sw-register.js on every page). A returning
reader's second visit reads from disk every file it read before and compiles nothing twice; after
one visit the site reads offline, its figures going live.

- Addresses that change with their content (the runtime under /pyodide/<version or hash>/, plotly
  and KaTeX under /vendor/<hash>/, Hugo's fingerprinted /js/ and /css/) are answered from the browser's HTTP cache first, then this
  cache, and only then the network: the HTTP cache is where V8 finds the wasm it compiled before
  (fromHttpCacheFirst), and this cache keeps every file for offline reading.
- /models/ keep their names across builds: they too come from the cache first, and the content of
  every file there is in VERSION, so a build that changes any of them starts a new cache.
- Pages, and everything else, go to the network first (a page always revalidates); the cache is
  the offline fallback. Offline, a page not in the cache gets a page that says so and lists the
  pages this cache holds (offlinePage).
- Which pages read offline: every page the reader opened, and, after one visit, Home, About and
  the primer (the way in, part 1): three small pages (about 90 kB compressed) fetched once (keep).
  Each reads as built, with its figures as the build drew them; a figure goes live offline if
  this cache holds the runtime (and, for a figure that reads a model, that model's files).
- Each build's VERSION names its cache; the old caches are deleted on activate, after the runtime
  files the new build still uses are copied over (immutable addresses: same bytes).
- sw.js itself is never cached (home.headers: max-age=0; the page registers it with
  updateViaCache "none"), so a new build reaches readers on their next visit.
*/ -}}
{{- $contract := site.Data.contract -}}
{{- $parts := slice (jsonify $contract) -}}
{{- /* every file under /models/ (served cache-first): the manifest, the weights, benchmark.json */ -}}
{{- range sort (resources.Match "models/**") "Name" }}{{ $parts = $parts | append (.Content | md5) }}{{ end -}}
{{- $version := delimit $parts "\n" | md5 | truncate 12 "" -}}
{{- $root := "/" | relURL -}}
{{- $kept := slice ("/" | relURL) ("/about/" | relURL) -}}
{{- range where site.RegularPages "Params.part" 1 }}{{ $kept = $kept | append .RelPermalink }}{{ end -}}
{{- $titles := dict -}}
{{- range site.Pages }}{{ if and .RelPermalink (ne .Section "embed") (not (in (slice "taxonomy" "term") .Kind)) }}{{ $titles = merge $titles (dict .RelPermalink (cond .IsHome site.Title .Title)) }}{{ end }}{{ end -}}
// Written by Hugo from layouts/home.sw.js; do not edit.
const VERSION = {{ $version | jsonify }};
const CACHE = `headspace-${VERSION}`;
// The worker's own cache of the runtime's files decoded (worker.js): it keeps and prunes it itself,
// so a new build's service worker neither deletes it nor copies it into its own.
const DECODED = "headspace-runtime-decoded";
const ROOT = new URL({{ $root | jsonify }}, self.location).pathname;
const PYODIDE = new URL({{ $contract.pyodide_dir | relURL | jsonify }}, self.location).href;
const LOCKFILE = new URL({{ $contract.lockfile | relURL | jsonify }}, self.location).href;
const VENDOR = new URL({{ $contract.vendor_dir | relURL | jsonify }}, self.location).pathname;
const MODELS = new URL({{ "models/" | relURL | jsonify }}, self.location).href;
// What the worker loads before Python runs; the wheels and the standard library are named by the site lockfile.
const RUNTIME = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm"]
  .map((f) => new URL(f, PYODIDE).href).concat([LOCKFILE]);

// The pages kept after one visit (Home, About, the primer), and every page's title for the offline page.
const PAGES = {{ $kept | jsonify }}.map((p) => new URL(p, self.location).href);
const TITLES = {{ $titles | jsonify }};

// KaTeX's large-bracket fonts: a page reads them only where tall brackets are laid out, which on
// this visit may have been off the screen (skipped prose): kept anyway, so the maths reads offline.
const FONTS = [1, 2, 3, 4].map((n) => new URL(`${VENDOR}katex/fonts/KaTeX_Size${n}-Regular.woff2`, self.location).href);

const IMMUTABLE = ["pyodide/", "vendor/", "js/", "css/"].map((p) => ROOT + p);
const VERSIONED = ["models/"].map((p) => ROOT + p);

self.addEventListener("install", (event) => {
  event.waitUntil(carryOver().then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("headspace-") && name !== CACHE && name !== DECODED) await caches.delete(name);
    }
    if (self.registration.navigationPreload) await self.registration.navigationPreload.enable();
    await self.clients.claim();
  })());
});

// A new build keeps the runtime files it shares with the old one (the same immutable addresses).
async function carryOver() {
  const cache = await caches.open(CACHE);
  const pyodide = new URL(PYODIDE).pathname;
  for (const name of await caches.keys()) {
    if (!name.startsWith("headspace-") || name === CACHE || name === DECODED) continue;
    const old = await caches.open(name);
    for (const request of await old.keys()) {
      const path = new URL(request.url).pathname;
      if ([pyodide, new URL(".", LOCKFILE).pathname, VENDOR].some((kept) => path.startsWith(kept))) {
        await cache.put(request, await old.match(request));
      }
    }
  }
}

function keepable(response) {
  return response && response.status === 200 && response.type === "basic";
}

// An immutable file the browser's HTTP cache holds is answered from there, without the network
// ("only-if-cached"): V8 keeps the compiled wasm beside the HTTP cache's entry, and a response
// from Cache Storage misses it (a second visit served pyodide.asm.wasm from Cache Storage compiled
// it again, 3 s of optimising compiler on 2 cores). Cache Storage answers when the HTTP cache has
// let the file go, or offline; the network only for a file neither holds.
async function fromHttpCacheFirst(event) {
  try {
    const held = await fetch(event.request, { cache: "only-if-cached", mode: "same-origin" });
    if (keepable(held)) return held;
  } catch (err) { /* not in the browser's HTTP cache */ }
  return fromCacheFirst(event);
}

async function fromCacheFirst(event) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(event.request);
  if (hit) return hit;
  const response = await fetch(event.request);
  if (keepable(response)) event.waitUntil(cache.put(event.request, response.clone()));
  return response;
}

async function fromNetworkFirst(event) {
  const cache = await caches.open(CACHE);
  try {
    const response = (await event.preloadResponse) || (await fetch(event.request));
    if (keepable(response)) event.waitUntil(cache.put(event.request, response.clone()));
    return response;
  } catch (err) {
    // Offline: the page as last read; a link to a figure's state (?theta=30) falls back to the page.
    const hit = (await cache.match(event.request)) || (await cache.match(event.request, { ignoreSearch: true }));
    if (hit) return hit;
    if (event.request.mode === "navigate") return offlinePage(cache, new URL(event.request.url).pathname);
    throw err;
  }
}

// Offline, a page this cache does not hold: say so, and list the pages it does hold.
async function offlinePage(cache, path) {
  const pages = (await cache.keys()).map((r) => new URL(r.url).pathname).filter((p) => p in TITLES);
  const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
  const items = [...new Set(pages)].sort().map((p) => `<li><a href="${escape(p)}">${escape(TITLES[p])}</a></li>`).join("");
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>Offline · headspace</title>
<style>body{font:1.1rem/1.6 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}</style></head><body>
<h1>You are offline</h1><p>${escape(TITLES[path] ? `“${TITLES[path]}”` : path)} is not kept on this device, so it cannot be read until you are online again.</p>
<p>These pages of headspace are kept and read offline:</p><ul data-role="kept">${items}</ul></body></html>`;
  return new Response(html, { status: 503, headers: { "Content-Type": "text/html; charset=utf-8" } });
}

self.addEventListener("fetch", (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin || request.headers.has("range")) return;
  if (!url.pathname.startsWith(ROOT) || url.pathname === ROOT + "sw.js") return;
  const under = (prefixes) => prefixes.some((p) => url.pathname.startsWith(p));
  event.respondWith(under(IMMUTABLE) ? fromHttpCacheFirst(event) : under(VERSIONED) ? fromCacheFirst(event) : fromNetworkFirst(event));
});

// The page, once its figures are live, names the files it used; with the runtime (and the wheels
// and model files the site lockfile and the models' manifest name) they are copied from the
// browser's HTTP cache into this cache, without the network: a file the browser does not hold is
// skipped ("only-if-cached"), so nothing is downloaded that the reader did not load, except
// PAGES (Home, About and the primer, fetched once so that the site's way in reads offline) and FONTS.
// When every file is in, the page is told (it marks <html data-offline-copy="kept">): closing
// the browser before then can leave the copy incomplete.
self.addEventListener("message", (event) => {
  if (!(event.data && event.data.type === "keep" && Array.isArray(event.data.urls))) return;
  event.waitUntil(keep(event.data.urls).then(() => event.source?.postMessage({ type: "kept" })));
});

async function keep(urls) {
  const cache = await caches.open(CACHE);
  const fromBrowser = async (url) => {
    const href = new URL(url, self.location).href.split("#")[0];
    if (new URL(href).origin !== self.location.origin || (await cache.match(href))) return;
    try {
      const response = await fetch(href, { cache: "only-if-cached", mode: "same-origin" });
      if (keepable(response)) await cache.put(href, response);
    } catch (err) { /* not in the browser's cache: skipped */ }
  };
  const read = async (url) => {
    const hit = (await cache.match(url)) || (await fetch(url, { cache: "only-if-cached", mode: "same-origin" }));
    return hit.json();
  };
  await Promise.all(urls.concat(RUNTIME, [new URL("manifest.json", MODELS).href]).map(fromBrowser));
  let extra = [];
  try { // wheels are named relative to Pyodide's folder, as loadPyodide resolves them; the worker
    // fetches an entry's xz-compressed copy where it names one
    const lock = await read(LOCKFILE);
    const fetched = (entry) => (entry.xz || entry).file_name;
    extra = extra.concat(Object.values(lock.packages).map((p) => new URL(fetched(p), PYODIDE).href));
    if (lock.stdlib) extra.push(new URL(fetched(lock.stdlib), LOCKFILE).href); // beside the lockfile
  } catch (err) { /* no lockfile in the browser's cache: no wheels either */ }
  try {
    const manifest = await read(new URL("manifest.json", MODELS).href);
    extra = extra.concat(Object.entries(manifest.models).flatMap(
      ([name, model]) => Object.keys(model.files).map((f) => new URL(`${name}/${f}`, MODELS).href)));
  } catch (err) { /* no model demo read yet */ }
  await Promise.all(extra.map(fromBrowser));
  await Promise.all(PAGES.concat(FONTS).map(async (page) => {
    if (await cache.match(page)) return;
    try {
      const response = await fetch(page);
      if (keepable(response)) await cache.put(page, response);
    } catch (err) { /* offline now: kept on the next visit */ }
  }));
}
