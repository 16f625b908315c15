"""Answers from the build: every figure's drawing and outputs at each value a reader can reach by
moving one of its controls alone, computed natively at build time.

Why: on a phone the Python runtime (``runtime_bytes`` in site/data/contract.json) takes a minute or
more on a slow link, but a reader
touches a slider within seconds of the page. With these answers the page draws a reader's first
moves at once, before any Python has arrived, and says so ("precomputed for this setting"); a
setting the build did not compute (two controls moved, a typed number) waits for Python.

What is computed, per figure the site shows (each render in site/data/demos.json):

- each slider, select and checkbox that is active at the figure's starting settings, at each of
  its values with every other control at its start. A slider with more than ``MAX_VALUES`` values
  is answered on a coarser grid (a multiple of its step that keeps its starting value on the
  grid); until Python is live the page moves it in those coarser steps (``data-answer-step``).
- each answer at every drawing width (figure.fit.WIDTHS), drawn by the same static SVG drawing the page
  shows before Python (headspace_site.figure.svg), with the outputs and their printed text: the figure a
  reader sees is the build's drawing of exactly that setting.

Drawings, not figure data: a data answer needs plotly.js before the first move is drawn, which
alone fills the budget a phone page has before it responds; a drawing is the page's own SVG, a
few kB (the sizes: docs/decisions/0001-answers-from-the-build.md).

Files: ``site/static/answers/<render id>/<control>/<index>.json``, index counted on the control's
answer grid from its minimum (select: the option's index; checkbox: 0 off, 1 on), each
``{"params", "svg", "outputs", "text"}``. The render id is the first 12 hex digits of the md5 of
the render's key (demo name + Hugo's jsonify of its shortcode parameters), which the demo
shortcode computes the same way. Each render's files are cached by a hash of everything they are
computed from (the package, the drawing code, the render's settings), so an unchanged build copies
them instead of computing them again.

    python -m sitebuild.answers            (scripts/setup runs it after sitebuild.prerender)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sys
import time
from multiprocessing import Pool
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEMOS = ROOT / "site" / "data" / "demos.json"
OUT = ROOT / "site" / "static" / "answers"
CACHE = Path(os.environ.get("HEADSPACE_CACHE", Path.home() / ".cache" / "headspace")) / "answers"

#: The most values of one slider answered from the build; a finer slider moves in coarser steps
#: until Python is live. 37 keeps a 0-180 degree slider at 5 degree steps.
MAX_VALUES = 37
#: The version of the files' format: bumped, every cached answer is computed again.
FORMAT = 1


def render_id(key: str) -> str:
    """The directory of a render's answers, from its key as Hugo writes it.

    >>> render_id('polarizer{}')
    'd50391a0eb69'
    """
    return hashlib.md5(key.encode()).hexdigest()[:12]


def answer_grid(param: dict, start) -> tuple[list, float | None]:
    """(the values of one control answered from the build, the slider's step on that grid or None).

    A slider keeps its own step when it has at most MAX_VALUES values; otherwise the smallest
    multiple of its step with at most MAX_VALUES values on which ``start`` lies (the browser snaps
    a slider's value to its step grid, so the start must be a grid value or the page would move
    it). Values are rounded as the browser reads them (to the step's decimals).

    >>> answer_grid({"kind": "range", "min": 0, "max": 180, "step": 1}, 30)
    ([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 100, 105, 110, 115, 120, 125, 130, 135, 140, 145, 150, 155, 160, 165, 170, 175, 180], 5)
    >>> answer_grid({"kind": "range", "min": 0, "max": 1, "step": 0.25}, 0.5)
    ([0.0, 0.25, 0.5, 0.75, 1.0], 0.25)
    >>> answer_grid({"kind": "select", "options": ["a", "b"]}, "a")
    (['a', 'b'], None)
    >>> answer_grid({"kind": "number", "min": 0, "max": 9}, 1)
    ([], None)
    """
    kind = param["kind"]
    if kind == "select":
        return list(param["options"]), None
    if kind == "checkbox":
        return [False, True], None
    if kind != "range":
        return [], None  # a number box, a token text, a matrix: any value; Python answers
    lo, hi, step = param["min"], param["max"], param.get("step") or 1
    n = int(math.floor((hi - lo) / step + 1e-9)) + 1
    at = round((start - lo) / step)
    k = 1
    if n > MAX_VALUES:
        k = max(1, math.ceil((n - 1) / (MAX_VALUES - 1)))
        while at % k:  # the start must stay on the grid
            k += 1
    decimals = max(0, -math.floor(math.log10(step * k))) + 6 if step * k < 1 else 0
    values = [lo + j * k * step for j in range((n - 1) // k + 1)]
    values = [round(v, decimals) if decimals else (int(round(v)) if float(v).is_integer() else v) for v in values]
    return values, (round(step * k, decimals) if decimals else step * k)


def _source_hash() -> str:
    """What every answer depends on besides its render: the library, the site's Python (demos and
    drawing engine) and this file."""
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    files = sorted((ROOT / "py" / "src" / "headspace").rglob("*")) + sorted((ROOT / "site" / "py" / "src").rglob("*"))
    files += [Path(__file__)]
    for f in files:
        if f.is_file() and "__pycache__" not in f.parts:
            h.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _answer_render(task: tuple) -> tuple[str, int, float]:
    """Compute one render's answers into ``folder`` (a fresh directory). Runs in a pool worker."""
    key, render, declared, folder = task
    from headspace_site.demos import REGISTRY, format_outputs
    from headspace_site.figure.fit import WIDTHS, fit
    from headspace_site.figure.svg import SVG_UID, render as render_svg

    t0 = time.perf_counter()
    demo, start = REGISTRY[key[:key.index("{")]], render["params"]
    folder = Path(folder)
    count = 0
    for p in demo.params:
        spec = declared[p.name]
        if not p.active(start):
            continue  # disabled on the page: a reader cannot move it
        values, _ = answer_grid(spec, start[p.name])
        for index, value in enumerate(values):
            params = {**start, p.name: value}
            out = demo.run(params)
            svg = "".join(render_svg(fit(out["figure"], w), w, uid=f"{SVG_UID}{w}", css_class=f"w{w}")
                          for w in WIDTHS)
            answer = {"params": demo.resolve(params), "svg": svg, "outputs": out["outputs"],
                      "text": format_outputs(out["outputs"])}
            path = folder / p.name / f"{index}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(answer, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
            count += 1
    return key, count, time.perf_counter() - t0


def main() -> int:
    if os.environ.get("HEADSPACE_FAST"):  # scripts/test --fast: its one page moves nothing before Python
        print("[answers] skipped (scripts/test --fast): site/static/answers is as the last full build left it",
              file=sys.stderr)
        return 0
    data = json.loads(DEMOS.read_text())
    source = _source_hash()
    todo, kept = [], []
    OUT.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for key, render in sorted(data["renders"].items()):
        rid = render_id(key)
        wanted.add(rid)
        stamp = hashlib.sha256(f"{source}\n{key}\n{json.dumps(render['params'], sort_keys=True)}".encode()).hexdigest()[:20]
        cached = CACHE / f"{rid}-{stamp}"
        if cached.is_dir():
            kept.append((rid, cached))
            continue
        tmp = CACHE / f"{rid}-{stamp}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        declared = {p["name"]: p for p in data["registry"][key[:key.index("{")]]["params"]}
        todo.append(((key, render, declared, str(tmp)), rid, cached, tmp))
    t0 = time.perf_counter()
    if todo:
        with Pool(min(len(todo), os.cpu_count() or 1)) as pool:
            # the slowest renders first, so that the pool's last task is a short one
            for key, count, seconds in pool.imap_unordered(_answer_render, [t[0] for t in todo]):
                print(f"[answers] {key[:60]}: {count} answers in {seconds:.1f} s", file=sys.stderr)
        for _, rid, cached, tmp in todo:
            tmp.rename(cached)
            kept.append((rid, cached))
    for rid, cached in kept:  # the site's copy: exactly the answers of this build's renders
        dest = OUT / rid
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(cached, dest, copy_function=os.link if _same_device(cached, OUT) else shutil.copy2)
    for old in OUT.iterdir():
        if old.name not in wanted:
            shutil.rmtree(old)
    files = sum(1 for _ in OUT.rglob("*.json"))
    print(f"[answers] {files} answers for {len(kept)} figures ({len(todo)} computed, "
          f"{len(kept) - len(todo)} from the cache) in {time.perf_counter() - t0:.1f} s -> "
          f"{OUT.relative_to(ROOT)}", file=sys.stderr)
    return 0


def _same_device(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


if __name__ == "__main__":
    sys.exit(main())
