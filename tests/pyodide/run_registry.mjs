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
// The same entry point as the browser's worker: headspace_site.runtime.answer(name, params_json) -> JSON,
// a refused parameter given back as data ({"error": {"kind": "parameter", "message"}}).
const runtime = pyodide.pyimport("headspace_site.runtime");
// What the polariser's first figure imports, as the worker runs it (bench/run.py's cold load).
runtime.import_demos(pyodide.toPy(["headspace_site.demos.polarizer"]));
runtime.answer("polarizer", JSON.stringify({ theta: 31 }), 600);
const firstFigureModules = pyodide.runPython("import sys; sorted(sys.modules)").toJs();
function run(name, params) {
  try {
    const answer = JSON.parse(runtime.answer(name, JSON.stringify(params)));
    return answer.error ? { error: answer.error.message } : { outputs: answer.outputs };
  } catch (err) {
    const last = String(err.message).trim().split("\n").pop(); // "ValueError: parameter ..."
    if (!last.startsWith("ValueError: ")) throw err;
    return { error: last.slice("ValueError: ".length) };
  }
}
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
// numpy.random's names its browser copy imports on first use (vendor.py), still there when asked for.
info.legacyRandom = JSON.parse(pyodide.runPython(
  'import json, numpy; json.dumps([numpy.random.RandomState(0).rand(), numpy.random.MT19937.__name__, "rand" in dir(numpy.random)])'));
const results = cases.map(({ name, params }) => ({ name, params, ...run(name, params) }));
process.stdout.write(JSON.stringify({ info, results }));
