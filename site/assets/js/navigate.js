// Following a link to another page of the site without leaving this one (issue 51, decision 0011):
// the page's worker, with Python booted in it, stays, and only imports the new page's demos.
//
// A returning reader's Python starts afresh on every page a full navigation loads (the interpreter
// and numpy: seconds), and no browser we target keeps a worker across one (a SharedWorker dies with
// the last page using it; Chrome on Android has none). So a click on a link to a page of the site
// fetches that page (the service worker serves it offline as before), puts its title, head and
// <main> in place of this page's, gives the new figures to demos.js (the build's drawings show at
// once, as on a fresh load) and sets the address (history.pushState); back and forward do the same.
// Anything unexpected (a failed fetch, a page of another structure or with scripts this page does
// not run) is a full navigation, as without this file.
//
// Off with window.HEADSPACE_IN_PAGE_NAVIGATION = false (set before the page's scripts run: the
// bench compares both), or per link with data-full-navigation.

import { marks } from "./figure/page.js";
import { skipProse } from "./prose-later.js";

const LAY_OUT_BY_MS = 3000; // the new article's prose is laid out by then, Python or not
const SKIPPED_EXTENSION = /\.(?!html?$)[a-z0-9]+$/i; // a file (a wheel, the feed, data), not a page
const shown = () => location.pathname + location.search; // the page on show; a hash is a place in it

let hooks = null;
let onShow = shown(); // the page whose content is in the document
let latest = 0; // the navigation under way: a newer one overtakes it
// The head's elements that came with a page's HTML; those a script added (plotly's stylesheet, added
// once when plotly first runs) stay across pages.
const fromPages = new WeakSet();

/** Set up in-page navigation; ``leave()`` tears the page's figures down, ``arrive(kept)`` sets the
 * new page's up (``kept``: the settings ``settings()`` gave when the reader left it, if it is shown
 * again), and returns a promise of their Python, which navigation does not wait for. */
export function setupNavigation({ leave, arrive, settings }) {
  if (window.HEADSPACE_IN_PAGE_NAVIGATION === false || !window.fetch || !window.DOMParser || !history.pushState) return;
  hooks = { leave, arrive, settings };
  for (const el of document.head.children) fromPages.add(el);
  history.replaceState({ ...(history.state || {}), headspace: true }, "");
  document.addEventListener("click", onClick);
  addEventListener("popstate", onPopState);
  // The figures' settings go into the page's history entry as the reader makes them: back or forward
  // leaves an entry only after the address has changed to the next one, too late to write then.
  document.addEventListener("change", (event) => {
    if (event.target instanceof Element && event.target.closest("figure.demo")) keepSettings();
  });
  // A reload or a full navigation away restores scroll as the browser does; in place, this file does.
  addEventListener("pagehide", () => { history.scrollRestoration = "auto"; });
  window.headspace = Object.assign(window.headspace || {}, { navigations: 0 });
}

/** The address a click should follow in place, or null to let the browser follow it. */
export function inPageTarget(event, here = location) {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return null;
  const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
  if (!link || link.hasAttribute("download") || link.hasAttribute("data-full-navigation")) return null;
  if ((link.target && link.target !== "_self") || /\bexternal\b/.test(link.rel)) return null;
  if (link.closest("figure.demo")) return null; // a figure's menu: links to a state, its data, an embed
  const url = new URL(link.href, here.href);
  if (url.origin !== here.origin || !/^https?:$/.test(url.protocol)) return null;
  if (url.search || SKIPPED_EXTENSION.test(url.pathname)) return null; // a figure's state, a file
  if (/\/embed\//.test(url.pathname)) return null;
  if (url.pathname === here.pathname && here.search === "") return null; // a place in this page (or itself)
  return url;
}

function onClick(event) {
  const url = inPageTarget(event);
  if (!url) return;
  event.preventDefault();
  go(url.href, { push: true });
}

function onPopState() {
  if (shown() === onShow) return; // a place in the page on show (its hash): the browser scrolls
  go(location.href, { push: false, scroll: history.state?.scroll });
}

// Scripts that would run on a full load of ``doc``: all must already run here, else it is loaded in full.
function scriptsRunHere(doc) {
  const runs = (s) => !s.type || /^(module|text\/javascript|application\/javascript)$/i.test(s.type);
  const here = new Set([...document.scripts].filter(runs).map((s) => (s.src ? `src:${s.getAttribute("src")}` : `text:${s.textContent}`)));
  const main = doc.querySelector("main#content");
  return [...doc.scripts].filter(runs).every((s) => !main.contains(s) && here.has(s.src ? `src:${s.getAttribute("src")}` : `text:${s.textContent}`));
}

/** Fetch the page at ``url`` and show it here; a full navigation on anything unexpected. */
async function go(url, { push, scroll }) {
  const mine = ++latest;
  marks.navigationStart = performance.now();
  marks.pageShown = marks.pageWired = marks.pageLive = marks.pageSetUp = null;
  const full = () => (push ? location.assign(url) : location.reload()); // back/forward: the address is set already
  let doc;
  try {
    const response = await fetch(url, { headers: { Accept: "text/html" } });
    if (!response.ok || !/^text\/html/.test(response.headers.get("Content-Type") || "")) throw new Error(`${url} answered ${response.status}`);
    if (response.redirected) url = response.url;
    doc = new DOMParser().parseFromString(await response.text(), "text/html");
    // DOMParser parses as if scripts were off: a <noscript>'s content would become elements. A page
    // with scripts on holds it as text (never shown), as on a full load.
    for (const el of doc.querySelectorAll("noscript")) el.textContent = el.innerHTML;
    if (mine !== latest) return; // the reader followed another link meanwhile
    if (!doc.querySelector("main#content") || !doc.querySelector("h1") || doc.body.classList.contains("embed") || !scriptsRunHere(doc)) {
      throw new Error(`${url} is not a page to show in place`);
    }
  } catch (err) {
    console.info("headspace: loading the page in full:", err.message);
    if (mine === latest) full();
    return;
  }
  try {
    show(doc, url, { push, scroll });
  } catch (err) { // the page as it was, if anything failed half way, is not to be trusted: load in full
    console.info("headspace: loading the page in full:", err.message);
    full();
  }
}

function show(doc, url, { push, scroll }) {
  history.scrollRestoration = "manual";
  if (push) {
    history.replaceState({ ...(history.state || {}), headspace: true, scroll: readingPlace(), figures: hooks.settings() }, ""); // back returns here
    history.pushState({ headspace: true }, "", url); // before the content: its #links resolve against it
  }
  onShow = shown();
  hooks.leave();
  swapHead(doc);
  // The new article's prose away from the screen waits until its figures answer from Python (or
  // LAY_OUT_BY_MS): its first layout is the equations', headings' and figures', not every line of maths.
  const layOut = skipProse();
  document.querySelector("main#content").replaceWith(document.adoptNode(doc.querySelector("main#content")));
  marks.pageShown = performance.now();
  window.headspace.navigations += 1;
  const live = hooks.arrive(push ? null : history.state?.figures);
  if (layOut) Promise.race([live, new Promise((r) => setTimeout(r, LAY_OUT_BY_MS))]).finally(layOut);
  document.dispatchEvent(new CustomEvent("headspace:page")); // scroll-regions.js marks the new content's
  place(scroll);
  announce(document.title);
  keepForOffline();
}

// The head's parts that are the page's own (title, description, previews, stylesheets such as
// KaTeX's): those the new page does not have go, those it adds come; scripts stay as they ran, and
// so does what a script added.
function swapHead(doc) {
  document.title = doc.title;
  const own = (head) => [...head.children].filter((el) => el.localName !== "script" && el.localName !== "title");
  const wanted = new Set(own(doc.head).map((el) => el.outerHTML));
  const present = new Set();
  for (const el of own(document.head).filter((e) => fromPages.has(e))) {
    if (wanted.has(el.outerHTML) && !present.has(el.outerHTML)) present.add(el.outerHTML);
    else el.remove();
  }
  for (const el of own(doc.head)) {
    if (present.has(el.outerHTML)) continue;
    fromPages.add(el);
    document.head.append(document.adoptNode(el));
  }
}

// The settings of the figures the reader moved, in the page's history entry (back shows them again).
function keepSettings() {
  history.replaceState({ ...(history.state || {}), headspace: true, figures: hooks.settings() }, "");
}

// Where the reader is: the first block of the article on screen, and how far from the top it sits. A
// scroll offset alone would not do: the page shown again is a fresh copy whose figures say other
// things while Python is not live yet, and each line they add above would move the reader.
const BLOCKS = "main#content :is(h1, h2, h3, h4, p, li, figure, pre, table)";
function readingPlace() {
  const blocks = [...document.querySelectorAll(BLOCKS)];
  const index = blocks.findIndex((el) => el.getBoundingClientRect().bottom > 0);
  return { y: scrollY, index, top: index < 0 ? 0 : blocks[index].getBoundingClientRect().top };
}

// The top of the new page, the place its address names (#id), or on back/forward where it was left;
// keyboard focus on its heading, so that the next Tab starts from there.
function place(scroll) {
  const heading = document.querySelector("main#content h1");
  heading.tabIndex = -1;
  heading.focus({ preventScroll: true });
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (scroll && typeof scroll.y === "number") {
    const block = scroll.index >= 0 && document.querySelectorAll(BLOCKS)[scroll.index];
    if (block) scrollBy(0, block.getBoundingClientRect().top - scroll.top);
    else scrollTo(0, scroll.y);
  } else if (target) target.scrollIntoView();
  else scrollTo(0, 0);
}

// Screen readers hear that a new page is shown (a full load says so by itself).
function announce(title) {
  let region = document.querySelector('[data-role="page-announcement"]');
  if (!region) {
    region = document.createElement("p");
    region.dataset.role = "page-announcement";
    region.className = "skip"; // off screen, still read
    region.setAttribute("aria-live", "polite");
    document.body.append(region);
  }
  region.textContent = "";
  requestAnimationFrame(() => { region.textContent = `Page loaded: ${title}`; });
}

// The service worker keeps the pages and files a reader used (sw-register.js, on the first page);
// a page shown in place is named to it too, so that it reads offline.
function keepForOffline() {
  const worker = navigator.serviceWorker && navigator.serviceWorker.controller;
  if (!worker) return;
  const urls = [location.href.split("#")[0], ...performance.getEntriesByType("resource").map((e) => e.name)]
    .filter((u) => new URL(u).origin === location.origin);
  worker.postMessage({ type: "keep", urls });
}
