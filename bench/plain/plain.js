// Baseline for scripts/bench: the same Pyodide, numpy and headspace wheels,
// loaded the naive way on the main thread, then the polariser computed and plotted.
// bench/run.py fills in the paths from site/data/contract.json when it copies this page.
import { loadPyodide } from "/__PYODIDE_DIR__pyodide.mjs";

const pyodide = await loadPyodide({ indexURL: "/__PYODIDE_DIR__", lockFileURL: "/__LOCKFILE__" });
await pyodide.loadPackage(["numpy", "headspace", "headspace_site"]);
const run = pyodide.runPython(`
import json
from headspace_site.demos import REGISTRY
lambda theta: json.dumps(REGISTRY["polarizer"].run({"theta": theta}))
`);
const draw = (theta) => {
  const { figure } = JSON.parse(run(theta));
  return Plotly.react("plot", figure.data, figure.layout);
};
draw(30);
window.plainFirstFigure = performance.now();
document.getElementById("theta").addEventListener("input", (e) => draw(Number(e.target.value)));
