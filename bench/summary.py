"""One row a run: the headline numbers of a bench report, kept in git as bench/summary.md.

The raw JSON reports (bench/results/, ignored by git) are large and each run's own; what decisions
and closing notes rely on is a handful of numbers per run, against the targets in docs/contracts.md.
``scripts/bench`` appends a row after each run; ``python bench/summary.py REPORT.json ...`` appends
rows for reports written another way (bench/phone.py alone, an A/B script), ``--note`` says what the
run was for. Every number is read from the report, never typed.

    python bench/summary.py bench/results/bench.json --note "after issue 48"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUMMARY = ROOT / "bench" / "summary.md"

COLUMNS = [
    ("run", "the report's file name"),
    ("when", "when the run began"),
    ("commit", "the commit measured (a + when the work tree had changes), or for the runs before"
               " this table the commit that added the raw report"),
    ("first Python render", "ours over the plain Pyodide page, cold (target under 0.6)"),
    ("slider p50 / p95", "desktop, the worst control's p50 and the worst control's p95 in ms, each named"
                         " (targets 16 / 33; before issue 51 each demo's first control only)"),
    ("drag", "the slowest drag, repaints a second (target at least 50)"),
    ("phone slider p50 / p95", "4x CPU, the same (targets 33 / 50)"),
    ("heap", "wasm heap growth over the slider moves, kB (target under 1,000)"),
    ("slow 4G first move", "seconds from first paint to the first move drawn, the range over articles"
                           " (target under 2)"),
    ("bytes before it", "MB sent (compressed) before that first move, the largest (target under 0.5)"),
    ("Python live slow / fast 4G", "seconds, the range over the articles that waited for it"
                                   " (targets 60 / 12); 'never' when one ran out of time, '-' when none waited"),
    ("Lighthouse mobile", "the lowest score over the articles, and the highest total blocking time (ms)"),
    ("Python call p50", "Pyodide under Node, the slowest control's p50 ms"),
    ("note", "what the run was for"),
    # added after note, so that the rows before it keep their cells in place
    ("build moves p50 / p95", "before Python is live, every control the build answers: the worst p50 / p95 in ms,"
                              " desktop; phone (issue 51 on)"),
    ("returning Python live", "a second visit with the service worker: ms from navigation to Python live, desktop / 4x CPU"
                              " (targets 500 / 2,000; issue 51 on)"),
]


def _stats(sliders: dict) -> list[tuple[str, dict]]:
    """Each measured control's stats, named ``demo control``: a report of issue 51 on holds
    ``{demo: {control: stats}}``, an older one ``{demo: stats}`` (its first control)."""
    out = []
    for demo, r in (sliders or {}).items():
        if not isinstance(r, dict):
            continue
        if "p50_ms" in r or "error" in r:
            out.append((demo, r))
        else:
            out.extend((f"{demo} {control}", c) for control, c in r.items() if isinstance(c, dict))
    return [(name, r) for name, r in out if r.get("p50_ms") is not None]


def _p50_p95(sliders: dict | None) -> str:
    """The worst p50 and the worst p95 over every control measured, each with the control's name
    when the two are not the same control (never a p95 of one control beside another's p50)."""
    stats = _stats(sliders)
    if not stats:
        return ""
    (n50, r50), (n95, r95) = max(stats, key=lambda x: x[1]["p50_ms"]), max(stats, key=lambda x: x[1]["p95_ms"])
    if n50 == n95:
        return f"{r50['p50_ms']:.1f} / {r95['p95_ms']:.1f} ({n50})"
    return f"{r50['p50_ms']:.1f} ({n50}) / {r95['p95_ms']:.1f} ({n95})"


def _span(values: list[float], digits: int = 1) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}f}" if round(lo, digits) == round(hi, digits) else f"{lo:.{digits}f}-{hi:.{digits}f}"


def _phone(report: dict) -> dict:
    """The phone section's columns from bench/phone.py's report."""
    rows = [(article, link, r) for article, links in report.get("articles", {}).items() for link, r in links.items()
            if isinstance(r, dict) and "error" not in r]
    slow = [r for _, link, r in rows if link == "slow4g"]
    first = [r["first_interactive_after_fcp_ms"] / 1000 for r in slow if r.get("first_interactive_after_fcp_ms") is not None]
    before = [r["bytes_before_first_interactive"]["sent"] / 1e6 for r in slow if r.get("bytes_before_first_interactive")]

    def live(link: str) -> str:
        waited = [r for _, name, r in rows if name == link and r.get("python_waited", True)]
        seconds = [r["python_live_ms"] / 1000 for r in waited if r.get("python_live_ms") is not None]
        never = any(r.get("python_live_ms") is None for r in waited)
        return (_span(seconds) or "") + (" (never on one)" if never and seconds else "never" if never else "")

    never_moved = any(r.get("first_interactive_after_fcp_ms") is None for r in slow)
    return {
        "slow 4G first move": _span(first) + (" (never on one)" if never_moved and first else "never" if never_moved else ""),
        "bytes before it": f"{max(before):.2f}" if before else "",
        "Python live slow / fast 4G": f"{live('slow4g') or '-'} / {live('fast4g') or '-'}",
    }


def _lighthouse(weight: dict) -> str:
    mobile = [a["lighthouse_mobile"] for a in weight.get("articles", {}).values()
              if isinstance(a.get("lighthouse_mobile"), dict) and a["lighthouse_mobile"].get("score") is not None]
    if not mobile:
        return ""
    return f"{min(m['score'] for m in mobile)} (TBT {max(m['tbt_ms'] for m in mobile):.0f} ms)"


def _ratio_over_controls(before: dict, after: dict) -> str:
    """The geometric mean over controls of after's p50 over before's, with a 95% bootstrap over the
    controls (2,000 draws, seeded): one control's noise does not decide it, and a ratio of 1 inside
    the interval says no change this run could see."""
    import math
    import random
    logs = [math.log(a["p50_ms"] / before[d][c]["p50_ms"]) for d, cs in after.items() for c, a in cs.items()
            if "p50_ms" in a and "p50_ms" in before.get(d, {}).get(c, {})]
    if len(logs) < 2:
        return ""
    rng = random.Random(0)
    means = sorted(sum(rng.choice(logs) for _ in logs) / len(logs) for _ in range(2000))
    lo, hi = math.exp(means[49]), math.exp(means[1949])
    return f"p50 after/before over {len(logs)} controls x{math.exp(sum(logs) / len(logs)):.2f} ({lo:.2f}-{hi:.2f})"


def _vs(vs: dict) -> str:
    """A --vs run's before and after, read from its report."""
    cold = vs["cold"]
    b, a = (cold["median"][side]["first_python_render_ms"] for side in ("before", "after"))
    ratios = [y["first_python_render_ms"] / x["first_python_render_ms"] for x, y in zip(cold["runs"]["before"], cold["runs"]["after"])]
    text = (f"--vs {vs.get('before_commit') or vs['before_dir']}: cold first Python render {b / 1000:.2f} s before, {a / 1000:.2f} s after"
            f" (x{a / b:.2f}; round ratios {_span(ratios, 2)}, {len(ratios)} rounds)")
    if "slider" in vs:
        text += (f"; every control, worst p50 / p95 before {_p50_p95(vs['slider']['before'])},"
                 f" after {_p50_p95(vs['slider']['after'])}; "
                 + _ratio_over_controls(vs["slider"]["before"], vs["slider"]["after"]))
    if "phone_slider" in vs:
        text += (f"; 4x phone, worst p50 / p95 before {_p50_p95(vs['phone_slider']['before'])},"
                 f" after {_p50_p95(vs['phone_slider']['after'])}; "
                 + _ratio_over_controls(vs["phone_slider"]["before"], vs["phone_slider"]["after"]))
    return text


def row(name: str, report: dict, commit: str = "", note: str = "") -> dict:
    """The summary's columns for one report of any of the bench's shapes."""
    out = {key: "" for key, _ in COLUMNS}
    out.update(run=name, when=str(report.get("when", ""))[:16].replace("T", " "), commit=commit, note=note)
    if "calls" in report:  # bench/python_calls.py
        p50 = [c["p50_ms"] for controls in report["calls"].values() for c in controls.values()
               if isinstance(c, dict) and c.get("p50_ms") is not None]
        out["Python call p50"] = f"{max(p50):.1f}" if p50 else ""
        return out
    if "articles" in report:  # bench/phone.py alone
        out.update(_phone(report))
        return out
    if "vs" in report:  # scripts/bench --vs: the columns show the after side, the note the before
        out["note"] = "; ".join(filter(None, [note, _vs(report["vs"])]))
    if "runs" in report and "cold" not in report:  # an A/B of two sites' sliders, rounds interleaved
        parts = []
        for kind in sorted({r["kind"] for r in report["runs"]}):
            for site in dict.fromkeys(r["site"] for r in report["runs"] if r["kind"] == kind):
                demos = {f"{i}-{d}": v for i, r in enumerate(report["runs"])
                         if r["kind"] == kind and r["site"] == site for d, v in r["demos"].items()}
                parts.append(f"{kind} {site} {_p50_p95(demos)}")
        out["note"] = "; ".join(filter(None, ["A/B, worst p50 / p95: " + ", ".join(parts), note]))
        return out
    if "machine" not in report and report and all(isinstance(v, dict) and "p50_ms" in v for v in report.values()):
        out["phone slider p50 / p95"] = _p50_p95(report)  # phone sliders alone
        return out
    cold = report.get("cold", {})
    if "first_python_render_ratio" in cold:
        out["first Python render"] = f"{cold['first_python_render_ratio']:.3f}"
    out["slider p50 / p95"] = _p50_p95(report.get("slider"))
    drag = [d["repaints_per_s"] for d in report.get("drag", {}).values() if d.get("repaints_per_s") is not None]
    out["drag"] = f"{min(drag):.1f}" if drag else ""
    out["phone slider p50 / p95"] = _p50_p95(report.get("phone_slider"))
    build = report.get("build_moves") or {}
    if build:
        out["build moves p50 / p95"] = "; ".join(f"{where} {_p50_p95(build[where]) or '-'}"
                                                 for where in ("desktop", "phone") if where in build)
    if "growth_bytes" in report.get("heap", {}):
        out["heap"] = f"{report['heap']['growth_bytes'] / 1000:.0f}"
    if isinstance(report.get("phone"), dict):
        out.update(_phone(report["phone"]))
    out["Lighthouse mobile"] = _lighthouse(report.get("weight", {}))
    back = report.get("returning") or {}
    if back.get("ours_service_worker", {}).get("python_live_ms") is not None:
        out["returning Python live"] = " / ".join(
            f"{back[k]['python_live_ms']:.0f}" if back.get(k, {}).get("python_live_ms") is not None else "-"
            for k in ("ours_service_worker", "ours_service_worker_4x"))
    return out


def head_commit() -> str:
    """The commit the run measured: HEAD, with a + when the work tree differs from it."""
    def git(*args):
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True).stdout.strip()
    commit = git("rev-parse", "--short", "HEAD")
    return commit + ("+" if git("status", "--porcelain", "--untracked-files=no") else "")


def _header() -> str:
    lines = ["# Bench runs, one row each",
             "",
             "Written by `bench/summary.py` (`scripts/bench` appends a row after each run); the raw JSON"
             " reports stay out of git (docs/decisions/0008-bench-results.md says why and where the older"
             " ones are). A blank cell: the run did not measure it.",
             ""]
    lines += [f"- **{key}**: {meaning}" for key, meaning in COLUMNS]
    lines += ["", "| " + " | ".join(key for key, _ in COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    return "\n".join(lines) + "\n"


def append(name: str, report: dict, commit: str | None = None, note: str = "", path: Path = SUMMARY) -> Path:
    """Append one report's row to the summary (written with its header when new)."""
    r = row(name, report, head_commit() if commit is None else commit, note)
    cells = [str(r[key]).replace("|", "/").replace("\n", " ") for key, _ in COLUMNS]
    rows = path.read_text().split(" --- |\n", 1)[1] if path.exists() else ""
    # the header written afresh: a column added since keeps the older rows (their cell is blank)
    path.write_text(_header() + rows + "| " + " | ".join(cells) + " |\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="bench JSON reports")
    parser.add_argument("--note", default="", help="what the run was for")
    parser.add_argument("--commit", help="the commit measured (default: HEAD now)")
    args = parser.parse_args(argv)
    for report in args.reports:
        path = Path(report)
        append(path.name, json.loads(path.read_text()), args.commit, args.note)
    print(f"{len(args.reports)} row(s) appended to {SUMMARY}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
