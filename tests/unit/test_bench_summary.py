"""bench/summary.py: a bench report's headline numbers, one row a run in bench/summary.md."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "bench" / "summary.py")
summary = importlib.util.module_from_spec(spec)
spec.loader.exec_module(summary)


def _phone_row(after_fcp_ms, live_ms, sent):
    return {"first_interactive_after_fcp_ms": after_fcp_ms, "python_live_ms": live_ms, "python_waited": True,
            "bytes_before_first_interactive": {"sent": sent, "raw": 2 * sent}}


def test_a_full_report_gives_the_worst_demo_and_the_range_over_articles():
    report = {
        "when": "2026-11-28T02:57:47", "machine": {"cpus": 2},
        "cold": {"first_python_render_ratio": 0.5571},
        "slider": {"a": {"p50_ms": 10.0, "p95_ms": 16.9}, "b": {"p50_ms": 11.4, "p95_ms": 15.0}, "c": {"error": "x"}},
        "drag": {"a": {"repaints_per_s": 59.8}, "b": {"repaints_per_s": 61.0}},
        "heap": {"growth_bytes": 4096},
        "phone": {"articles": {
            "one": {"slow4g": _phone_row(400, 39_000, 220_000), "fast4g": _phone_row(100, 8_000, 1)},
            "two": {"slow4g": _phone_row(1000, 40_300, 100_000), "fast4g": _phone_row(100, 9_300, 1)}}},
        "weight": {"articles": {"one": {"lighthouse_mobile": {"score": 97, "tbt_ms": 123}},
                                "two": {"lighthouse_mobile": {"score": 99, "tbt_ms": 30}}}},
    }
    r = summary.row("bench.json", report, "abc1234", "a note")
    assert r["when"] == "2026-11-28 02:57"
    assert r["first Python render"] == "0.557"
    # each column's worst, each named, the demo in error left out (a report before issue 51: one control a demo)
    assert r["slider p50 / p95"] == "11.4 (b) / 16.9 (a)"
    assert r["drag"] == "59.8"
    assert r["heap"] == "4"
    assert r["slow 4G first move"] == "0.4-1.0"
    assert r["bytes before it"] == "0.22"
    assert r["Python live slow / fast 4G"] == "39.0-40.3 / 8.0-9.3"
    assert r["Lighthouse mobile"] == "97 (TBT 123 ms)"
    assert r["phone slider p50 / p95"] == ""  # not measured: a blank cell


def test_python_never_live_says_never(tmp_path):
    report = {"when": "x", "articles": {"one": {"slow4g": _phone_row(None, None, 5)}}}
    r = summary.row("phone.json", report)
    assert r["slow 4G first move"] == "never"
    assert r["Python live slow / fast 4G"] == "never / -"
    path = tmp_path / "summary.md"
    summary.append("phone.json", report, commit="abc1234", path=path)
    summary.append("phone.json", report, commit="abc1234", path=path)
    lines = path.read_text().splitlines()
    assert lines[0] == "# Bench runs, one row each"
    assert sum(line.startswith("| phone.json |") for line in lines) == 2  # appended, header written once


def test_every_control_counts_and_the_worst_is_named():
    """Issue 51: {demo: {control: stats}}; a p95 is never set beside another control's p50 unnamed,
    and the build's answers get their own column, desktop and phone."""
    controls = {"norm-symmetry": {"seed": {"p50_ms": 9.0, "p95_ms": 900.0, "max_ms": 1700.0},
                                  "stretch": {"kind": "select", "skipped": "inactive"}},
                "polarizer": {"theta": {"p50_ms": 12.0, "p95_ms": 20.0, "max_ms": 25.0}}}
    one = {"p": {"theta": {"p50_ms": 30.0, "p95_ms": 40.0, "max_ms": 41.0}}}
    report = {"when": "x", "machine": {}, "slider": controls, "phone_slider": one,
              "build_moves": {"desktop": one, "phone": {"p": {"theta": {"p50_ms": 5.0, "p95_ms": 6.0}}}},
              "returning": {"ours_service_worker": {"python_live_ms": 1090.4}, "ours_service_worker_4x": {"python_live_ms": 2510}}}
    r = summary.row("bench.json", report)
    assert r["slider p50 / p95"] == "12.0 (polarizer theta) / 900.0 (norm-symmetry seed)"
    assert r["phone slider p50 / p95"] == "30.0 / 40.0 (p theta)"
    assert r["build moves p50 / p95"] == "desktop 30.0 / 40.0 (p theta); phone 5.0 / 6.0 (p theta)"
    assert r["returning Python live"] == "1090 / 2510"


def test_a_new_column_rewrites_the_header_and_keeps_the_rows(tmp_path):
    path = tmp_path / "summary.md"
    old = summary._header().replace(" build moves p50 / p95 | returning Python live |", "").replace(
        " --- | --- | --- |\n", " --- |\n", 1)
    path.write_text(old + "| old.json | then |\n")
    summary.append("new.json", {"when": "x", "articles": {}}, commit="abc1234", path=path)
    text = path.read_text()
    assert text.startswith(summary._header()) and "| old.json | then |\n| new.json |" in text


def test_a_side_by_side_run_says_before_and_after_and_whether_the_ratio_holds_one():
    """scripts/bench --vs: the note reads both sides from the report; the ratio over controls has
    an interval, and controls measured on one side only are left out of it."""
    def cold(ms):
        return {"first_python_render_ms": ms}
    same = {"a": {"x": {"p50_ms": 10.0, "p95_ms": 20.0}, "y": {"p50_ms": 20.0, "p95_ms": 30.0}},
            "b": {"z": {"p50_ms": 12.0, "p95_ms": 22.0}, "gone": {"skipped": "inactive"}}}
    twice = {d: {c: ({"p50_ms": 2 * v["p50_ms"], "p95_ms": 2 * v["p95_ms"]} if "p50_ms" in v else v)
                 for c, v in cs.items()} for d, cs in same.items()}
    vs = {"before_dir": "before/site/public", "before_commit": "abc1234",
          "cold": {"runs": {"before": [cold(1000), cold(2000)], "after": [cold(1500), cold(2000)]},
                   "median": {"before": cold(1500), "after": cold(1750)}},
          "slider": {"before": same, "after": twice}}
    note = summary.row("vs.json", {"when": "x", "vs": vs}, "def5678", "why")["note"]
    assert note.startswith("why; --vs abc1234: cold first Python render 1.50 s before, 1.75 s after (x1.17;"
                           " round ratios 1.00-1.50, 2 rounds)")
    assert note.endswith("p50 after/before over 3 controls x2.00 (2.00-2.00)")
    vs["slider"]["after"] = same
    assert summary.row("vs.json", {"when": "x", "vs": vs})["note"].endswith("over 3 controls x1.00 (1.00-1.00)")
