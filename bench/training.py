"""The zoo's training time per model: as recorded when each was trained, and a short run timed now.

Recorded: every model's ``training_curve.json`` holds the seconds its training took. The seeds of a
configuration train side by side as one stacked model (scripts/train_zoo.py), so a model's
``seconds`` is the stack's wall time divided by its seeds; each model records the stack's time and
its seeds as well. Those times were taken on whatever machine and load the training had.

Timed now (``--train-steps N``, when the training venv exists): each configuration of the zoo
trained for N steps from all its seeds, one process, one torch thread, on this machine, so the
rate per step can be compared with the recorded one.

    python bench/training.py [--train-steps 100]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ZOOS = ("zoo",)
TRAIN_PY = Path(os.environ.get("HEADSPACE_CACHE", Path.home() / ".cache" / "headspace")) / "venv-train" / "bin" / "python"


def recorded(zoo: Path) -> dict:
    """Per model: seconds, steps, seconds per 1000 steps, and the stack it trained in."""
    manifest = json.loads((zoo / "manifest.json").read_text())
    out = {}
    for name, entry in manifest["models"].items():
        curve = json.loads((zoo / name / "training_curve.json").read_text())
        steps = curve["training"]["steps"]
        out[name] = {"seconds": curve["seconds"], "steps": steps,
                     "seconds_per_1000_steps": round(1000 * curve["seconds"] / steps, 2),
                     "stack_seconds": curve.get("stack_seconds"), "stack_seeds": curve.get("stack_seeds"),
                     "mechanism": entry.get("mechanism")}
    return out


def timed_now(steps: int) -> dict:
    """Each zoo configuration, all its seeds stacked, ``steps`` steps: wall seconds, per model."""
    if not TRAIN_PY.is_file():
        return {"error": f"no training venv at {TRAIN_PY} (scripts/train_models --zoo creates it)"}
    sys.path.insert(0, str(ROOT / "scripts"))
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'py' / 'src'}:{ROOT / 'scripts'}")
    code = ("import sys; sys.argv=['x']\n"
            "import train_zoo as t\n"
            "print(' '.join(c.family for c in t.CONFIGS))\n")
    families = subprocess.run([str(TRAIN_PY), "-c", code], capture_output=True, text=True, env=env,
                              cwd=ROOT).stdout.split()
    out = {}
    for family in families:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            proc = subprocess.run([str(TRAIN_PY), str(ROOT / "scripts" / "train_zoo.py"), "--only", family,
                                   "--steps", str(steps), "--out", tmp, "--no-mechanisms"],
                                  capture_output=True, text=True, env=env, cwd=ROOT)
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                out[family] = {"error": proc.stderr[-1000:]}
                continue
            curve = json.loads(next(Path(tmp).glob(f"{family}-s*/training_curve.json")).read_text())
        out[family] = {"steps": steps, "stack_seconds": curve.get("stack_seconds"), "stack_seeds": curve.get("stack_seeds"),
                       "seconds_per_model": curve["seconds"],
                       "seconds_per_1000_steps_per_model": round(1000 * curve["seconds"] / steps, 2),
                       "process_seconds": round(wall, 1)}
    return out


def training_bench(train_steps: int = 0) -> dict:
    report = {}
    for z in ZOOS:
        if (ROOT / z / "manifest.json").is_file():
            models = recorded(ROOT / z)
            secs = [m["seconds"] for m in models.values()]
            report[z] = {"models": models, "median_seconds": statistics.median(secs), "total_seconds": round(sum(secs), 1)}
            print(f"training {z}: {len(models)} models, median {statistics.median(secs):.0f} s a model "
                  f"(a stack's wall time over its seeds), total {sum(secs):.0f} s as recorded")
            for name, m in models.items():
                stack = f"  ({m['stack_seeds']} stacked: {m['stack_seconds']:.0f} s)" if m["stack_seconds"] else ""
                print(f"  {name:28s} {m['seconds']:7.1f} s  {m['steps']:6d} steps  {m['seconds_per_1000_steps']:6.1f} s/1000"
                      f"  {m['mechanism'] or ''}{stack}")
    if train_steps:
        report["timed_now"] = timed_now(train_steps)
        for family, r in report["timed_now"].items():
            print(f"  now: {family:24s} " + (r.get("error", "")[-200:] if "error" in r else
                  f"{r['seconds_per_1000_steps_per_model']:6.1f} s/1000 steps a model ({r['stack_seeds']} seeds stacked)"))
    return report


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--train-steps", type=int, default=0, help="also time N steps of each zoo configuration now")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    report = training_bench(args.train_steps)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
