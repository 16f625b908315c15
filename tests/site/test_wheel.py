"""The wheel a researcher installs: built by scripts/build, installed into a fresh venv outside the
checkout, it runs the README's example, the command line on a shipped model, and loads a checkpoint,
with numpy as its only dependency, and carries none of the site's code. The browser's copy of the
same wheel leaves the models out; the site's own wheel (headspace_site) holds the demos."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOWNLOAD = ROOT / "site" / "static" / "download"
BROWSER = ROOT / "site" / "static" / "pyodide" / "headspace"


def the_wheel(where: Path, name: str = "headspace") -> Path:
    wheels = sorted(where.rglob(f"{name}-*.whl"))
    assert len(wheels) == 1, f"expected one {name} wheel under {where} (run scripts/build); found {wheels}"
    return wheels[0]


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Use the package on your own model", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh venv, outside the checkout, with the wheel and numpy 2.0.2 installed."""
    where = tmp_path_factory.mktemp("clean-venv")
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    pip = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          str(the_wheel(DOWNLOAD)), "numpy==2.0.2"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-2000:]
    return where


def run(venv: Path, *args: str, cwd: Path) -> str:
    proc = subprocess.run([str(venv / "bin" / "python"), *args], capture_output=True, text=True, cwd=cwd,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})   # no PYTHONPATH, no HEADSPACE_MODELS
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_readme_example_runs_from_the_installed_wheel(venv, tmp_path):
    out = run(venv, "-c", "import headspace; print(headspace.__file__)\n" + readme_example(), cwd=tmp_path)
    where, shape_and_max, step = out.splitlines()
    assert where.startswith(str(venv)) and "site-packages" in where     # not this checkout
    assert shape_and_max == "(2, 4, 2, 4) 0.207" and step == "600"


def test_command_line_and_checkpoints_from_the_installed_wheel(venv, tmp_path):
    out = run(venv, "-m", "headspace", "scores", "attn-only-2l", "--mode", "K", "--metric", "frobenius,whitened",
              "--out", "scores.csv", "--top", "3", cwd=tmp_path)
    assert out.splitlines()[0] == "attn-only-2l: K-composition, 3 of 16 pairs, by frobenius"
    assert len((tmp_path / "scores.csv").read_text().splitlines()) == 1 + 16
    out = run(venv, "-m", "headspace", "heads", "attn-only-2l-rms", cwd=tmp_path)
    assert "previous-token" in out and "induction" in out
    out = run(venv, "-c", "from headspace import model, store\n"
                          "print([model.load(n, step=0).step for n in store.list_models()])\n"
                          "print(sorted(model.load_checkpoints('attn-only-2l-rms'))[-1])", cwd=tmp_path)
    assert out.splitlines() == ["[0, 0]", "3000"]


def test_the_library_wheel_carries_no_site_code():
    """Researchers install the library alone: its wheel holds the package ``headspace`` and its
    metadata, nothing of the site's Python."""
    names = zipfile.ZipFile(the_wheel(DOWNLOAD)).namelist()
    assert {n.split("/")[0] for n in names} == {"headspace", "headspace-0.1.0.dist-info"}
    assert not (DOWNLOAD / "headspace_site").exists() and not list(DOWNLOAD.glob("headspace_site*"))


def test_the_registry_imports_from_the_site_wheel(venv, tmp_path):
    """The site's wheel, installed beside the library, holds every figure's function (the
    identity-paradox table included) and reads the library from the venv, not this checkout."""
    site_wheel = the_wheel(BROWSER / plain_folder(), "headspace_site")
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
                          "--disable-pip-version-check", str(site_wheel)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-2000:]
    out = run(venv, "-c", "from headspace_site.demos import REGISTRY\n"
                          "print(len(REGISTRY), REGISTRY['identity-paradox'].run({'d': 1024})['outputs']['svd_bound'])",
              cwd=tmp_path)
    n, svd = out.split()
    assert int(n) >= 14 and svd == "1.0"


def plain_folder() -> str:
    """The folder (under BROWSER) of the plain runtime set: the wheels as source."""
    contract = json.loads((ROOT / "site" / "data" / "contract.json").read_text())
    return Path(contract["plain_lockfile"]).parent.name


def site_runtime() -> tuple[dict, Path]:
    """The site lockfile (what the worker loads) and its folder."""
    contract = json.loads((ROOT / "site" / "data" / "contract.json").read_text())
    lockfile = ROOT / "site" / "static" / contract["lockfile"]
    return json.loads(lockfile.read_text()), lockfile.parent


def test_browser_wheel_is_the_same_package_without_the_models():
    """The plain copy (source) is the package minus the models; the site's copy is that, each
    module compiled to a sourceless .pyc, the data files byte for byte the same."""
    full = zipfile.ZipFile(the_wheel(DOWNLOAD))
    models = {n for n in full.namelist() if n.startswith("headspace/models/")}
    assert {"headspace/models/manifest.json", "headspace/models/attn-only-2l/weights.npz"} <= models
    site_names = zipfile.ZipFile(the_wheel(BROWSER / plain_folder(), "headspace_site")).namelist()
    assert {"headspace_site/demos/identity_table.json", "headspace_site/demos/norm_symmetry_table.json",
            "headspace_site/demos/metric_lab_axioms.json",
            "headspace_site/figure/causal_table.json"} <= set(site_names)
    plain = json.loads((ROOT / "site" / "static" / json.loads((ROOT / "site" / "data" / "contract.json")
                                                              .read_text())["plain_lockfile"]).read_text())
    slim = zipfile.ZipFile(BROWSER / plain["packages"]["headspace"]["file_name"].split("headspace/", 1)[1])
    assert set(slim.namelist()) == set(full.namelist()) - models
    record = next(n for n in slim.namelist() if n.endswith(".dist-info/RECORD"))
    assert "headspace/models/" not in slim.read(record).decode()
    lock, folder = site_runtime()
    compiled = zipfile.ZipFile(folder / Path(lock["packages"]["headspace"]["file_name"]).name)
    as_bytecode = {n + "c" if n.endswith(".py") else n for n in slim.namelist()}
    assert set(compiled.namelist()) == as_bytecode
    for name in slim.namelist():
        if not name.endswith((".py", "RECORD")):
            assert compiled.read(name) == slim.read(name), name


def _record_matches(wheel: zipfile.ZipFile) -> None:
    record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
    rows = {line.split(",")[0]: line for line in wheel.read(record).decode().splitlines()}
    assert set(rows) == set(wheel.namelist()), "RECORD lists exactly the files in the wheel"
    for name in wheel.namelist():
        if name != record:
            digest = base64.urlsafe_b64encode(hashlib.sha256(wheel.read(name)).digest()).rstrip(b"=").decode()
            assert rows[name] == f"{name},sha256={digest},{len(wheel.read(name))}", name


def test_site_lockfile_pins_what_it_serves():
    """Every file the worker loads is listed with its own sha256, numpy's with the official sha256
    of the wheel it was trimmed from; the .pyc files carry Pyodide's CPython 3.12 magic number."""
    lock, folder = site_runtime()
    official = json.loads((ROOT / "node_modules" / "pyodide" / "pyodide-lock.json").read_text())["packages"]["numpy"]
    assert lock["packages"]["numpy"]["upstream_sha256"] == official["sha256"]
    files = [folder / Path(p["file_name"]).name for p in lock["packages"].values()] + [folder / lock["stdlib"]["file_name"]]
    shas = [p["sha256"] for p in lock["packages"].values()] + [lock["stdlib"]["sha256"]]
    for path, sha in zip(files, shas):
        assert path.parent == folder and hashlib.sha256(path.read_bytes()).hexdigest() == sha, path.name
    magic_312 = (3531).to_bytes(2, "little") + b"\r\n"
    for path in files:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            assert not [n for n in names if n.endswith(".py")], f"{path.name} still holds source"
            pycs = [n for n in names if n.endswith(".pyc")]
            assert pycs and all(z.read(n)[:4] == magic_312 for n in pycs[:50]), path.name
            if path.suffix == ".whl":
                _record_matches(z)


def test_site_lockfile_maps_each_demo_to_its_module():
    """The worker imports only a page's demos through this map (headspace_site.runtime.load)."""
    from headspace_site.demos import REGISTRY
    lock, _ = site_runtime()
    assert lock["demos"] == {name: demo.fn.__module__ for name, demo in REGISTRY.items()}


def test_numpy_is_trimmed_to_what_headspace_imports():
    """The shared libraries and subpackages left out are ones no demo imports; the ones the package
    reaches (numpy's core, linalg, random) stay."""
    lock, folder = site_runtime()
    names = zipfile.ZipFile(folder / Path(lock["packages"]["numpy"]["file_name"]).name).namelist()
    libs = {n.split("/")[-1].split(".")[0] for n in names if n.endswith(".so")}
    assert {"_multiarray_umath", "_umath_linalg", "_generator", "_pcg64", "mtrand", "_multiarray_tests"} <= libs
    assert not libs & {"_pocketfft_umath", "lapack_lite", "_simd", "_umath_tests", "_rational_tests"}
    assert not [n for n in names if n.startswith(("numpy/f2py/", "numpy/testing/", "numpy/fft/")) or n.endswith(".pyi")]


def test_use_it_page_example_prints_what_the_page_says(venv, tmp_path):
    """The worked example on /use-it/ runs against the installed wheel and prints exactly the
    outputs its `# ->` comments show."""
    text = (ROOT / "site" / "content" / "use-it.md").read_text()
    code = re.search(r"## A worked example.*?```python\n(.*?)```", text, re.S).group(1)
    expected = [m.group(1).rstrip() for m in re.finditer(r"# -> (.*)", code)]
    assert len(expected) >= 5
    assert run(venv, "-c", code, cwd=tmp_path).splitlines() == expected


def test_standard_library_holds_the_measured_modules():
    """The site's standard library is Pyodide's, compiled, with only the modules stdlib.py keeps (the
    ones measured as imported, and its margin); the modules left out are gone, folders included."""
    from sitebuild import stdlib
    lock, folder = site_runtime()
    names = zipfile.ZipFile(folder / lock["stdlib"]["file_name"]).namelist()
    modules = {n[:-4].replace("/", ".").removesuffix(".__init__") for n in names if n.endswith(".pyc")}
    official = zipfile.ZipFile(ROOT / "node_modules" / "pyodide" / "python_stdlib.zip").namelist()
    assert modules == {n[:-3].replace("/", ".").removesuffix(".__init__") for n in official
                       if n.endswith(".py") and not stdlib.drop(n)}
    assert modules == stdlib.kept()
    # What Pyodide's boot and a traceback need; what no demo imports.
    assert {"_pyodide._base", "pyodide._package_loader", "traceback", "linecache", "json", "zipfile"} <= modules
    assert not modules & {"unittest", "xml", "multiprocessing", "pydoc", "tkinter"}
    assert not [n for n in names if n.startswith(("unittest/", "xml/", "site-packages/"))]


def test_numpy_leaves_out_its_lazily_loaded_namespaces():
    """np.char, np.strings, np.ctypeslib, np.matlib and modules only a user imports by name are not
    in the browser's numpy: no demo reaches them."""
    lock, folder = site_runtime()
    names = zipfile.ZipFile(folder / Path(lock["packages"]["numpy"]["file_name"]).name).namelist()
    gone = ("numpy/char/", "numpy/strings/", "numpy/_core/defchararray", "numpy/ctypeslib", "numpy/matlib",
            "numpy/lib/recfunctions", "numpy/compat/")
    assert not [n for n in names if n.startswith(gone)]
    assert "numpy/random/mtrand.cpython-312-wasm32-emscripten.so" in names  # numpy.random imports it


def test_benchmark_table_ships_and_the_zoo_does_not(venv, tmp_path):
    """The issue: the zoo's weights ship as data the benchmark reads "without making the library's wheel
    heavy": the wheel carries the benchmark's table (``python -m headspace bench`` runs from it) and
    none of zoo/ (weights, evaluation batches, ground truths), which a researcher's own --score needs."""
    names = zipfile.ZipFile(the_wheel(DOWNLOAD)).namelist()
    assert "headspace/models/benchmark.json" in names
    # model folders, eval/, ground truths (the zoo's manifest and README share their names with the models')
    zoo = {p.name for p in (ROOT / "zoo").iterdir()} - {"manifest.json", "README.md"}
    assert len(zoo) > 24
    leaked = [n for n in names if zoo & set(Path(n).parts)]
    assert not leaked, f"zoo/ files in the wheel: {leaked[:5]}"
    out = run(venv, "-m", "headspace", "bench", cwd=tmp_path)
    assert re.match(r"all models \(\d+\), task mode, against mean-circuit", out) and "separated from" in out


def test_plain_lockfile_names_packages_as_pyodide_looks_them_up():
    """Pyodide's loadPackage finds a package by its canonical name (lower case, runs of '-_.' as
    '-'): the plain bench page asks for headspace_site and finds it only under headspace-site."""
    contract = json.loads((ROOT / "site" / "data" / "contract.json").read_text())
    plain = json.loads((ROOT / "site" / "static" / contract["plain_lockfile"]).read_text())
    assert {"numpy", "headspace", "headspace-site"} <= set(plain["packages"])
    for key in plain["packages"]:
        assert key == re.sub(r"[-_.]+", "-", key).lower(), key
