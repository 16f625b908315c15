// The Python side of every demo on a page: one module worker running Pyodide.
//
// The boundary is narrow (DESIGN.md): the page sends {type: "boot"} once and
// then {type: "call", id, name, params}; the worker answers {type: "ready"},
// {type: "result", id, json} or {type: "error", id?, message}. Only strings
// and plain objects cross; no PyProxy ever leaves this file.

let callDemo = null; // Python function name, params_json -> result_json (a PyProxy kept here)
let heap = null; // the wasm memory, for the stats message (benchmarks watch it stay flat)

const PY_RUNNER = `
import json
from headspace.demos import REGISTRY

def call_demo(name, params_json):
    demo = REGISTRY.get(name)
    if demo is None:
        raise ValueError(f"unknown demo {name!r}")
    return json.dumps(demo.run(json.loads(params_json)), separators=(",", ":"))
call_demo
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
  const started = performance.now();
  const phases = {}; // ms since the worker started, reported with "ready" for benchmarks
  const mark = (name) => { phases[name] = Math.round(performance.now()); };
  prefetchWheels(indexURL);
  const models = needsModels ? fetchModels(modelsURL) : null;
  if (models) models.catch(() => {}); // awaited below, after Pyodide is up
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  const pyodide = await loadPyodide({
    indexURL,
    lockFileURL: new URL("pyodide-lock.json", indexURL).href,
    stdout: () => {},
    stderr: (line) => console.warn("[python]", line),
  });
  mark("pyodide");
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
  mark("packages");
  if (models) {
    try {
      installModels(pyodide, await models);
    } catch (err) {
      throw new Error(`the shipped models could not be loaded: ${err.message}`);
    }
  }
  callDemo = pyodide.runPython(PY_RUNNER);
  mark("imported");
  heap = () => pyodide._module.HEAPU8.length;
  postMessage({ type: "ready", ms: performance.now() - started, phases });
}

function readable(err) {
  // A Python exception's message ends with its last line ("ValueError: ...");
  // a loader error says what failed first and then points at Pyodide's docs.
  const text = String(err && err.message ? err.message : err).trim();
  const lines = text.split("\n").map((l) => l.trim()).filter((l) => l && !/^See https?:/.test(l));
  if (err && err.type) return lines[lines.length - 1]; // PythonError
  return lines.join(" ").replace(/[.\s]+$/, "");
}

self.onmessage = async ({ data }) => {
  if (data.type === "boot") {
    try {
      await boot(data);
    } catch (err) {
      postMessage({ type: "error", fatal: true, message: `Python could not start: ${readable(err)}` });
    }
  } else if (data.type === "stats") {
    postMessage({ type: "stats", heapBytes: heap ? heap() : null });
  } else if (data.type === "call") {
    if (!callDemo) {
      postMessage({ type: "error", id: data.id, message: "Python is not ready yet" });
      return;
    }
    try {
      const json = callDemo(data.name, JSON.stringify(data.params));
      postMessage({ type: "result", id: data.id, json });
    } catch (err) {
      postMessage({ type: "error", id: data.id, message: readable(err) });
    }
  }
};
