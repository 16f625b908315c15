"""The wheel a researcher installs: built by scripts/build, installed into a fresh venv outside the
checkout, it runs the README's example, the command line on a shipped model, and loads a checkpoint,
with numpy as its only dependency. The browser's copy of the same wheel leaves the models out."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOWNLOAD = ROOT / "site" / "static" / "download"
BROWSER = ROOT / "site" / "static" / "pyodide" / "headspace"


def the_wheel(where: Path) -> Path:
    wheels = sorted(where.rglob("headspace-*.whl"))
    assert len(wheels) == 1, f"expected one headspace wheel under {where} (run scripts/build); found {wheels}"
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


def test_the_registry_imports_from_the_installed_wheel(venv, tmp_path):
    """Every figure's function ships too (the identity-paradox table included)."""
    out = run(venv, "-c", "from headspace.demos import REGISTRY\n"
                          "print(len(REGISTRY), REGISTRY['identity-paradox'].run({'d': 1024})['outputs']['svd_bound'])",
              cwd=tmp_path)
    n, svd = out.split()
    assert int(n) >= 14 and svd == "1.0"


def test_browser_wheel_is_the_same_package_without_the_models():
    full, slim = zipfile.ZipFile(the_wheel(DOWNLOAD)), zipfile.ZipFile(the_wheel(BROWSER))
    models = {n for n in full.namelist() if n.startswith("headspace/models/")}
    assert {"headspace/models/manifest.json", "headspace/models/attn-only-2l/weights.npz"} <= models
    assert "headspace/demos/identity_table.json" in full.namelist()
    assert set(slim.namelist()) == set(full.namelist()) - models
    record = next(n for n in slim.namelist() if n.endswith(".dist-info/RECORD"))
    assert "headspace/models/" not in slim.read(record).decode()


def test_use_it_page_example_prints_what_the_page_says(venv, tmp_path):
    """The worked example on /use-it/ runs against the installed wheel and prints exactly the
    outputs its `# ->` comments show."""
    text = (ROOT / "site" / "content" / "use-it.md").read_text()
    code = re.search(r"## A worked example.*?```python\n(.*?)```", text, re.S).group(1)
    expected = [m.group(1).rstrip() for m in re.finditer(r"# -> (.*)", code)]
    assert len(expected) >= 5
    assert run(venv, "-c", code, cwd=tmp_path).splitlines() == expected
