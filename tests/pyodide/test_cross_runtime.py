"""The registry inside Pyodide (Node, the site's own lockfile and wheels) gives
the same outputs as native Python: both run numpy 2.0.2, so any difference is
a bug, not a rounding story (we allow 1e-9 for wasm vs x86 libm)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from headspace import store
from headspace_site.demos import REGISTRY
from support import assert_json_close, sample_params

pytestmark = pytest.mark.pyodide
ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "site" / "static"
CONTRACT = ROOT / "site" / "data" / "contract.json"  # where scripts/sitebuild/vendor.py put the runtime
MODELS = store.SHIPPED


def cases(per_demo: int = 4, seed: int = 7):
    rng = random.Random(seed)
    out = []
    for name, demo in sorted(REGISTRY.items()):
        out.append({"name": name, "params": {}})
        out += [{"name": name, "params": sample_params(demo, rng)} for _ in range(per_demo)]
    out.append({"name": "polarizer", "params": {"theta": float("nan")}})  # errors cross too
    return out


@pytest.fixture(scope="module")
def pyodide_results():
    node = shutil.which("node")
    assert node, "node is required (Node 20)"
    assert CONTRACT.exists(), "run scripts/setup to vendor the runtime"
    contract = json.loads(CONTRACT.read_text())
    index, lockfile = STATIC / contract["pyodide_dir"], STATIC / contract["lockfile"]
    todo = cases()
    payload = json.dumps(todo).replace("NaN", '"NaN"')
    proc = subprocess.run([node, str(ROOT / "tests" / "pyodide" / "run_registry.mjs"), str(index), str(lockfile), str(MODELS)],
                          input=payload, capture_output=True, text=True, cwd=ROOT, timeout=600)
    hint = ("\n(a module the site's trimmed standard library leaves out: measure again with "
            "`python -m sitebuild.stdlib`, scripts/sitebuild/stdlib.py)") if "ModuleNotFoundError" in proc.stderr else ""
    assert proc.returncode == 0, proc.stderr[-3000:] + hint
    return json.loads(proc.stdout)


def test_pyodide_runs_the_pinned_runtime(pyodide_results):
    info = pyodide_results["info"]
    assert info["numpy"] == "2.0.2" and info["python"].startswith("3.12")
    assert info["file"].startswith("/lib/python3.12/site-packages/headspace/")  # the wheel, not the source tree


def test_pyodide_runs_the_sites_trimmed_standard_library(pyodide_results):
    """The demos run on the standard library the site serves (scripts/sitebuild/stdlib.py), which
    leaves out what no demo imports, and formats a Python error's traceback."""
    info = pyodide_results["info"]
    assert info["stdlib"] == {"json": True, "traceback": True, "unittest": False, "xml": False}
    tb = info["traceback"]
    assert tb.startswith("Traceback (most recent call last):"), tb
    assert '/site-packages/headspace_site/figure/registry.py", line ' in tb, tb
    assert tb.rstrip().endswith("ParameterError: Polariser angle θ must be between 0 and 180; got 400"), tb  # a ValueError


def test_same_outputs_as_native(pyodide_results):
    results = pyodide_results["results"]
    assert len(results) == len(cases())
    for case in results:
        name, params = case["name"], case["params"]
        if params.get("theta") == "NaN":
            assert "Polariser angle θ must be a finite number" in case["error"]
            continue
        assert "error" not in case, f"{name} {params}: {case.get('error')}"
        native = REGISTRY[name].run(params)["outputs"]
        assert_json_close(case["outputs"], native, path=f"{name}{params}")


def test_first_figure_imports_only_what_it_draws(pyodide_results):
    """The polariser's first figure, as the worker boots and draws it (bench/run.py's cold load),
    imports neither the package's scoring modules (headspace/__init__ imports its names on first
    use), nor numpy.random (its cloud ships as data), nor the tar and metadata machinery of
    Pyodide's package installer (the worker unpacks the wheels itself); and numpy.random, when a
    seeded demo imports it, brings no legacy API (vendor.py's browser copy of numpy)."""
    imported = set(pyodide_results["info"]["firstFigureModules"])
    assert {"numpy", "headspace_site.runtime", "headspace_site.demos.polarizer"} <= imported
    unneeded = {"headspace.composition", "headspace.causal", "headspace.model", "headspace.weights",
                "numpy.random", "tarfile", "importlib.metadata"}
    assert not unneeded & imported, sorted(unneeded & imported)
    with_random = set(pyodide_results["info"]["randomModules"])
    assert "numpy.random" in with_random
    legacy = {"numpy.random.mtrand", "numpy.random._pickle", "numpy.random._philox", "numpy.random._sfc64"}
    assert not legacy & with_random, sorted(legacy & with_random)


def test_legacy_random_api_still_there_when_asked_for(pyodide_results):
    """numpy.random's legacy names (RandomState, MT19937, rand...) load on first use in the browser's
    numpy, with numpy's own streams."""
    import numpy as np
    value, mt_name, listed = pyodide_results["info"]["legacyRandom"]
    assert value == np.random.RandomState(0).rand() and mt_name == "MT19937" and listed


def test_pythons_errors_in_pyodide_are_those_of_the_protocol(pyodide_results):
    """Every kind of error Python gives the worker (protocol.json, "from": "python") comes out of
    the runtime in Pyodide as data of that kind with exactly that kind's fields."""
    from headspace_site import protocol

    errors = pyodide_results["info"]["errors"]
    assert set(errors) == {k for k, e in protocol.SPEC["errors"].items() if e["from"] == "python"}
    for kind, got in errors.items():
        assert got["status"] == "error" and got["answer"]["kind"] == kind, got
        fields = {k: v for k, v in got["answer"].items() if k != "kind"}
        protocol.check(protocol.SPEC["errors"][kind]["fields"], fields, f"error {kind!r}")
    assert errors["parameter"]["answer"]["parameter"] == "theta"
    assert errors["python"]["answer"]["message"].startswith("ValueError: unknown demo 'nonesuch'")
    assert errors["missing-model"]["answer"]["path"].endswith((".json", ".npz"))
    assert errors["checkpoint"]["answer"]["message"] == "no checkpoint is open: choose one first"
