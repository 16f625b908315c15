// Run headspace demos inside Pyodide under Node, with the same lockfile and
// wheels the site serves. Reads [{name, params}] as JSON on stdin, prints
// [{name, params, outputs} | {name, params, error}] as JSON on stdout.
//   node tests/pyodide/run_registry.mjs site/static/pyodide/0.27.7/ [models dir] < cases.json
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadPyodide } from "pyodide";

const indexURL = resolve(process.argv[2]) + "/";
const modelsDir = process.argv[3] ? resolve(process.argv[3]) : null;
const cases = JSON.parse(readFileSync(0, "utf8"));

const pyodide = await loadPyodide({
  indexURL,
  lockFileURL: indexURL + "pyodide-lock.json",
  packages: ["numpy", "headspace"],
  stdout: () => {},
});
if (modelsDir && existsSync(modelsDir)) {
  pyodide.FS.mkdirTree("/models");
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: modelsDir }, "/models");
  pyodide.runPython('import os; os.environ["HEADSPACE_MODELS"] = "/models"');
}
const run = pyodide.runPython(`
import json, numpy, headspace
from headspace.demos import REGISTRY
def run(name, params_json):
    try:
        return json.dumps({"outputs": REGISTRY[name].run(json.loads(params_json))["outputs"]})
    except ValueError as exc:
        return json.dumps({"error": str(exc)})
run
`);
const info = JSON.parse(pyodide.runPython(
  'import json, sys, numpy, headspace; json.dumps({"python": sys.version.split()[0], "numpy": numpy.__version__, "file": headspace.__file__})'));
const results = cases.map(({ name, params }) => ({ name, params, ...JSON.parse(run(name, JSON.stringify(params))) }));
process.stdout.write(JSON.stringify({ info, results }));
