"""Small helpers shared by tests: comparing JSON outputs across runtimes."""

from __future__ import annotations

import math
import random


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


def sample_param(p, rng: random.Random):
    """A value a reader can produce with parameter ``p``'s control (sliders land on steps)."""
    if p.kind == "checkbox":
        return rng.random() < 0.5
    if p.kind == "select":
        return rng.choice(list(p.options))
    if p.kind == "tokens":  # what a reader types: ids, sometimes a repeated span, spaces or commas
        lo, hi, n = int(p.min), int(p.max), rng.randint(2, p.shape[0])
        ids = [rng.randint(lo, hi) for _ in range(n)]
        if n >= 6 and rng.random() < 0.5:
            span = ids[: n // 2]
            ids = span + span
        return rng.choice([" ", ", "]).join(map(str, ids))
    if p.kind == "matrix":
        return [[round(rng.uniform(-5, 5), 3) for _ in range(p.shape[1])] for _ in range(p.shape[0])]
    if p.kind == "range" and p.step:
        k = rng.randint(0, int(round((p.max - p.min) / p.step)))
        return min(p.max, p.min + k * p.step)
    return rng.uniform(p.min, p.max)


def sample_params(demo, rng: random.Random) -> dict:
    return {p.name: sample_param(p, rng) for p in demo.params}
