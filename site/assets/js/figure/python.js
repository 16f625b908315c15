// The page's side of the worker (worker.js): opening it and its boot. Every message either way is
// checked against protocol.json (figure/protocol.js).
//
// The boot fails when it stops making progress, not after a fixed time: a slow link is not a
// failure. While the runtime downloads, no byte for STALL_MS is; once it is in, starting the
// interpreter and importing the package must finish within START_MS. Offline, a download that
// fails or stalls says so. A boot that stalled may be started again (retryable).

import { demos, marks, parsed, script } from "./page.js";
import { afterPageLoad } from "../first-paint.js";
import { checked, fatal } from "./protocol.js";

const STALL_MS = window.HEADSPACE_STALL_MS || 20000; // tests may shorten them
const START_MS = window.HEADSPACE_BOOT_LIMIT_MS || 60000;
// Tests hold each reply to a call this long: Python slower than this machine's, for certain (catching up)
const REPLY_DELAY_MS = Number(window.HEADSPACE_REPLY_DELAY_MS) || 0;
const TOTAL = Number(script?.dataset.runtimeBytes) || 0; // the runtime's bytes (the build's sum of its files)

let worker = null;
let booted = null; // promise resolved when Python is ready
let nextId = 1;
const pending = new Map(); // request id -> what the page passed with the call
const statsWaiters = [];
const handlers = { progress() {}, reply() {}, ahead() {}, lost() {} };
const joins = []; // pages shown in place of this one (navigate.js) waiting for their demos: {resolve, reject}
let opened = 0; // workers this page has opened (tests: an in-page navigation keeps the one it has)
/** The runtime's progress, as the worker last reported it: {step, of, what, bytes, total, rate}. */
export const progress = { now: null };

/** What the page does with the worker's messages: progress, a reply to a call, an answer ahead,
 * and the runtime lost after it had started (a crash). */
export function listen(on) { Object.assign(handlers, on); }
export const started = () => Boolean(booted);
export const live = () => Boolean(marks.pythonReady) && Boolean(worker);

// One interface over both kinds: post(message), onmessage, onerror, close().
function openWorker(url, kind) {
  const shared = kind === "shared" && window.SharedWorker ? new SharedWorker(url, { type: "module", name: "headspace" }) : null;
  const made = shared || new Worker(url, { type: "module" }), port = shared ? shared.port : made;
  opened += 1;
  return {
    kind: shared ? "shared" : "dedicated", post: (m) => port.postMessage(checked("page_to_worker", m)),
    close: () => (shared ? port.close() : made.terminate()),
    set onmessage(f) { port.onmessage = f; }, set onerror(f) { made.onerror = f; },
  };
}

// The worker is gone: a stats message waiting for it is answered with no heap.
const noMoreStats = () => { for (const resolveStats of statsWaiters.splice(0)) resolveStats({ heapBytes: null }); };

/** Close the worker: nothing is sent to it any more. */
export function close() {
  if (worker) worker.close();
  worker = null;
  for (const call of pending.values()) if (call.answered) call.answered(null); // no figure data will come
  pending.clear();
  noMoreStats();
  for (const join of joins.splice(0)) join.reject(new Error("The Python worker was closed."));
}

/** The workers this page has opened, and the kind of the one it talks to (tests). */
export const workers = () => ({ opened, kind: worker ? worker.kind : null });

// The download's rate, over the last few seconds of progress reports.
const samples = [];
function rate(bytes) {
  const now = performance.now();
  samples.push([now, bytes]);
  while (samples.length > 2 && now - samples[0][0] > 5000) samples.shift();
  const [t0, b0] = samples[0];
  return now - t0 > 500 ? ((bytes - b0) / (now - t0)) * 1000 : 0;
}

const OFFLINE = "You are offline, and Python's runtime is not kept on this device yet: it starts when the connection returns.";
const stalled = (message) => Object.assign(new Error(message), { retryable: true });

// The boot message for the page's figures as they are now (after an in-page navigation, the new page's).
const bootMessage = () => ({
  type: "boot", indexURL: new URL(script.dataset.pyodide, location.href).href,
  lockFileURL: new URL(script.dataset.lockfile, location.href).href,
  modelsURL: new URL(script.dataset.models, location.href).href,
  needsModels: demos.some((d) => d.hasAttribute("data-needs-models")),
  demos: demos.map((d) => d.dataset.demo), // the worker imports only these demos' modules first
});

/** Start Python (once, or again after a failed boot); resolves when it is ready, rejects with the
 * reason it could not start (``retryable``: a stalled download, which may work later). */
export function boot() {
  if (booted) return booted;
  progress.now = null;
  booted = new Promise((resolve, reject) => {
    let watchdog = null, lastBytes = -1, downloaded = false;
    // No progress for too long: the download stalled, or the interpreter never started.
    const watch = () => {
      clearTimeout(watchdog);
      watchdog = downloaded
        ? setTimeout(() => reject(new Error(`Python did not start within ${START_MS / 1000} s of its download.`)), START_MS)
        : setTimeout(() => reject(stalled(navigator.onLine === false ? OFFLINE
          : `Python's download stalled: nothing arrived for ${STALL_MS / 1000} s. It starts again when you move a control.`)), STALL_MS);
    };
    const connect = (kind) => {
      let heard = false; // any message from the worker: it runs
      try {
        worker = openWorker(script.dataset.worker, kind);
      } catch (err) {
        if (kind !== "dedicated") return connect("dedicated");
        clearTimeout(watchdog);
        reject(new Error(`This browser cannot run the Python worker (${err.message}).`));
        return;
      }
      marks.workerKind = worker.kind;
      worker.onerror = (event) => {
        event.preventDefault();
        // A browser may refuse a SharedWorker (in another site's frame, with third-party storage
        // blocked): fall back to a worker of our own.
        if (worker.kind === "shared" && !heard) {
          worker.close();
          connect("dedicated");
          return;
        }
        clearTimeout(watchdog);
        const why = `The Python worker crashed: ${event.message || "it could not be loaded"}.`;
        if (marks.pythonReady) { // after boot: nothing will answer any more
          noMoreStats();
          handlers.lost(why);
        }
        // a worker whose script could not be fetched offline is no crash: it starts when the connection returns
        else reject(!heard && navigator.onLine === false ? stalled(OFFLINE) : new Error(why));
      };
      worker.onmessage = ({ data }) => {
        heard = true;
        checked("worker_to_page", data);
        if (data.type === "ready" && marks.pythonReady && joins.length) {
          joins.shift().resolve(data.ms); // a page shown in place of the first: its demos are imported
        } else if (data.type === "ready") {
          clearTimeout(watchdog);
          marks.sharedWith = data.clients; // pages this interpreter serves (1 with a dedicated worker)
          resolve(data.ms);
        } else if (data.type === "progress") {
          // when each boot step began (scripts/bench), perhaps before this page asked (warm.js)
          marks[`boot${data.step}`] ||= data.at - performance.timeOrigin;
          const moved = data.bytes !== lastBytes || !progress.now || data.step !== progress.now.step;
          lastBytes = data.bytes;
          if (data.downloaded && !downloaded) {
            downloaded = true;
            watch(); // the interpreter's time limit starts now
          } else if (moved && !downloaded) watch();
          progress.now = { ...data, total: TOTAL, rate: rate(data.bytes) };
          handlers.progress();
        } else if (data.type === "stats") {
          for (const resolveStats of statsWaiters.splice(0)) resolveStats(data);
        } else if (data.type === "ahead") {
          handlers.ahead(data);
        } else if (data.type === "error" && fatal(data.error) && marks.pythonReady && joins.length) {
          joins.shift().reject(new Error(data.error.message + "."));
        } else if (data.type === "error" && fatal(data.error)) {
          clearTimeout(watchdog);
          reject(navigator.onLine === false ? stalled(OFFLINE) : new Error(data.error.message + "."));
        } else if (pending.has(data.id)) {
          const call = pending.get(data.id);
          pending.delete(data.id);
          if (call.answered) call.answered(data);
          else if (REPLY_DELAY_MS) setTimeout(() => handlers.reply(call, data), REPLY_DELAY_MS);
          else handlers.reply(call, data);
        }
      };
      worker.post(bootMessage());
    };
    // The worker starts once the page is on screen and its own files are in (first-paint.js), and
    // the page is parsed (the boot names every figure's demo); the watch too.
    Promise.all([afterPageLoad(), parsed()]).then(() => {
      watch();
      connect(window.HEADSPACE_WORKER || "shared");
    });
  });
  booted.then(() => { marks.pythonReady = performance.now(); }, () => { booted = null; }); // a failed boot may be started again
  return booted;
}

/** After an in-page navigation (navigate.js): once Python is live, ask the same worker for the
 * page's figures now on show (the boot message again: the worker, booted already, installs the models
 * if the new page needs them and imports its demos). Resolves when they are imported; rejects as
 * the first boot would. Nothing is downloaded or started again. Boots as usual if nothing has. */
export function rejoin() {
  if (!booted) return boot();
  const ask = () => new Promise((resolve, reject) => {
    if (!worker) return reject(new Error("The Python worker was closed."));
    joins.push({ resolve, reject });
    worker.post(bootMessage());
  });
  // Live: asked at once, so that the worker imports while the page wires the new figures.
  return marks.pythonReady ? ask() : booted.then(ask);
}

/** Ask Python for ``name`` at ``params`` laid out ``width`` px wide; ``call`` comes back with the reply. */
export function call(call, name, params, width) {
  const id = nextId++;
  pending.set(id, { ...call, params, width, sent: performance.now() });
  worker.post({ type: "call", id, name, params, width, figure: false }); // a move is drawn from the svg
}

/** The figure's data (plotly's) for ``name`` at ``params`` laid out ``width`` px wide: a promise
 * of the answer with its ``figure``, or of null if Python refused or failed (the drawing stays). */
export function figureData(name, params, width) {
  if (!live()) return Promise.resolve(null);
  return new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, { answered: (data) => resolve(data?.type === "result" ? JSON.parse(data.json) : null) });
    worker.post({ type: "call", id, name, params, width });
  });
}

/** Send ``message`` (a page_to_worker kind that carries an id, given here) and resolve with the
 * worker's reply of that id (null if the worker closed first). */
export function request(message) {
  return new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, { answered: resolve });
    worker.post({ ...message, id });
  });
}

/** Replace this page's list of values asked for ahead (an empty list cancels it). */
export function ahead(width, items) {
  if (worker) worker.post({ type: "ahead", width, items });
}

/** The worker's wasm heap, for benchmarks (once booted). */
export function stats() {
  return new Promise((resolve) => {
    if (!worker) return resolve({ heapBytes: null }); // the worker is gone (a crash, say)
    statsWaiters.push(resolve);
    worker.post({ type: "stats" });
  });
}
