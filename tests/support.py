"""Small helpers shared by tests: comparing JSON outputs across runtimes."""

from __future__ import annotations

import math


def assert_json_close(got, want, tol: float = 1e-9, path: str = "outputs") -> None:
    """Equal JSON trees, numbers within ``tol`` (relative or absolute): native
    x86 numpy and Pyodide's wasm numpy may differ in the last bits."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k in want:
            assert_json_close(got[k], want[k], tol, f"{path}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_json_close(g, w, tol, f"{path}[{i}]")
    elif isinstance(want, bool) or want is None or isinstance(want, str):
        assert got == want, f"{path}: {got!r} != {want!r}"
    else:
        assert isinstance(got, (int, float)) and not isinstance(got, bool), f"{path}: {got!r} is not a number"
        assert math.isclose(got, want, rel_tol=tol, abs_tol=tol), f"{path}: {got!r} != {want!r}"
