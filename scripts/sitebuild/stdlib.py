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
``python -m sitebuild.stdlib_measure`` measures again and rewrites it: run it when the package's imports
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


# ---------- rules 2 and 3, run under Pyodide by stdlib.mjs (python -m sitebuild.stdlib_measure) ----------

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
