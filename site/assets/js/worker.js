// The Python side of every demo on a page: Pyodide in a module worker.
//
// It runs as a SharedWorker where the browser has one (one interpreter for
// every page of the site a reader has open, and for every figure a host page
// embeds) or as a dedicated worker; each connected page talks to it through
// its own port. The boundary is narrow (DESIGN.md): a page sends
// {type: "boot"} once and then {type: "call", id, name, params}; the worker
// answers {type: "ready"}, {type: "result", id, json} or {type: "error", id?,
// message}. Only strings and plain objects cross; no PyProxy leaves this file.

const SHARED = typeof SharedWorkerGlobalScope !== "undefined" && self instanceof SharedWorkerGlobalScope;
let python = null; // promise of {pyodide, callDemo}: booted once, whichever page asks first
let models = null; // promise: the shipped models installed in Pyodide's files (once, when a page needs them)
let clients = 0; // pages connected (always 1 for a dedicated worker)

// The registry's declarations (model names, checkpoint steps) are read from the models'
// manifest when headspace.demos is imported, so it is imported after the models are in place,
// and again if they arrive later (a SharedWorker may serve a page without model demos first).
const PY_RUNNER = `
import json
import sys

_registry = None

def import_demos():
    global _registry
    if _registry is None:
        from headspace.demos import REGISTRY
        _registry = REGISTRY

def forget_demos():
    global _registry
    _registry = None
    for key in [k for k in sys.modules if k == "headspace.demos" or k.startswith("headspace.demos.")]:
        del sys.modules[key]

def call_demo(name, params_json):
    import_demos()
    demo = _registry.get(name)
    if demo is None:
        raise ValueError(f"unknown demo {name!r}")
    return json.dumps(demo.run(json.loads(params_json)), separators=(",", ":"))
`;

// Files the demos read (the manifest lists exactly these; the full wheel under /download/ also carries them).
const MODEL_FILES = ["config.json", "weights.npz", "checkpoints.npz", "training_curve.json"];

async function fetchModels(modelsURL) {
  // Download the shipped models while Pyodide boots: [[path, bytes]].
  const text = await (await fetchOk(new URL("manifest.json", modelsURL))).text();
  const files = [["manifest.json", new TextEncoder().encode(text)]];
  for (const [name, model] of Object.entries(JSON.parse(text).models)) {
    for (const file of Object.keys(model.files)) if (MODEL_FILES.includes(file)) files.push([`${name}/${file}`, null]);
  }
  return Promise.all(files.map(async ([rel, bytes]) =>
    [rel, bytes || new Uint8Array(await (await fetchOk(new URL(rel, modelsURL))).arrayBuffer())]));
}

function installModels(pyodide, files) {
  // headspace.model.load() then reads (and sha256-checks) them like local files.
  const root = "/models";
  for (const [rel, bytes] of files) {
    pyodide.FS.mkdirTree(`${root}/${rel}`.split("/").slice(0, -1).join("/"));
    pyodide.FS.writeFile(`${root}/${rel}`, bytes);
  }
  pyodide.runPython(`import os; os.environ["HEADSPACE_MODELS"] = "${root}"`);
}

async function fetchOk(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url.pathname || url} answered ${response.status}`);
  return response;
}

function prefetchWheels(indexURL) {
  // Download the wheels while Pyodide itself boots; loadPackage then finds them
  // in the HTTP cache (they are served immutable) and checks their sha256.
  return fetch(new URL("pyodide-lock.json", indexURL))
    .then((r) => r.json())
    .then((lock) => Promise.all(Object.values(lock.packages).map(
      (pkg) => fetch(new URL(pkg.file_name, indexURL)).then((r) => r.arrayBuffer()))))
    .catch(() => {}); // loadPackage reports any real failure
}

async function boot({ indexURL, modelsURL, needsModels }) {
  prefetchWheels(indexURL);
  if (needsModels) modelsFetch(modelsURL); // downloads while Pyodide boots; installed below
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  const pyodide = await loadPyodide({
    indexURL,
    lockFileURL: new URL("pyodide-lock.json", indexURL).href,
    stdout: () => {},
    stderr: (line) => console.warn("[python]", line),
  });
  // Both wheels are fetched in parallel and checked against the lockfile's sha256.
  const problems = [];
  await pyodide.loadPackage(["numpy", "headspace"], {
    messageCallback: () => {},
    errorCallback: (message) => problems.push(message),
  });
  for (const name of ["numpy", "headspace"]) {
    if (!(name in pyodide.loadedPackages)) {
      const why = problems.join(" ").replace(/The following error occurred while loading \S+:/g, "")
        .replace(/\s+/g, " ").trim() || "unknown error";
      // A browser reports a failed sha256 (subresource integrity) check as "Failed to fetch".
      const hint = /failed to fetch/i.test(why) ? " (its wheel could not be downloaded or did not match the sha256 in pyodide-lock.json)" : "";
      throw new Error(`the ${name} package failed to load: ${why}${hint}`);
    }
  }
  pyodide.runPython(PY_RUNNER);
  const get = (name) => pyodide.globals.get(name); // PyProxies, kept in this file
  return { pyodide, callDemo: get("call_demo"), importDemos: get("import_demos"), forgetDemos: get("forget_demos") };
}

let modelFiles = null;
function modelsFetch(modelsURL) {
  modelFiles ||= fetchModels(modelsURL);
  modelFiles.catch(() => {}); // reported when installed
  return modelFiles;
}

async function installShippedModels({ pyodide, forgetDemos }, modelsURL) {
  try {
    installModels(pyodide, await modelsFetch(modelsURL));
  } catch (err) {
    throw new Error(`the shipped models could not be loaded: ${err.message}`);
  }
  forgetDemos(); // imported without the models? then again, with them
}

// Boot (once) and, if this page needs them, install the models (once); a failure
// is forgotten so that the next page to connect tries again.
async function ready(data) {
  python ||= boot(data);
  python.catch(() => { python = null; });
  const booted = await python;
  if (data.needsModels) {
    models ||= installShippedModels(booted, data.modelsURL);
    models.catch(() => { models = null; });
    await models;
  }
  booted.importDemos(); // at boot, not in the reader's first call
}

function readable(err) {
  // A Python exception's message ends with its last line ("ValueError: ...");
  // a loader error says what failed first and then points at Pyodide's docs.
  const text = String(err && err.message ? err.message : err).trim();
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l && !/^See https?:/.test(l));
  if (err && err.type) return lines[lines.length - 1]; // PythonError
  return lines.join(" ").replace(/[.\s]+$/, "");
}

async function handle(data, reply) {
  if (data.type === "boot") {
    const started = performance.now();
    try {
      await ready(data);
      reply({ type: "ready", ms: performance.now() - started, clients });
    } catch (err) {
      reply({ type: "error", fatal: true, message: `Python could not start: ${readable(err)}` });
    }
  } else if (data.type === "stats") {
    const booted = python && (await python.catch(() => null));
    reply({ type: "stats", heapBytes: booted ? booted.pyodide._module.HEAPU8.length : null, clients });
  } else if (data.type === "call") {
    const booted = python && (await python.catch(() => null));
    if (!booted) {
      reply({ type: "error", id: data.id, message: "Python is not ready yet" });
      return;
    }
    try {
      reply({ type: "result", id: data.id, json: booted.callDemo(data.name, JSON.stringify(data.params)) });
    } catch (err) {
      reply({ type: "error", id: data.id, message: readable(err) });
    }
  }
}

if (SHARED) {
  self.onconnect = (event) => {
    const port = event.ports[0];
    clients += 1;
    port.onmessage = ({ data }) => handle(data, (message) => port.postMessage(message));
  };
} else {
  clients = 1;
  self.onmessage = ({ data }) => handle(data, (message) => postMessage(message));
}
