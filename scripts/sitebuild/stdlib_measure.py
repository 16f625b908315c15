"""Measure which standard-library modules the browser's Python needs (rule 1 of ``stdlib.py``, under
Pyodide in Node by ``stdlib.mjs``, then the rest of its rule) and rewrite ``stdlib_modules.txt``.

Its own module, apart from the rule: the measure needs the vendored runtime (``vendor``), and
``vendor`` needs the rule, so one module holding both would import ``vendor`` and be imported by it.

    python -m sitebuild.stdlib_measure     # from scripts/, after a build: run when the imports change
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

from sitebuild import stdlib


def _cases(root: Path, per_demo: int, seed: int) -> list[dict]:
    """Every demo at its defaults and at random valid parameters (the tests' sampler), a rejected
    parameter and an unknown demo."""
    import random

    from headspace_site.demos import REGISTRY
    from headspace_site.figure.registry import sample_params
    rng = random.Random(seed)
    cases = []
    for name, demo in sorted(REGISTRY.items()):
        cases.append({"name": name, "params": {}})
        cases += [{"name": name, "params": sample_params(demo, rng)} for _ in range(per_demo)]
    return cases + REFUSED


# Calls that fail on purpose: a rejected parameter and an unknown demo, whose tracebacks Pyodide formats.
REFUSED = [{"name": "polarizer", "params": {"theta": 400}}, {"name": "nonesuch", "params": {}}]


def measure(per_demo: int = 8, seed: int = 1) -> dict[str, str]:
    """Rule 1 measured under Pyodide in Node (stdlib.mjs) on the vendored runtime, then the rest of
    the rule; {module: reason}."""
    import shutil
    import subprocess
    import tempfile
    from headspace import store
    from sitebuild import vendor
    root = stdlib.HERE.parents[1]
    contract = json.loads(vendor.CONTRACT.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        sources = Path(tmp) / "sources"
        for package in (root / "py" / "src" / "headspace", root / "site" / "py" / "src" / "headspace_site"):
            shutil.copytree(package, sources / package.name, ignore=shutil.ignore_patterns("__pycache__", "models"))
        with zipfile.ZipFile(vendor.PYODIDE_OUT / vendor.NUMPY_WHEEL) as z:  # the official wheel: source
            z.extractall(sources, [n for n in z.namelist() if n.endswith(".py") and not vendor.numpy_unused(n)])
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({
            "indexDir": str(vendor.STATIC / contract["pyodide_dir"]), "lockfile": str(vendor.STATIC / contract["lockfile"]),
            "stdlib": str(vendor.NPM / "pyodide" / vendor.STDLIB), "models": str(store.SHIPPED), "sources": str(sources)}))
        proc = subprocess.run(["node", str(stdlib.HERE / "stdlib.mjs"), str(job)], input=json.dumps(_cases(root, per_demo, seed)),
                              capture_output=True, text=True, cwd=root, check=False)
    if proc.returncode:
        sys.exit(proc.stderr[-3000:])
    out = json.loads(proc.stdout)
    unexpected = [e["message"] for e in out["errors"] if {"name": e["name"], "params": e["params"]} not in REFUSED]
    if unexpected:
        sys.exit(f"a demo failed under Pyodide while measuring: {unexpected[:3]}")
    return out["modules"]


def main() -> None:
    modules = measure()
    width = max(map(len, modules))
    stdlib.MODULES.write_text("# The standard-library modules the site ships, and why: scripts/sitebuild/stdlib.py gives the\n"
                       "# rule. Written by `python -m sitebuild.stdlib_measure`; not edited by hand.\n"
                       + "".join(f"{m:{width}}  # {why}\n" for m, why in modules.items()))
    print(f"[stdlib] {len(modules)} modules kept -> {stdlib.MODULES}", file=sys.stderr)


if __name__ == "__main__":
    main()
