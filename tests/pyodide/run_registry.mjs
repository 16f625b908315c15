// Run headspace demos inside Pyodide under Node, with the same lockfile and
// wheels the site serves. Reads [{name, params}] as JSON on stdin, prints
// [{name, params, outputs} | {name, params, error}] as JSON on stdout.
//   node tests/pyodide/run_registry.mjs PYODIDE_DIR SITE_LOCKFILE [MODELS_DIR] < cases.json
// (the folders site/data/contract.json names, under site/static/)
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { loadPyodide } from "pyodide";
import { FILES_ADDED, WHEELS, installWheel } from "../../site/assets/js/wheel.js";

const indexURL = resolve(process.argv[2]) + "/";
const lockFileURL = resolve(process.argv[3]);
const modelsDir = process.argv[4] ? resolve(process.argv[4]) : null;
const cases = JSON.parse(readFileSync(0, "utf8"));

// The site's standard library (compiled to bytecode) sits beside its lockfile, as the worker finds it.
const stdLib = join(dirname(lockFileURL), "python_stdlib.zip");
const pyodide = await loadPyodide({
  indexURL,
  lockFileURL,
  ...(existsSync(stdLib) ? { stdLibURL: stdLib } : {}),
  stdout: () => {},
});
// The wheels installed as the worker installs them (worker.js, wheel.js): each checked against its
// sha256 in the lockfile, unpacked into site-packages, its shared libraries linked.
const lock = JSON.parse(readFileSync(lockFileURL, "utf8"));
for (const name of WHEELS) {
  const pkg = lock.packages[name];
  const bytes = readFileSync(resolve(indexURL, pkg.file_name));
  if (createHash("sha256").update(bytes).digest("hex") !== pkg.sha256) throw new Error(`${name}: sha256 mismatch`);
  await installWheel(pyodide, new Uint8Array(bytes));
}
pyodide.runPython(FILES_ADDED);
if (modelsDir && existsSync(modelsDir)) {
  pyodide.FS.mkdirTree("/models");
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: modelsDir }, "/models");
  pyodide.runPython('import os; os.environ["HEADSPACE_MODELS"] = "/models"');
}
// The same entry point as the browser's worker: headspace_site.runtime.answer(name, params_json)
// -> ("result", json) or ("error", json of an error of protocol.json), every failure given as data.
const runtime = pyodide.pyimport("headspace_site.runtime");
// What the polariser's first figure imports, as the worker runs it (bench/run.py's cold load).
runtime.import_demos(pyodide.toPy(["headspace_site.demos.polarizer"]));
answer("polarizer", { theta: 31 }, 600);
const firstFigureModules = pyodide.runPython("import sys; sorted(sys.modules)").toJs();
// numpy.random as a seeded demo imports it (the first figure no longer does): what comes with it.
const randomModules = pyodide.runPython("import sys, numpy.random; sorted(sys.modules)").toJs();
function answer(name, params, ...rest) {
  const out = runtime.answer(name, JSON.stringify(params), ...rest);
  const [status, json] = out.toJs();
  out.destroy();
  return { status, answer: JSON.parse(json) };
}
function run(name, params) {
  const { status, answer: out } = answer(name, params);
  return status === "result" ? { outputs: out.outputs } : { error: out.message, errorKind: out.kind };
}
// Python's errors as the worker receives them, one of each kind Python gives, for the test to
// check against protocol.json.
const errors = {
  parameter: answer("polarizer", { theta: 400 }),
  python: answer("nonesuch", {}),
  // the Score-your-model page's op before any checkpoint is open: refused as kind checkpoint
  checkpoint: (() => {
    const out = pyodide.pyimport("headspace_site.own_model").answer("step", "{}");
    const [status, json] = out.toJs();
    out.destroy();
    return { status, answer: JSON.parse(json) };
  })(),
  // a store with the manifest and none of its files: a model demo's call reads its weights
  ...(modelsDir && existsSync(modelsDir) ? { "missing-model": (() => {
    pyodide.FS.mkdirTree("/partial");
    pyodide.FS.writeFile("/partial/manifest.json", pyodide.FS.readFile("/models/manifest.json"));
    runtime.use_models("/partial").destroy();
    try { return answer("composition-scores", {}); } // its weights are read per models directory
    finally { runtime.use_models("/models").destroy(); }
  })() } : {}),
};
const info = JSON.parse(pyodide.runPython(
  'import json, sys, numpy, headspace; json.dumps({"python": sys.version.split()[0], "numpy": numpy.__version__, "file": headspace.__file__})'));
// The standard library it runs on (the site's is trimmed: stdlib.py), and a traceback as Pyodide
// formats a Python error for the page.
info.stdlib = JSON.parse(pyodide.runPython(
  'import importlib.util, json; json.dumps({m: importlib.util.find_spec(m) is not None for m in ["json", "traceback", "unittest", "xml"]})'));
try {
  runtime.call("polarizer", JSON.stringify({ theta: 400 }));
} catch (err) {
  info.traceback = String(err.message);
}
info.firstFigureModules = firstFigureModules;
info.randomModules = randomModules;
info.errors = errors;
// numpy.random's names its browser copy imports on first use (vendor.py), still there when asked for.
info.legacyRandom = JSON.parse(pyodide.runPython(
  'import json, numpy; json.dumps([numpy.random.RandomState(0).rand(), numpy.random.MT19937.__name__, "rand" in dir(numpy.random)])'));
const results = cases.map(({ name, params }) => ({ name, params, ...run(name, params) }));
process.stdout.write(JSON.stringify({ info, results }));
