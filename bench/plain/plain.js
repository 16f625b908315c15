// Baseline for scripts/bench: the same Pyodide, numpy and headspace wheels,
// loaded the naive way on the main thread, then the polariser computed and plotted.
import { loadPyodide } from "/pyodide/0.27.7/pyodide.mjs";

const pyodide = await loadPyodide({ indexURL: "/pyodide/0.27.7/", lockFileURL: "/pyodide/0.27.7/pyodide-lock.json" });
await pyodide.loadPackage(["numpy", "headspace"]);
const run = pyodide.runPython(`
import json
from headspace.demos import REGISTRY
lambda theta: json.dumps(REGISTRY["polarizer"].run({"theta": theta}))
`);
const draw = (theta) => {
  const { figure } = JSON.parse(run(theta));
  return Plotly.react("plot", figure.data, figure.layout);
};
draw(30);
window.plainFirstFigure = performance.now();
document.getElementById("theta").addEventListener("input", (e) => draw(Number(e.target.value)));
