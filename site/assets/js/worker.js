// The Python side of every demo on a page: Pyodide in a module worker.
//
// It runs as a SharedWorker where the browser has one (one interpreter for
// every page of the site a reader has open, and for every figure a host page
// embeds) or as a dedicated worker; each connected page talks to it through
// its own port. The boundary is narrow (docs/contracts.md, "The worker's boundary"); its messages,
// and Python's errors, are declared once, in protocol.json (figure/protocol.js), against which the
// worker checks every message it sends: a page sends {type: "boot"} once (again for each article it
// shows in place, navigate.js: the worker then imports that page's demos) and then "call"s, and may
// ask for figures ahead of the reader ("ahead", below). Only strings and plain objects cross; no
// PyProxy leaves this file. A page's head may connect first and send "warm" (warm.js): the boot
// starts then, and the page's "boot" joins it.

import { FILES_ADDED, WHEELS, installWheel } from "./wheel.js";
import { sha256Hex, xzChecked } from "./xz.js";
import { checked, error } from "./figure/protocol.js";

// The interpreter's wasm memory, for the stats message (benchmarks watch it stay flat), captured
// as Pyodide's loader creates it through the public WebAssembly API (not Pyodide's private _module).
let wasmMemory = null;
const NativeMemory = WebAssembly.Memory;
function CapturingMemory(descriptor) {
  const memory = new NativeMemory(descriptor);
  if (!descriptor.shared && !wasmMemory) wasmMemory = memory; // the heap (a shared 1-page probe aside)
  return memory;
}
CapturingMemory.prototype = NativeMemory.prototype;

const SHARED = typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope;
let python = null; // promise of {pyodide, callDemo}: booted once, whichever page asks first
let models = null; // promise: the models' manifest installed in Pyodide's files (once, when a page needs it)
let clients = 0; // pages that have asked it to boot (1 for a dedicated worker); ports say nothing when they close
const bootedPorts = new Set(); // a page that shows another article in place (navigate.js) asks again on its port: one page

// The shipped models: the manifest when a page has model demos, every other file the first time
// a demo reads it (Python says "model file /models/<path> is missing"; the file is copied and the
// call runs again), so a page downloads only the models and checkpoints its readers look at.
const MODELS_ROOT = "/models";
let modelsURL = null;
let manifestBytes = null; // promise: fetched while Pyodide boots
const copied = new Map(); // path under the models root -> promise of its copy

function fetchManifest(url) {
  modelsURL ||= url;
  manifestBytes ||= fetchOk(new URL("manifest.json", url)).then((r) => r.arrayBuffer());
  manifestBytes.catch(() => { manifestBytes = null; }); // reported when installed; retried by the next page
  return manifestBytes;
}

async function installManifest({ pyodide, useModels }, url) {
  try {
    const bytes = new Uint8Array(await fetchManifest(url));
    pyodide.FS.mkdirTree(MODELS_ROOT);
    pyodide.FS.writeFile(`${MODELS_ROOT}/manifest.json`, bytes);
  } catch (err) {
    throw new Error(`the shipped models could not be loaded: ${err.message}`);
  }
  const first = useModels(MODELS_ROOT); // forgets demos imported without the models
  const configs = first.toJs();
  first.destroy();
  await Promise.all(configs.map((rel) => copyModelFile(pyodide, rel))); // read on import: copy them now
}

function copyModelFile(pyodide, rel) {
  if (!copied.has(rel)) {
    const copy = fetchOk(new URL(rel, modelsURL)).then((r) => r.arrayBuffer()).then((buffer) => {
      pyodide.FS.writeFile(`${MODELS_ROOT}/${rel}`, new Uint8Array(buffer)); // Python checks its sha256
    });
    copy.catch(() => copied.delete(rel));
    copied.set(rel, copy);
  }
  return copied.get(rel);
}

// Run a Python call (headspace_site.runtime.answer: {json} or {error}); each time it answers that a
// model file is missing (an error of kind missing-model), copy the file and run it again.
async function withModelFiles({ pyodide }, run) {
  for (let copies = 0; ; copies++) {
    const answer = run();
    const missing = answer.error?.kind === "missing-model" && answer.error;
    if (!missing || !modelsURL || copies >= 16) return answer;
    try {
      await copyModelFile(pyodide, missing.path);
    } catch (fetchErr) {
      return { error: error("model-download", { path: missing.path, message: `the model file ${missing.path} could not be downloaded: ${fetchErr.message}` }) };
    }
  }
}

// Import the page's demos; a model file an import reads and does not find is copied and the
// import tried again.
async function importWithModelFiles(booted, modules) {
  for (let copies = 0; copies < 16; copies++) {
    const failed = booted.importDemos(modules);
    if (!failed) return;
    if (failed.kind !== "missing-model") throw new Error(failed.message);
    if (!modelsURL) throw new Error(`model file ${failed.path} is missing`);
    await copyModelFile(booted.pyodide, failed.path);
  }
}

async function fetchOk(url, options) {
  const response = await fetch(url, options);
  if (!response.ok) throw new Error(`${url.pathname || url} answered ${response.status}`);
  return response;
}

function sri(hex) {
  return "sha256-" + btoa(String.fromCharCode(...hex.match(/../g).map((h) => parseInt(h, 16))));
}

// Download the standard library and the wheels while Pyodide itself boots. Each is checked against
// its sha256 in the site lockfile (fetchChecked): the standard library's (the lockfile's "stdlib"
// entry, beside it) by the promise of its bytes this returns, which fails if it does not match, and
// which loadPyodide's own fetch of it is handed; each wheel's by its promise in `wheels` (name ->
// promise of its bytes), which the boot installs. The wheels, needed only once the interpreter runs,
// start when `wheelsAfter` settles (the interpreter's wasm is in): until then they would take
// bandwidth from the download the boot waits for.
const lockfiles = new Map(); // URL -> promise of the site lockfile's JSON
function lockfile(url) {
  if (!lockfiles.has(url)) lockfiles.set(url, fetchOk(url).then((r) => r.json()));
  return lockfiles.get(url);
}

function prefetch(indexURL, lockFileURL, wheelsAfter) {
  const lock = lockfile(lockFileURL);
  lock.then((l) => {
    Object.keys(l.packages).forEach((name) => downloads.pending.add(name));
    forgetOtherDecoded(new Set([new URL("pyodide.asm.wasm", indexURL).href, new URL(l.stdlib.file_name, lockFileURL).href,
      ...Object.values(l.packages).map((pkg) => new URL(pkg.file_name, indexURL).href)]));
  }, () => {});
  const started = Promise.all([lock, wheelsAfter]).then(([l]) => l);
  // One after another, in the order they are installed: on a slow link numpy arrives first and is
  // installed and imported while the two small wheels still arrive (boot), instead of all three
  // arriving together at the end.
  let previous = started;
  const wheels = Object.fromEntries(WHEELS.map((name) => {
    const wheel = previous.then(() => started).then(({ packages }) => fetchChecked(packages[name], indexURL, name));
    previous = wheel.catch(() => {});
    return [name, wheel];
  }));
  Object.values(wheels).forEach((wheel) => wheel.catch(() => {})); // reported when installed
  const stdlib = lock.then(async ({ stdlib }) => {
    try {
      return await fetchChecked(stdlib, lockFileURL, "stdlib");
    } catch (err) {
      throw new Error(`the standard library could not be downloaded or did not match the sha256 in pyodide-lock.json (${err.message})`);
    }
  });
  return { stdlib, wheels };
}

// A lockfile entry's file, checked against its sha256: the xz-compressed copy where the entry names
// one (decoded while it arrives, xz.js), else the file itself (the browser's integrity check).
// Its bytes as sent count towards the progress line. A decoded copy is kept (keptArchive).
async function fetchChecked(entry, base, label) {
  if (entry.xz) {
    const url = new URL(entry.file_name, base).href;
    const kept = await keptArchive(url, entry.sha256);
    if (kept) {
      downloads.pending.delete(label); // nothing sent
      return kept;
    }
    const response = await fetchOk(new URL(entry.xz.file_name, base));
    const bytes = await xzChecked(counted(response, label), { xzSha256: entry.xz.sha256, sha256: entry.sha256 });
    caches.open(DECODED).then((cache) => cache.put(url, new Response(bytes))).catch(() => {});
    return bytes;
  }
  const response = await fetchOk(new URL(entry.file_name, base), { integrity: sri(entry.sha256) });
  return new Uint8Array(await counted(response, label).arrayBuffer());
}

// Write a checked wheel into the interpreter's site-packages and link its shared libraries, as
// Pyodide's loadPackage does (wheel.js says why not with it); Python's import system is then told
// that the folder has new files.
async function install(pyodide, name, wheel) {
  let bytes;
  try {
    bytes = await wheel;
  } catch (err) {
    // A browser reports a failed sha256 (subresource integrity) check as "Failed to fetch".
    throw new Error(`the ${name} package failed to load: ${err.message} (its wheel could not be downloaded or did not match the sha256 in pyodide-lock.json)`);
  }
  try {
    await installWheel(pyodide, bytes);
  } catch (err) {
    throw new Error(`the ${name} package failed to load: ${err.message}`);
  }
}

// Pyodide's loader compiles the interpreter's wasm (most of the runtime) only once pyodide.mjs and
// pyodide.asm.js have downloaded and run. Here the download and compile start at once, and while
// loadPyodide runs, its fetch of that file gets this download and its instantiateStreaming this
// module (the file is fetched once). If the early compile fails, Pyodide's own attempt runs on the
// same response, as it would have (a broken wasm is reported as before). `compiled` settles when
// the module is compiled (or failed): the download is over by then.
function compileEarly(indexURL) {
  const url = new URL("pyodide.asm.wasm", indexURL).href;
  const response = fetch(url).then((r) => {
    // Counted on a clone of its own: compiled from a response the fetch itself made (its clone keeps
    // the address), V8 finds the module it compiled on an earlier visit beside the HTTP cache's entry.
    // (Not sent xz-compressed as the archives are: a module compiled from decoded bytes is compiled
    // again on every visit; decision 0011.)
    drain(counted(r.clone(), "wasm"));
    return r;
  });
  const module = response.then((r) => WebAssembly.compileStreaming(r.clone())).catch(() => null);
  return {
    compiled: module.then(() => {}),
    // `more`: other addresses the loader fetches, each answered once with the promise of a Response.
    handOver(more = {}) {
      const [nativeFetch, nativeInstantiate] = [self.fetch, WebAssembly.instantiateStreaming];
      const answers = new Map([[url, () => response], ...Object.entries(more)]);
      self.fetch = (input, init) => {
        const answer = answers.get(String(input));
        if (!answer) return nativeFetch(input, init);
        answers.delete(String(input));
        return answer();
      };
      WebAssembly.instantiateStreaming = async (source, imports) => {
        const compiled = await module;
        if (!compiled) return nativeInstantiate(source, imports);
        Promise.resolve(source).then((r) => r.body && r.body.cancel(), () => {});
        return { module: compiled, instance: await WebAssembly.instantiate(compiled, imports) };
      };
      return { restore() { self.fetch = nativeFetch; WebAssembly.instantiateStreaming = nativeInstantiate; } };
    },
  };
}

// The archives decoded (xz.js), kept in Cache Storage for a returning reader.
const DECODED = "headspace-runtime-decoded"; // not the service worker's cache (which goes with each build; its sw.js leaves this one alone)

// An archive decoded on an earlier visit, kept under its own address (never fetched itself) so that
// a returning reader neither downloads nor decodes it again (decoding the four took 0.4 to 1 s of
// the worker's boot on every visit, decision 0011), if its bytes still match the lockfile's sha256;
// else undefined, and it is fetched and decoded again.
async function keptArchive(url, sha256) {
  try {
    const cache = await caches.open(DECODED);
    const kept = await cache.match(url);
    if (!kept) return undefined;
    const bytes = new Uint8Array(await kept.arrayBuffer());
    if (await sha256Hex(bytes) === sha256) return bytes;
    await cache.delete(url);
  } catch (err) { /* no Cache Storage here (an opaque origin): fetch and decode it */ }
  return undefined;
}

// Another build's decoded files go once this build's lockfile is known (``keep``: the addresses of
// this runtime's decoded files).
function forgetOtherDecoded(keep) {
  caches.open(DECODED).then(async (cache) => {
    for (const old of await cache.keys()) if (!keep.has(old.url)) await cache.delete(old);
  }).catch(() => {});
}
// The runtime's bytes as they arrive, for the page's progress line ("x of y MB") and its stall
// watch (a slow link is not a failure; no byte for a long time is): the wasm, the standard library
// and the wheels are read through a counter; Pyodide's two scripts count once imported. `pending`
// names the downloads not finished; when none is left, the download is over ("downloaded").
const downloads = { bytes: 0, pending: new Set(["wasm", "stdlib"]), sentAt: 0 };

function counted(response, label) {
  if (!response.body || !response.ok) return response;
  downloads.pending.add(label);
  const counter = new TransformStream({
    transform(chunk, controller) {
      downloads.bytes += chunk.byteLength;
      controller.enqueue(chunk);
      if (performance.now() - downloads.sentAt > 250) tellBytes();
    },
    flush() {
      downloads.pending.delete(label);
      tellBytes();
    },
  });
  return new Response(response.body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
}

async function drain(response) {
  const reader = response.body.getReader();
  while (!(await reader.read()).done);
}

function scriptBytes(url) {
  const entry = performance.getEntriesByName(String(url))[0];
  downloads.bytes += entry ? entry.decodedBodySize || 0 : 0;
}

// A progress message with the bytes so far, to the pages waiting (not kept for late pages: they get
// the steps, each with the bytes at its start, and the next count).
function tellBytes() {
  downloads.sentAt = performance.now();
  const last = bootSteps[bootSteps.length - 1];
  if (!last) return;
  const message = { ...last, ...byteCount() };
  for (const reply of listeners) reply(message);
}
const byteCount = () => ({ bytes: downloads.bytes, downloaded: downloads.pending.size === 0 });

// The boot's steps, for the page's "not live yet" line. Every page waiting for the boot hears each
// step, and a page that joins late hears the steps it missed; "at" is when the step began (ms since
// the epoch), "bytes" the runtime's bytes arrived by then.
const STEPS = ["downloading Python", "starting the interpreter", "loading numpy", "importing the figures"];
const bootSteps = []; // the progress messages of the boot under way
const listeners = new Set(); // the reply functions of pages waiting for it

function stepMessage(step) {
  return { type: "progress", step, of: STEPS.length, what: STEPS[step - 1], at: performance.timeOrigin + performance.now(), ...byteCount() };
}

function progress(step) {
  const message = stepMessage(step);
  bootSteps.push(message);
  for (const reply of listeners) reply(message);
}

// Start the boot once, whoever asks first (a page's head, warm.js, or its "boot"); a failed boot is
// forgotten, so that the next page to ask tries again.
function startBoot(data) {
  if (!python) {
    bootSteps.length = 0;
    python = boot(data);
    python.catch(() => { python = null; });
  }
  return python;
}

// The runtime imported, or the exception that stopped it as one line ("ImportError: ..."), as
// runtime.answer says an exception: never read out of a traceback's text.
const IMPORT_RUNTIME = `
import traceback
try:
    import headspace_site.runtime
    failed = None
except Exception as exc:
    failed = traceback.format_exception_only(exc)[-1].strip()
failed`;

// A reader's File as Python reads it (headspace.safetensors_file's source): a range at a time, so a
// checkpoint larger than the tab's memory is never held whole. FileReaderSync runs only in workers.
let ownModel = null;
function fileSource(file) {
  return {
    name: file.name, size: file.size,
    read: (offset, length) => new Uint8Array(new FileReaderSync().readAsArrayBuffer(file.slice(offset, offset + length))),
  };
}

async function boot({ indexURL, lockFileURL }) {
  Object.assign(downloads, { bytes: 0, pending: new Set(["wasm", "stdlib"]) }); // a boot after a failed one counts again
  progress(1);
  const wasm = compileEarly(indexURL);
  const { stdlib, wheels } = prefetch(indexURL, lockFileURL, wasm.compiled);
  const stdlibChecked = stdlib.then(() => {});
  stdlibChecked.then(() => progress(2), () => {}); // awaited below
  // Pyodide's JavaScript half (a worker's scripts are not compiled off the thread) is loaded by loadPyodide only after pyodide.mjs has run. Imported now, it is
  // downloaded and compiled while the wasm still arrives; loadPyodide then finds it loaded (it
  // sets globalThis._createPyodideModule). If it fails here, loadPyodide's own import reports it.
  const runtimeScript = import(new URL("pyodide.asm.js", indexURL).href).then(() => scriptBytes(new URL("pyodide.asm.js", indexURL)), () => {});
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  scriptBytes(new URL("pyodide.mjs", indexURL));
  await runtimeScript;
  WebAssembly.Memory = CapturingMemory;
  const stdLibURL = new URL("python_stdlib.zip", lockFileURL).href; // beside it, compiled to bytecode
  // The loader's fetch of the standard library gets the checked (and decoded) bytes.
  const handOver = wasm.handOver({ [stdLibURL]: () => stdlib.then((bytes) => new Response(bytes)) });
  let pyodide;
  try {
    // A standard library that fails its check stops the boot at once, with the reason.
    [pyodide] = await Promise.all([loadPyodide({
      indexURL,
      lockFileURL, // the site's own: numpy and headspace, with their sha256
      stdLibURL,
      stdout: () => {},
      stderr: (line) => console.warn("[python]", line),
    }), stdlibChecked]);
  } catch (err) {
    await stdlibChecked; // a standard library that failed its check is the reason, even if the interpreter stopped first
    throw err;
  } finally {
    WebAssembly.Memory = NativeMemory;
    handOver.restore();
  }
  progress(3); // the interpreter runs
  for (const name of WHEELS) {
    await install(pyodide, name, wheels[name]);
    // numpy imported as soon as it is in, while the other wheels may still arrive; if it fails, the
    // runtime's import below fails with it and says why.
    if (name === "numpy") {
      const early = pyodide.toPy({});
      pyodide.runPython(`${FILES_ADDED}\ntry:\n    import numpy\nexcept Exception:\n    pass\n`, { globals: early });
      early.destroy();
    }
  }
  const scope = pyodide.toPy({}); // its own globals: nothing is left in __main__
  pyodide.runPython(FILES_ADDED, { globals: scope });
  const failed = pyodide.runPython(IMPORT_RUNTIME, { globals: scope }); // its exception in one line, said by Python
  scope.destroy();
  if (failed) throw new Error(failed);
  // headspace_site.runtime: call(name, params_json) -> JSON, as in every runtime. The registry reads the
  // models' manifest on import, so it is loaded after the models are in place (ready(), below),
  // and forgotten if they arrive later (a SharedWorker may serve a page without model demos first).
  const runtime = pyodide.pyimport("headspace_site.runtime"); // a PyProxy, kept in this file
  return {
    pyodide, useModels: runtime.use_models,
    // A figure's answer: {json} (the result, as Python wrote it) or {error} (protocol.json's).
    callDemo: (...args) => {
      const out = runtime.answer(...args);
      const [status, json] = out.toJs();
      out.destroy();
      return status === "result" ? { json } : { error: JSON.parse(json) };
    },
    // The Score-your-model page (headspace_site.own_model, imported on its first use): {json} or
    // {error}. The reader's files, with op open, go to Python as sources read a range at a time.
    checkpoint: (op, args, files) => {
      ownModel ||= pyodide.pyimport("headspace_site.own_model");
      const out = ownModel.answer(op, JSON.stringify(args), files ? files.map(fileSource) : undefined);
      const [status, json] = out.toJs();
      out.destroy();
      return status === "result" ? { json } : { error: JSON.parse(json) };
    },
    // The modules of the demos a page places, or (undefined) every demo; the registry stays in Python.
    // Returns the error that stopped the imports (a model file to copy, say), else undefined.
    importDemos: (modules) => {
      const list = modules && pyodide.toPy(modules);
      const failed = list ? runtime.import_demos(list) : runtime.import_demos();
      list?.destroy();
      return failed ? JSON.parse(failed) : undefined;
    },
  };
}


// The modules of the page's demos (the site lockfile maps each name to its module), so that its
// first render waits for no other demo's imports; undefined (every demo) if any name is unknown.
async function demoModules({ lockFileURL, demos }) {
  const map = demos && (await lockfile(lockFileURL)).demos;
  if (!map || !demos.every((name) => name in map)) return undefined;
  return [...new Set(demos.map((name) => map[name]))];
}

// Boot (once) and, if this page needs them, install the models (once); a failure
// is forgotten so that the next page to connect tries again.
async function ready(data, reply) {
  if (data.needsModels) fetchManifest(data.modelsURL); // downloads while Pyodide boots; installed below
  const booting = startBoot(data);
  for (const message of bootSteps) reply(message);
  listeners.add(reply);
  let booted;
  try {
    booted = await booting;
  } finally {
    listeners.delete(reply);
  }
  if (data.needsModels) {
    models ||= installManifest(booted, data.modelsURL);
    models.catch(() => { models = null; });
    await models;
  }
  reply(stepMessage(4));
  const modules = await demoModules(data);
  await importWithModelFiles(booted, modules); // at boot, not in the reader's first call
}

// ---------- figures computed ahead ----------
// While a reader holds a control, the page asks for the figure at each of its other values
// ({type: "ahead", width, items: [{key, name, params}]}, nearest first; an empty list cancels). A
// page's new list replaces its last one: a reader handles one control at a time. They are computed
// one at a time, a call arriving meanwhile answered before the next one, and sent back as
// {type: "ahead", key, json}. A value that fails, or needs a model file not downloaded yet, is
// skipped: the reader's own call reports it, and nothing is downloaded that the reader did not ask for.
const aheadQueues = new Map(); // page (port) -> {items, width, reply}
const yielder = new MessageChannel(); // a task after the messages already waiting (no timer clamp)
let aheadRunning = false;

function queueAhead(data, reply, port) {
  if (data.items.length) aheadQueues.set(port, { items: data.items.slice(), width: data.width, reply });
  else aheadQueues.delete(port);
  if (!aheadRunning && aheadQueues.size) {
    aheadRunning = true;
    yielder.port2.postMessage(null);
  }
}

yielder.port1.onmessage = async () => {
  const booted = python && (await python.catch(() => null));
  const [key, queue] = aheadQueues.entries().next().value || [];
  if (!booted || !queue) {
    aheadRunning = false;
    if (!booted) aheadQueues.clear();
    return;
  }
  const item = queue.items.shift();
  if (!queue.items.length) aheadQueues.delete(key);
  else { aheadQueues.delete(key); aheadQueues.set(key, queue); } // pages take turns
  try {
    const { json } = booted.callDemo(...callArgs(item.name, item.params, queue.width, false));
    if (json) queue.reply({ type: "ahead", key: item.key, json });
  } catch (err) { /* skipped: see above */ }
  yielder.port2.postMessage(null);
};

// headspace_site.runtime.answer's arguments (call's, with refusals as data); a width lays the figure out for the page's drawing width
// (headspace_site.figure.fit), none leaves Python's own layout. ``figure``: whether the answer carries the
// figure's data (plotly's, for a pointer) besides its drawing.
function callArgs(name, params, width, figure) {
  return [name, JSON.stringify(params), ...(width ? [width, figure] : [])];
}

// A loader's error in one line: it says what failed first and then points at Pyodide's docs.
function readable(err) {
  const text = String(err && err.message ? err.message : err).trim();
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l && !/^See https?:/.test(l));
  return lines.join(" ").replace(/[.\s]+$/, "");
}

async function handle(data, reply, port) {
  checked("page_to_worker", data);
  if (data.type === "ahead") {
    queueAhead(data, reply, port);
  } else if (data.type === "warm") {
    startBoot(data); // a failure is reported to the pages that ask for the boot
  } else if (data.type === "boot") {
    const started = performance.now();
    if (SHARED) clients = bootedPorts.add(port).size;
    try {
      await ready(data, reply);
      reply({ type: "ready", ms: performance.now() - started, clients });
    } catch (err) {
      reply({ type: "error", error: error("boot", { message: `Python could not start: ${readable(err)}` }) });
    }
  } else if (data.type === "stats") {
    const booted = python && (await python.catch(() => null));
    reply({ type: "stats", heapBytes: booted && wasmMemory ? wasmMemory.buffer.byteLength : null, clients });
  } else if (data.type === "checkpoint") {
    const booted = python && (await python.catch(() => null));
    if (!booted) return reply({ type: "error", id: data.id, error: error("not-ready", { message: "Python is not ready yet" }) });
    const t0 = performance.now();
    let answer;
    try {
      answer = booted.checkpoint(data.op, data.args, data.files);
    } catch (err) {
      answer = { error: error("python", { message: readable(err) }) };
    }
    if (answer.error) reply({ type: "error", id: data.id, error: answer.error });
    else reply({ type: "checkpoint", id: data.id, json: answer.json, pythonMs: performance.now() - t0 });
  } else if (data.type === "call") {
    const booted = python && (await python.catch(() => null));
    if (!booted) return reply({ type: "error", id: data.id, error: error("not-ready", { message: "Python is not ready yet" }) });
    const t0 = performance.now();
    const answer = await withModelFiles(booted, () => booted.callDemo(...callArgs(data.name, data.params, data.width, data.figure !== false)))
      .catch((err) => ({ error: error("python", { message: readable(err) }) })); // Python gives its own as data: this is the worker's
    if (answer.error) reply({ type: "error", id: data.id, error: answer.error });
    else reply({ type: "result", id: data.id, json: answer.json, pythonMs: performance.now() - t0 });
  }
}

if (SHARED) {
  let ports = 0;
  self.onconnect = (event) => {
    const port = event.ports[0], id = ++ports;
    port.onmessage = ({ data }) => handle(data, (message) => port.postMessage(checked("worker_to_page", message)), id);
  };
} else {
  clients = 1;
  self.onmessage = ({ data }) => handle(data, (message) => postMessage(checked("worker_to_page", message)), 0);
}
