"""The standard library the browser downloads: the modules its Python imports, and a margin.

Why: Pyodide ships every module of CPython's standard library, and a cold article downloads all
of it before Python is live, on a phone's link too. The boot, the wheels and the demos import a
fraction of it; the rest (unittest, multiprocessing, xml, http, pydoc, the codecs of every
encoding, ...) is never read in the browser.

The rule, kept here and nowhere else: a module of Pyodide's standard library ships if

1. it was imported when measured under Pyodide: its boot, installing numpy and headspace as the
   worker does (``site/assets/js/wheel.js``, none of Pyodide's Python installer), importing
   the registry as the worker does, every demo at its defaults and at random valid parameters at
   every drawing width, a rejected parameter and an unknown demo (whose tracebacks Pyodide
   formats), a warning shown and a traceback printed; or
2. an import statement of headspace or of numpy's kept part names it, inside a function too (what
   a reader's values could reach although no measured call did), except in the files ``UNREACHED``
   lists; or
3. it is in ``MARGIN``;

and then every module that those import at their top level (outside any function; not in a branch
Pyodide never takes, ``NEVER``; not the pure-Python fallback of a module built into the
interpreter), and the packages they sit in. A module frozen into the interpreter is read from
there, never from the zip, and is left out. ``MODULES`` lists the result with a reason for each;
``python -m sitebuild.stdlib`` measures again and rewrites it: run it when the package's imports
change. ``vendor.py`` leaves every other module out of the site's ``python_stdlib.zip``, whose
sha256 the site lockfile pins as before.

If a demo imports a module left out, ``tests/pyodide`` fails: it runs every demo under Pyodide
with the site's own standard library, where the import raises ModuleNotFoundError. What remains a
risk is a module imported by a name built at run time (``importlib.import_module(s)``,
``codecs.lookup(s)``); no input of a demo names one, and the codecs a program may name in passing
are in ``MARGIN``.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = HERE / "stdlib_modules.txt"

# Rule 3: kept although nothing measured imports them, for code that names them at run time.
MARGIN = {f"encodings.{name}": "a codec that bytes.decode or open may look up by name"
          for name in ("ascii", "latin_1", "utf_8_sig", "utf_16", "utf_16_le", "utf_16_be", "utf_32",
                       "utf_32_le", "utf_32_be", "unicode_escape", "raw_unicode_escape", "cp1252")}

# Rule 2 does not follow the imports of these files: entry points no demo reaches, whose imports
# (pydoc, urllib.request, http.client, argparse and what they import) would otherwise ship.
UNREACHED = {
    "headspace/cli.py": "the command line (python -m headspace), not run in the browser",
    "numpy/lib/_utils_impl.py": "np.info, np.show_runtime: interactive help (pydoc, pprint)",
    "numpy/lib/_datasource.py": "reading files from URLs and compressed archives (urllib, gzip)",
}

# Conditions false in Pyodide (ast.unparse's spelling): a script's main block, Windows, macOS.
NEVER = {"__name__ == '__main__'", "sys.platform == 'win32'", "os.name == 'nt'", "_os.name == 'nt'",
         "name == 'nt'", "_mswindows", "sys.platform.startswith('win')", "sys.platform == 'darwin'"}
ALWAYS = {"sys.platform != 'win32'"}


@functools.cache
def kept() -> frozenset[str]:
    """The modules that ship (``MODULES``: one ``name  # reason`` a line)."""
    names = (line.split("#", 1)[0].strip() for line in MODULES.read_text().splitlines())
    return frozenset(name for name in names if name)


def drop(name: str, keep: frozenset[str] | None = None) -> bool:
    """Whether the zip entry ``name`` (a path in Pyodide's python_stdlib.zip) is left out: a module
    not kept, a file that is not Python (READMEs, a Windows script), or a folder that holds nothing
    kept (zipimport would import an empty folder as a namespace package, not raise ImportError).

    >>> keep = frozenset({"json", "json.decoder"})
    >>> drop("json/decoder.py", keep), drop("json/__init__.py", keep), drop("json/", keep)
    (False, False, False)
    >>> drop("unittest/case.py", keep), drop("unittest/", keep), drop("site-packages/README.txt", keep)
    (True, True, True)
    """
    keep = kept() if keep is None else keep
    if name.endswith("/"):
        folder = name[:-1].replace("/", ".")
        return not any(k == folder or k.startswith(folder + ".") for k in keep)
    return not name.endswith(".py") or _module(name) not in keep


def rule() -> str:
    """What the drop rule depends on, for the bytecode cache's key."""
    return MODULES.read_text()


def _module(path: str) -> str:
    return path[:-3].replace("/", ".").removesuffix(".__init__")


# ---------- the measurement (python -m sitebuild.stdlib) ----------

def _builtin_only(body: list) -> bool:
    """Whether a try block only imports modules built or frozen into the interpreter (then its
    ``except ImportError`` fallback, a pure-Python copy such as _pydatetime, is never imported)."""
    imports = [n for n in body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in imports if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in imports if isinstance(n, ast.ImportFrom) and not n.level]
    import _imp
    return bool(imports) and len(imports) == len(body) and all(
        n in sys.builtin_module_names or _imp.is_frozen(n) for n in names)


def _named(tree: ast.AST, package: str, top_level: bool, files: dict) -> set[str]:
    """The standard-library modules that the import statements of ``tree`` name (with the packages
    they sit in): all of them, or only those that run when it is imported."""
    out = set()

    def visit(node, in_function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function = True
        if top_level and isinstance(node, ast.If) and ast.unparse(node.test) in NEVER:
            node = ast.Module(body=node.orelse, type_ignores=[])
        elif top_level and isinstance(node, ast.If) and ast.unparse(node.test) in ALWAYS:
            node = ast.Module(body=node.body, type_ignores=[])
        elif top_level and isinstance(node, ast.Try) and _builtin_only(node.body):
            node = ast.Module(body=node.body + node.orelse + node.finalbody, type_ignores=[])
        if not (top_level and in_function):
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                out.add(base)
                out.update(f"{base}.{a.name}" for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(tree, False)
    found = set()
    for name in out:
        parts = name.split(".")
        found.update(".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in files)
    return found


def closure(measured: dict, sources: str, stdlib_zip: str) -> str:
    """Rules 2 and 3 and the closure, given rule 1's ``measured`` {module: reason}; run under
    Pyodide by stdlib.mjs (its ``ast`` parses 3.12's standard library). JSON {module: reason}."""
    import _imp
    stdlib = zipfile.ZipFile(stdlib_zip)
    files = {_module(n): n for n in stdlib.namelist() if n.endswith(".py")}
    reasons = dict(measured)
    for here, _dirs, names in sorted(os.walk(sources)):
        for n in sorted(names):
            rel = os.path.relpath(os.path.join(here, n), sources)
            if not n.endswith(".py") or rel in UNREACHED:
                continue
            package = _module(rel) if n == "__init__.py" else _module(rel).rpartition(".")[0]
            tree = ast.parse(Path(here, n).read_bytes())
            for mod in sorted(_named(tree, package, False, files)):
                reasons.setdefault(mod, f"named by {rel}")
    for mod, why in MARGIN.items():
        reasons.setdefault(mod, f"margin: {why}")
    todo = sorted(reasons)
    while todo:
        mod = todo.pop()
        if mod not in files:
            continue
        package = mod if files[mod].endswith("__init__.py") else mod.rpartition(".")[0]
        deps = _named(ast.parse(stdlib.read(files[mod])), package, True, files)
        parts = mod.split(".")
        parents = {".".join(parts[:i]) for i in range(1, len(parts))}
        for dep in sorted(deps | parents):
            if dep not in reasons:
                reasons[dep] = f"the package of {mod}" if dep in parents else f"imported at the top of {mod}"
                todo.append(dep)
    # Frozen into the interpreter (importlib's bootstrap under another name too): never read from the zip.
    frozen = {name for name, m in sys.modules.items() if getattr(getattr(m, "__spec__", None), "origin", "") == "frozen"}
    return json.dumps({m: reasons[m] for m in sorted(reasons) if m in files and not (_imp.is_frozen(m) or m in frozen)})


def _cases(root: Path, per_demo: int, seed: int) -> list[dict]:
    """Every demo at its defaults and at random valid parameters (the tests' sampler), a rejected
    parameter and an unknown demo."""
    import random
    sys.path.insert(0, str(root / "tests"))
    from support import sample_params
    from headspace.demos import REGISTRY
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
    root = HERE.parents[1]
    contract = json.loads(vendor.CONTRACT.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        sources = Path(tmp) / "sources"
        shutil.copytree(root / "py" / "src" / "headspace", sources / "headspace",
                        ignore=shutil.ignore_patterns("__pycache__", "models"))
        with zipfile.ZipFile(vendor.PYODIDE_OUT / vendor.NUMPY_WHEEL) as z:  # the official wheel: source
            z.extractall(sources, [n for n in z.namelist() if n.endswith(".py") and not vendor.numpy_unused(n)])
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({
            "indexDir": str(vendor.STATIC / contract["pyodide_dir"]), "lockfile": str(vendor.STATIC / contract["lockfile"]),
            "stdlib": str(vendor.NPM / "pyodide" / vendor.STDLIB), "models": str(store.SHIPPED), "sources": str(sources)}))
        proc = subprocess.run(["node", str(HERE / "stdlib.mjs"), str(job)], input=json.dumps(_cases(root, per_demo, seed)),
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
    MODULES.write_text("# The standard-library modules the site ships, and why: scripts/sitebuild/stdlib.py gives the\n"
                       "# rule. Written by `python -m sitebuild.stdlib`; not edited by hand.\n"
                       + "".join(f"{m:{width}}  # {why}\n" for m, why in modules.items()))
    print(f"[stdlib] {len(modules)} modules kept -> {MODULES}", file=sys.stderr)


if __name__ == "__main__":
    main()
