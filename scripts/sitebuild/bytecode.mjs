// Compile Python sources to bytecode with Pyodide's own CPython (run under Node by bytecode.py),
// so the .pyc magic number and marshal format are exactly the browser's.
//   node bytecode.mjs JOBS_JSON
// JOBS_JSON: [[folder, prefix], ...]. Every foo.py under a folder gets a foo.pyc beside it, whose
// code objects name the file prefix + its path in the folder (where the browser will find it).
import { readFileSync } from "node:fs";
import { loadPyodide } from "pyodide";

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const pyodide = await loadPyodide({ stdout: (line) => console.log(line), stderr: (line) => console.error(line) });
jobs.forEach(([folder], i) => {
  pyodide.FS.mkdirTree(`/job${i}`);
  pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: folder }, `/job${i}`);
});
pyodide.globals.set("prefixes", pyodide.toPy(jobs.map(([, prefix]) => prefix)));
pyodide.runPython(`
import importlib._bootstrap_external as external
import os

for i, prefix in enumerate(prefixes):
    root = f"/job{i}"
    for here, _dirs, files in os.walk(root):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(here, name)
            with open(path, "rb") as f:
                source = f.read()
            code = compile(source, prefix + os.path.relpath(path, root), "exec", dont_inherit=True)
            # Sourceless: nothing to compare a timestamp with, so mtime and size are 0 (reproducible).
            with open(path + "c", "wb") as f:
                f.write(external._code_to_timestamp_pyc(code, 0, 0))
`);
