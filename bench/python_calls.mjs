// Time headspace_site.runtime.call inside Pyodide under Node, as the browser's worker calls it for a move (the
// JSON text back included), with the lockfile and wheels the site serves. Driven by
// bench/python_calls.py. Reads {width, runs: [{demo, control, warmup, params: [...]}]} as JSON
// on stdin (width: the drawing width in px the figure is laid out for, as the page's worker asks;
// 0 or absent: no layout); prints {info, runs: [{demo, control, ms: [...], bytes: [...]} | {..., error}]}.
//   node bench/python_calls.mjs PYODIDE_DIR SITE_LOCKFILE MODELS_DIR [SRC_DIR] < runs.json
// With SRC_DIR (a folder holding the package `headspace/`), the package is imported from there
// instead of the site's wheel: a quick look at a change without rebuilding the site.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { loadPyodide } from "pyodide";

// srcDirs: source folders (the library's and the site's src/) imported instead of the wheels
const [indexDir, lockFile, modelsDir, ...srcDirs] = process.argv.slice(2);
const { runs, width } = JSON.parse(readFileSync(0, "utf8"));

const pyodide = await loadPyodide({
  indexURL: resolve(indexDir) + "/",
  lockFileURL: resolve(lockFile),
  packages: srcDirs.length ? ["numpy"] : ["numpy", "headspace", "headspace_site"],
  stdout: () => {},
});
pyodide.FS.mkdirTree("/models");
pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: resolve(modelsDir) }, "/models");
srcDirs.forEach((dir, i) => {
  pyodide.FS.mkdirTree(`/bench-src/${i}`);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: resolve(dir) }, `/bench-src/${i}`);
});
pyodide.runPython(`
import os, sys
os.environ["HEADSPACE_MODELS"] = "/models"
sys.path[:0] = ${JSON.stringify(srcDirs.map((_, i) => `/bench-src/${i}`))}
`);
const runtime = pyodide.pyimport("headspace_site.runtime");
runtime.load().destroy(); // the worker imports the demos at boot, not in the first call
const info = JSON.parse(pyodide.runPython(
  'import json, sys, numpy, headspace; json.dumps({"python": sys.version.split()[0], "numpy": numpy.__version__, "file": headspace.__file__})'));

const results = [];
for (const { demo, control, warmup, params } of runs) {
  const ms = [], bytes = [];
  try {
    params.forEach((p, i) => {
      const text = JSON.stringify(p);
      const t0 = performance.now();
      const json = width ? runtime.call(demo, text, width, false) : runtime.call(demo, text); // a move: no figure data
      const t = performance.now() - t0;
      if (i >= warmup) { ms.push(t); bytes.push(json.length); }
    });
    results.push({ demo, control, ms, bytes });
  } catch (err) {
    results.push({ demo, control, error: String(err.message).trim().split("\n").pop() });
  }
}
process.stdout.write(JSON.stringify({ info, runs: results }));
