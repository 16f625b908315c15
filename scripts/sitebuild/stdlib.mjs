// Which standard-library modules the browser's Python needs: rule 1 of stdlib.py measured, then
// the rest of its rule (run under Node by `python -m sitebuild.stdlib_measure`).
//   node stdlib.mjs JOB_JSON < cases.json
// JOB_JSON: {indexDir, lockfile, stdlib, models, sources}: Pyodide's folder; the site lockfile
// (numpy trimmed and headspace, as the browser loads them); Pyodide's own standard library, every
// module, as source; the shipped models; a folder with the source of headspace and numpy's kept part.
// cases.json: [{name, params}]. Prints {modules: {name: reason}, errors}.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadPyodide } from "pyodide";
import { FILES_ADDED, WHEELS, installWheel } from "../../site/assets/js/wheel.js";

const job = JSON.parse(readFileSync(process.argv[2], "utf8"));
const cases = JSON.parse(readFileSync(0, "utf8"));
const pyodide = await loadPyodide({ indexURL: job.indexDir + "/", lockFileURL: job.lockfile, stdLibURL: job.stdlib, stdout: () => {} });
const zipModules = () => pyodide.runPython(`
import sys
sorted(k for k, m in list(sys.modules.items())
       if (getattr(getattr(m, "__spec__", None), "origin", None) or "").startswith("/lib/python312.zip/"))
`).toJs();
const reasons = new Map();
const note = (names, why) => names.forEach((name) => reasons.has(name) || reasons.set(name, why));

// What the browser's worker does, in its order (worker.js), then every case at every drawing width.
note(zipModules(), "imported: Pyodide's boot");
const lock = JSON.parse(readFileSync(job.lockfile, "utf8")); // installed as the worker installs them
for (const name of WHEELS) {
  await installWheel(pyodide, new Uint8Array(readFileSync(resolve(job.indexDir, lock.packages[name].file_name))));
}
pyodide.runPython(FILES_ADDED);
note(zipModules(), "imported: installing the wheels");
pyodide.FS.mkdirTree("/models");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: job.models }, "/models");
const runtime = pyodide.pyimport("headspace_site.runtime");
runtime.use_models("/models");
runtime.load(pyodide.toPy(["headspace_site.demos.polarizer"])).destroy();
runtime.load().destroy();
note(zipModules(), "imported: the registry");
const errors = [];
for (const { name, params } of cases) {
  for (const width of [null, 330, 600, 840]) {
    try {
      runtime.call(name, JSON.stringify(params), ...(width ? [width] : []));
    } catch (err) {
      errors.push({ name, params, message: String(err.message).trim().split("\n").pop() }); // formatted by Pyodide: a traceback
    }
  }
}
note(zipModules(), "imported: a demo");
// A warning shown and a traceback printed, as Python prints them to the console.
pyodide.runPython(`
import sys, traceback, warnings
warnings.warn("shown", RuntimeWarning)
try:
    1 / 0
except ZeroDivisionError:
    traceback.print_exc(file=sys.stderr)
`);
note(zipModules(), "imported: a warning or traceback printed");

// The margin, by the rule in stdlib.py (its closure() runs here: its parser is Python 3.12's).
pyodide.FS.mkdirTree("/sources");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: job.sources }, "/sources");
pyodide.FS.mkdirTree("/sitebuild");
pyodide.FS.writeFile("/sitebuild/stdlib.py", readFileSync(new URL("stdlib.py", import.meta.url)));
pyodide.FS.writeFile("/stdlib-under-test.zip", readFileSync(job.stdlib));
const closure = pyodide.runPython("import sys; sys.path.insert(0, '/sitebuild'); import stdlib; stdlib.closure");
const modules = closure(pyodide.toPy(Object.fromEntries(reasons)), "/sources", "/stdlib-under-test.zip");
process.stdout.write(JSON.stringify({ modules: JSON.parse(modules), errors }));
