"""Python's share of a slider move: ``headspace_site.runtime.call`` timed inside Pyodide under Node.

For every demo and every control, the control is moved ``--moves`` times from the demo's defaults
(a slider walks its steps as bench/run.py's browser bench moves it, a select cycles its options, a
checkbox toggles, a token box gets new seeded tokens) after a few warm-up moves, and each call's
time is taken around ``runtime.call(name, params_json, width)``, the layout for a drawing ``--width``
px wide and the JSON text it returns included: what the browser's worker spends in Python per move. Prints the median and p95 per control, writes
bench/results/python_calls.json and its row of bench/summary.md; ``--compare`` prints another run's numbers beside them.

    python bench/python_calls.py [--moves 30] [--demos a,b] [--width 700] [--src] [--compare before.json]

``--native`` times the same calls in this Python (numpy's own BLAS, no Pyodide): the quick way to
find which control is slow before measuring it in the page.

``--src`` imports the package from py/src instead of the site's wheel (no rebuild needed); the
site must have been built once (scripts/build) for the Pyodide runtime and lockfile. Run it with
the project's venv (``~/.cache/headspace/venv/bin/python``): its .pth puts this checkout's py/src
and scripts/ on the path, as for every other script.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_SCRIPT = ROOT / "bench" / "python_calls.mjs"
OUT = ROOT / "bench" / "results" / "python_calls.json"


def percentile(values, q: float) -> float:
    """Nearest-rank percentile, as bench/run.py reports the slider's."""
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def moves(param, count: int, rng: random.Random) -> list:
    """``count`` successive values of one control, as a reader's hand produces them."""
    if param.kind in ("range", "number"):
        lo, hi = param.min, param.max
        step = param.step or (hi - lo) / 100
        n = round((hi - lo) / step)
        k = round((param.default - lo) / step)
        out = []
        for i in range(count):  # the walk of bench/run.py's SLIDER_JS: mostly near steps, sometimes far
            k = (k + 1 + (i * 7) % max(1, n - 1)) % (n + 1)
            value = lo + k * step
            out.append(int(round(value)) if isinstance(param.default, int) and float(step).is_integer()
                       else round(value, 10))
        return out
    if param.kind == "select":
        options = list(param.options)
        start = options.index(param.default)
        return [options[(start + 1 + i) % len(options)] for i in range(count)]
    if param.kind == "checkbox":
        return [(not param.default) if i % 2 == 0 else param.default for i in range(count)]
    if param.kind == "tokens":
        lo, hi, most = int(param.min), int(param.max), int(param.shape[0])
        return [" ".join(str(rng.randint(lo, hi)) for _ in range(rng.randint(2, most))) for _ in range(count)]
    if param.kind == "matrix":
        rows, cols = param.shape
        base = [list(map(float, row)) for row in param.default]
        out = []
        for _ in range(count):
            grid = [row[:] for row in base]
            grid[rng.randrange(rows)][rng.randrange(cols)] = round(rng.uniform(-3, 3), 2)
            out.append(grid)
        return out
    raise ValueError(f"param {param.name!r}: no moves for kind {param.kind!r}")


def plan(registry, count: int, warmup: int, only=()) -> list[dict]:
    """One run per demo and control: the parameters of each call, warm-up moves first."""
    runs = []
    for name, demo in registry.items():
        if only and name not in only:
            continue
        for param in demo.params:
            rng = random.Random(f"{name}.{param.name}")
            params = [{param.name: value} for value in moves(param, warmup + count, rng)]
            runs.append({"demo": name, "control": param.name, "warmup": warmup, "params": params})
    return runs


def run_in_pyodide(runs: list[dict], src: bool, width: int) -> dict:
    node = shutil.which("node")
    if not node:
        raise ValueError("node is required (Node 20) to run Pyodide")
    contract_path = ROOT / "site" / "data" / "contract.json"
    if not contract_path.exists():
        raise ValueError(f"{contract_path} is missing: build the site once (scripts/build)")
    contract = json.loads(contract_path.read_text())
    static = ROOT / "site" / "static"
    from headspace import store
    cmd = [node, str(NODE_SCRIPT), str(static / contract["pyodide_dir"]), str(static / contract["lockfile"]),
           str(store.SHIPPED)] + ([str(ROOT / "py" / "src"), str(ROOT / "site" / "py" / "src")] if src else [])
    proc = subprocess.run(cmd, input=json.dumps({"width": width, "runs": runs}), capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"bench/python_calls.mjs failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


def run_natively(runs: list[dict], width: int) -> dict:
    """The calls of ``runs`` in this Python, timed as python_calls.mjs times them in Pyodide."""
    import numpy
    from headspace_site import runtime
    runtime.load()
    results = []
    for r in runs:
        ms, sizes = [], []
        try:
            for i, p in enumerate(r["params"]):
                text = json.dumps(p)
                t0 = time.perf_counter()
                out = runtime.call(r["demo"], text, width, False) if width else runtime.call(r["demo"], text)
                t = (time.perf_counter() - t0) * 1000
                if i >= r["warmup"]:
                    ms.append(t)
                    sizes.append(len(out))
            results.append({"demo": r["demo"], "control": r["control"], "ms": ms, "bytes": sizes})
        except Exception as exc:  # reported per control, as the Pyodide run reports them
            results.append({"demo": r["demo"], "control": r["control"], "error": f"{type(exc).__name__}: {exc}"})
    return {"info": {"python": sys.version.split()[0], "numpy": numpy.__version__, "native": True}, "runs": results}


def summarise(raw: dict) -> dict:
    """Per demo and control: median, p95 and max ms, and the median size of the JSON returned."""
    out = {}
    for r in raw["runs"]:
        entry = out.setdefault(r["demo"], {})
        if "error" in r:
            entry[r["control"]] = {"error": r["error"]}
            continue
        ms = r["ms"]
        entry[r["control"]] = {"moves": len(ms), "p50_ms": round(statistics.median(ms), 3),
                               "p95_ms": round(percentile(ms, 95), 3), "max_ms": round(max(ms), 3),
                               "json_bytes_p50": int(statistics.median(r["bytes"]))}
    return out


def print_table(calls: dict, before: dict | None = None) -> None:
    head = f"{'demo':26s} {'control':14s} {'p50 ms':>8s} {'p95 ms':>8s} {'JSON kB':>8s}"
    print(head + (f"   {'before p50':>10s} {'p95':>7s} {'kB':>7s}" if before else ""))
    for demo, controls in calls.items():
        for control, r in controls.items():
            line = f"{demo:26s} {control:14s} "
            line += r["error"] if "error" in r else \
                f"{r['p50_ms']:8.2f} {r['p95_ms']:8.2f} {r['json_bytes_p50'] / 1000:8.1f}"
            b = (before or {}).get(demo, {}).get(control)
            if b and "error" not in b:
                line += f"   {b['p50_ms']:10.2f} {b['p95_ms']:7.2f} {b['json_bytes_p50'] / 1000:7.1f}"
            print(line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=30, help="timed moves per control")
    parser.add_argument("--warmup", type=int, default=5, help="untimed moves first (model files, caches)")
    parser.add_argument("--demos", default="", help="comma-separated demo names (default: all)")
    parser.add_argument("--src", action="store_true", help="import headspace from py/src, not the site's wheel")
    parser.add_argument("--native", action="store_true", help="time the calls in this Python, not in Pyodide")
    parser.add_argument("--width", type=int, default=700,
                        help="drawing width in px the figure is laid out for (the gallery bench's; 0: no layout)")
    parser.add_argument("--compare", help="a earlier python_calls.json to print beside this run")
    parser.add_argument("--out", default=str(OUT))
    parser.add_argument("--note", default="", help="what this run is for, in its row of bench/summary.md")
    args = parser.parse_args(argv)
    from headspace_site.demos import REGISTRY
    only = [d for d in args.demos.split(",") if d]
    unknown = sorted(set(only) - set(REGISTRY))
    if unknown:
        raise ValueError(f"--demos: unknown demo {unknown[0]!r}; see headspace_site.demos.REGISTRY")
    started = time.time()
    runs = plan(REGISTRY, args.moves, args.warmup, only)
    raw = run_natively(runs, args.width) if args.native else run_in_pyodide(runs, args.src, args.width)
    report = {"when": time.strftime("%Y-%m-%dT%H:%M:%S"), "runtime": raw["info"],
              "source": "native" if args.native else "py/src, site/py/src" if args.src else "site wheels", "width": args.width, "moves": args.moves,
              "warmup": args.warmup, "seconds": round(time.time() - started, 1), "calls": summarise(raw)}
    before = json.loads(Path(args.compare).read_text())["calls"] if args.compare else None
    print_table(report["calls"], before)
    worst = max((r["p50_ms"], d, c) for d, cs in report["calls"].items() for c, r in cs.items() if "error" not in r)
    print(f"slowest control: {worst[1]}.{worst[2]} p50 {worst[0]:.2f} ms (target about 4 ms)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    import summary  # bench/, this script's own folder
    print(f"report written to {out}; its row appended to {summary.append(out.name, report, note=args.note)}")
    return 1 if any("error" in r for cs in report["calls"].values() for r in cs.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
