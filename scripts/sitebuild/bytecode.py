"""Python archives (wheels, the standard library's zip) rewritten with bytecode instead of source.

Why: in the browser CPython runs as wasm, and compiling source there is the slowest part of a cold
start (Pyodide's standard library ships as .py; so do the numpy and headspace wheels). Each .py
becomes a sourceless .pyc compiled at build time by Pyodide's own CPython under Node
(``bytecode.mjs``), so the magic number and marshal format are the browser's. A sourceless .pyc
is found by the same importers as source (the zip importer; FileFinder's sourceless loader) and
never checked against a timestamp. Tracebacks keep file names and line numbers, not source lines.

The archives are reproducible (entries in the input's order, fixed dates), so an unchanged input
gives the same bytes and the same sha256; each is cached by its input's hash, the drop rule and
the compiler's own files, so a second build runs no Node.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
COMPILER = HERE / "bytecode.mjs"
FIXED_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Archive:
    """One zip to rewrite: ``prefix`` is where its files live at run time (for code objects'
    file names); ``drop(name)`` leaves an entry out, ``edit(name, source)`` returns a module's
    source (bytes) as compiled, changed or not, and ``rule`` names these choices in the cache key."""

    src: Path
    prefix: str
    drop: Callable[[str], bool] = lambda name: False
    rule: str = ""
    edit: Callable[[str, bytes], bytes] = lambda name, source: source


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def _key(archive: Archive) -> str:
    return _digest(archive.src.read_bytes(), archive.prefix.encode(), archive.rule.encode(),
                   COMPILER.read_bytes(), Path(__file__).read_bytes(), (HERE.parents[1] / "package-lock.json").read_bytes())


def sourceless(archives: list[Archive], cache: Path) -> list[Path]:
    """The rewritten archive of each input (under ``cache``), compiling only the ones not cached."""
    outs = [cache / "bytecode" / _key(a) / a.src.name for a in archives]
    todo = [(a, out) for a, out in zip(archives, outs) if not out.exists()]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            folders = []
            for i, (archive, _) in enumerate(todo):
                folder = Path(tmp) / str(i)
                with zipfile.ZipFile(archive.src) as z:
                    for name in (n for n in z.namelist() if n.endswith(".py") and not archive.drop(n)):
                        path = folder / name
                        path.parent.mkdir(parents=True, exist_ok=True)
                        path.write_bytes(archive.edit(name, z.read(name)))
                folders.append(folder)
            jobs = Path(tmp) / "jobs.json"
            jobs.write_text(json.dumps([[str(f), a.prefix] for f, (a, _) in zip(folders, todo)]))
            subprocess.run(["node", str(COMPILER), str(jobs)], check=True)
            for folder, (archive, out) in zip(folders, todo):
                out.parent.mkdir(parents=True, exist_ok=True)
                part = out.with_suffix(".part")
                _rezip(archive, folder, part)
                part.replace(out)
    return outs


def _rezip(archive: Archive, compiled: Path, out: Path) -> None:
    """Write ``archive`` with each kept .py replaced by its .pyc from ``compiled``; a wheel's
    RECORD is rewritten to list what is really there."""
    record_name, rows = None, []
    with zipfile.ZipFile(archive.src) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        def put(name: str, data: bytes, mode: int) -> None:
            info = zipfile.ZipInfo(name, FIXED_DATE)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_STORED if name.endswith("/") else zipfile.ZIP_DEFLATED
            dst.writestr(info, data)
            if not name.endswith("/"):
                b64 = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                rows.append(f"{name},sha256={b64},{len(data)}")

        for info in src.infolist():
            name = info.filename
            if archive.drop(name):
                continue
            if name.endswith(".dist-info/RECORD"):
                record_name = name
                continue
            mode = (info.external_attr >> 16) or 0o644
            if name.endswith(".py"):
                put(name + "c", (compiled / name).with_suffix(".pyc").read_bytes(), mode)
            else:
                put(name, src.read(info), mode)
        if record_name:
            put(record_name, ("\n".join(rows + [f"{record_name},,"]) + "\n").encode(), 0o644)


def clear(cache: Path) -> None:
    """Forget every compiled archive (the next build compiles again)."""
    shutil.rmtree(cache / "bytecode", ignore_errors=True)


__all__ = ["Archive", "sourceless", "clear"]
