"""The package's imports run one way: no module imports, directly or through others, a module that
imports it back. Read from the source (every ``import`` statement, those inside functions too),
not from ``sys.modules``: an import deferred into a function or a module ``__getattr__`` still
ties two modules in a circle, it only hides it from the interpreter.

Three packages are read as one graph: the library (``headspace``, what researchers install), the
site's Python (``headspace_site``) and the build tools (``sitebuild``). The library imports neither
of the others, and the others reach it only through public names.

A package's ``__init__`` is not an edge of its own modules: ``from . import x`` in
``headspace_site.demos.y`` reaches ``headspace_site.demos.x``, and the package that holds them is imported
first by Python whichever module asks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"headspace": ROOT / "py" / "src" / "headspace",
            "headspace_site": ROOT / "site" / "py" / "src" / "headspace_site",
            "sitebuild": ROOT / "scripts" / "sitebuild"}


def modules(name: str, folder: Path) -> dict[str, Path]:
    """``{dotted module name: file}`` for every .py file of the package."""
    out = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join([name, *parts])] = path
    return out


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``module`` imports, at any depth of its code."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return {m for m in found if m in known and m != module}


def every_module() -> dict[str, Path]:
    return {m: p for name, folder in PACKAGES.items() for m, p in modules(name, folder).items()}


def graph() -> dict[str, set[str]]:
    """Every module of the three packages and the modules of them it imports."""
    known = every_module()
    return {m: imports(m, p, known) for m, p in known.items()}


def private_uses(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """``module``'s uses of another package's private names: ``from a.b import _x``, ``import
    a._b``, or ``b._x`` where ``b`` names a module of another package."""
    own = module.split(".")[0]
    foreign = lambda name: name.split(".")[0] != own and name in known  # noqa: E731
    private = lambda part: part.startswith("_") and not part.startswith("__")  # noqa: E731
    aliases, found = {}, set()
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if foreign(alias.name) and any(map(private, alias.name.split("."))):
                    found.add(alias.name)
                if alias.asname and foreign(alias.name):
                    aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] == own or node.module.split(".")[0] not in PACKAGES:
                continue
            if any(map(private, node.module.split("."))):
                found.add(node.module)
            for alias in node.names:
                if private(alias.name):
                    found.add(f"{node.module}.{alias.name}")
                if f"{node.module}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases and private(node.attr):
            found.add(f"{aliases[node.value.id]}.{node.attr}")
    return found


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected set of more than one module (Tarjan), sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_reader_finds_a_circle_where_there_is_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_relative_and_deferred_imports_are_read():
    edges = graph()
    assert "headspace.composition" in edges["headspace.head_pairs"] or \
        "headspace.head_pairs" in edges["headspace.composition"]          # one way or the other
    assert "headspace_site.demos.polarizer" in edges["headspace_site.demos"]      # from . import polarizer


def test_imports_run_one_way():
    found = circles(graph())
    assert not found, "modules that import each other (move what they share into a module both import): " + \
        "; ".join(" <-> ".join(c) for c in found)


def test_the_library_imports_no_site_code():
    """The wheel researchers install is the library alone: nothing in it reaches the site's
    Python or the build tools."""
    edges = graph()
    found = sorted(f"{m} -> {n}" for m, targets in edges.items() if m.split(".")[0] == "headspace"
                   for n in targets if n.split(".")[0] != "headspace")
    assert found == [], found


def test_other_packages_use_only_public_names():
    """The site and the build read the library (and the build reads the site) through public names
    only, so a private helper can change without breaking the page."""
    known = every_module()
    found = sorted(u for m, p in known.items() for u in private_uses(m, p, known))
    assert found == [], "private names used from another package (make them public or move the code): " + \
        ", ".join(found)


def test_the_private_name_reader_finds_them(tmp_path):
    code = tmp_path / "user.py"
    code.write_text("from headspace import store as s\nfrom headspace.benchmark import _hidden\n"
                    "import headspace.validate\ns._private()\n")
    known = every_module()
    assert private_uses("sitebuild.user", code, known) == {"headspace.benchmark._hidden", "headspace.store._private"}


def test_package_names_load_on_first_use():
    """``headspace``'s public names are imported when first asked for (PEP 562), so that importing
    ``headspace_site.runtime`` for a figure does not import the scoring modules; each name is still
    there for ``from headspace import X``, ``dir()`` and ``__all__``, the same object as in its module."""
    import subprocess
    import sys
    code = ("import sys, headspace_site.runtime; "
            "print(sorted(m for m in ('headspace.causal', 'headspace.composition', 'headspace.model', "
            "'headspace.weights') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
    import importlib

    import headspace
    for name in headspace.__all__:
        assert name in dir(headspace)
        if name != "__version__":
            home = importlib.import_module(f"headspace.{headspace._HOME[name]}")
            assert getattr(headspace, name) is getattr(home, name), name
    from headspace import composition_score, load  # noqa: F401
    with pytest.raises(AttributeError, match="has no attribute 'nonesuch'"):
        headspace.nonesuch  # noqa: B018
