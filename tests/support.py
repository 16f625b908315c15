"""Small helpers shared by tests: comparing JSON outputs across runtimes, clearing the package's
caches, running code in a fresh interpreter."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

from headspace_site.figure.registry import sample_params  # noqa: F401  (the tests' sampler, shared with the build)

ROOT = Path(__file__).resolve().parent.parent


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


def headspace_caches() -> list:
    """Every functools cache (``lru_cache``, ``cache``) the imported headspace modules hold, found
    through the garbage collector: the module-level ones and those made at import time (the
    verdict caches ``axioms._cached`` wraps each check in)."""
    import functools
    import gc
    return [o for o in gc.get_objects() if isinstance(o, functools._lru_cache_wrapper)
            and str(getattr(o, "__module__", "")).startswith("headspace")]


def clear_caches() -> int:
    """Empty every headspace cache, so the next call computes instead of repeating; how many."""
    caches = headspace_caches()
    for cache in caches:
        cache.cache_clear()
    return len(caches)


def in_fresh_interpreter(code: str, *paths: str, hash_seed: int = 12345) -> str:
    """What ``code`` prints, run by a new interpreter of this venv with another hash seed, importing
    headspace from this checkout (and modules from ``paths``, relative to the checkout)."""
    path = os.pathsep.join(str(ROOT / d) for d in ("py/src", "site/py/src") + paths)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": path})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
