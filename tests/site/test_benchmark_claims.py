"""The claims "Which composition score should you trust?" makes in words, checked against the data.

Each test names the sentence it guards. The numbers the sentences print come from the build
(scripts/sitebuild/values/benchmark.py, from the shipped scorecard report and the zoo); these tests
recompute what the words say from the same report (headspace.scorecard.read_report) or read the
build's values. When a new zoo or a new bootstrap changes a conclusion, the test fails and says
which sentence to rewrite. No test here compares two estimates unless the sentence does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "site" / "data" / "values.json"
ALPHA = 0.05
COMPARED = ("spearman", "auroc", "top1", "precision_at_k")


@pytest.fixture(scope="module")
def v() -> dict:
    if not VALUES.is_file():
        pytest.fail(f"{VALUES} is missing: run scripts/build first")
    return json.loads(VALUES.read_text(encoding="utf-8"))["benchmark"]


@pytest.fixture(scope="module")
def report() -> dict:
    from headspace.scorecard import read_report
    return read_report()


def rows(card: dict) -> list[dict]:
    return [dict(zip(card["comparison_fields"], c)) for c in card["comparisons"]]


def holds(r: dict) -> bool:
    return r["p_holm"] is not None and r["p_holm"] < ALPHA


def overlap(v: dict, a: str, b: str) -> bool:
    return v[f"{a}_lo"] <= v[f"{b}_hi"] and v[f"{b}_lo"] <= v[f"{a}_hi"]


def test_no_difference_from_size_survives_holm(report):
    """Results: "after Holm's correction no score differs from either size score on any of the four
    statistics"; What to use: "no score ranks or shortlists pairs better or worse than the size
    baselines on the main ground truth"; Thresholds: "in the default setting none of their leads
    survives Holm"."""
    card = report["scorecards"]["mean-circuit|task"]
    held = [r for r in rows(card) if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert held == [], held


def test_path_size_has_the_highest_spearman_estimate(report):
    """Results: "Path size has the highest Spearman estimate" (the point estimate on all the data)."""
    rho = report["scorecards"]["mean-circuit|task"]["stats"]["spearman"]
    assert max(rho, key=lambda s: rho[s][0]) == "product_norm"


def test_normalised_scores_carry_something_beyond_head_sizes(report):
    """Results: "Partialling out head sizes leaves a correlation ... for N of the M scores that are not
    sizes, each above zero after Holm; the exception is the token diagonal, whose interval reaches
    zero"; What to use: "Every normalised score here but the token diagonal passes the first test"."""
    card = report["scorecards"]["mean-circuit|task"]
    partial = {r["score"]: r for r in rows(card) if r["statistic"] == "partial_norm_product"}
    failing = [s for s in card["scores"] if s not in ("norm_product", "product_norm") and not holds(partial[s])]
    assert failing == ["token_diagonal"], failing
    lo, hi = card["stats"]["partial_norm_product"]["token_diagonal"][1:]
    assert lo <= 0 <= hi


def test_nothing_is_shown_beyond_path_size(report):
    """Results: "What it does not show is anything beyond path size"; What to use: "none passes the
    second"."""
    card = report["scorecards"]["mean-circuit|task"]
    assert not [r for r in rows(card) if r["statistic"] == "partial_product_norm" and holds(r)]


def test_shortlisting_intervals_overlap(v):
    """Results: "Shortlisting does not pick a winner either ... The intervals overlap" (precision@k of
    path size and Frobenius; the top-1 hit of subspace and path size)."""
    assert overlap(v, "sc_product_norm_precision_at_k", "sc_frobenius_precision_at_k")
    assert overlap(v, "sc_subspace_top1", "sc_product_norm_top1")


def test_size_of_the_push_predicts_as_well_as_path_size(v):
    """What the ground truth rewards: size alone "predicts the ground truth at X, an interval that
    overlaps path size's"; "Resample ablation does no better": its size-alone interval is not wholly
    below mean ablation's; most pairs outside the circuit are above zero by two standard errors."""
    assert overlap(v, "cf_mean_size", "cf_mean_product_norm")
    assert v["cf_resample_size_hi"] >= v["cf_mean_size_lo"]
    assert v["cf_mean_outside_above"] > v["cf_mean_outside"] / 2


def test_controlled_ground_truth_leaves_no_difference_from_size(report, v):
    """A ground truth that isolates composition: "Again no difference from a size score survives Holm"."""
    card = report["scorecards"]["excess-circuit|task"]
    assert not [r for r in rows(card) if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert v["sc_excess_smallest_p"] >= ALPHA


def test_the_mode_shrinks_the_gap(report, v):
    """The mode: "N models change mode, among them M of the reverse-copy models, whose largest path runs
    through Q"; the gap "shrinks from X to Y, an interval that holds zero"."""
    modes = report["scorecards"]["mean-circuit|largest"]["model_modes"]
    moved = [n for n, m in modes.items() if n.startswith("reverse") and m != "V"]
    assert moved and all(modes[n] == "Q" for n in moved), {n: modes[n] for n in moved}
    assert v["sc_gap_largest_lo"] <= 0 <= v["sc_gap_largest_hi"]
    assert abs(v["sc_gap_largest"]) < abs(v["sc_gap_task"])


def test_held_out_rules(v):
    """Held out: the Spearman rule "chooses path size too", first on the other half ("A ranking by path
    size carries over"); the precision@k rule "falls" on the other half ("a shortlisting rule does
    not"; What to use: "ranked near the bottom on the other"); no difference from size survives Holm
    within either half (What to use: "It is not shown to be better")."""
    assert v["ho_rho_A_chosen"] == v["ho_rho_B_chosen"] == "path size"
    assert v["ho_rho_A_rank"] == v["ho_rho_B_rank"] == 1
    for h in "AB":
        assert v[f"ho_pk_{h}_on_held_out"] < v[f"ho_pk_{h}_on_chosen"]
        assert v[f"ho_pk_{h}_rank"] > v["ho_pk_n_scores"] / 2
    assert v["ho_n_holds"] == 0


def test_thresholds_move_little(v):
    """Thresholds: "the thresholds move little, and what they move is inside the noise"."""
    assert v["th_rho_size_leads"] >= v["th_n_settings"] - 1
    assert v["th_pk_size_leads"] >= v["th_n_settings"] - 1


def test_edge_attribution_below_path_size(v):
    """Edge attribution patching: "below path size's ...; the intervals do not overlap"."""
    assert v["eap_rho_hi"] < v["eap_product_norm_rho_lo"]


def test_what_survives_anywhere_has_path_size_ahead(report, v):
    """What to use: "across the N combinations of ground truth and mode we report, the comparisons that
    do survive are M, each with path size ahead"."""
    held = [r for c in report["scorecards"].values() for r in rows(c)
            if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert len(held) == v["sc_n_size_wins"]
    assert all(r["against"] == "product_norm" and r["difference"] < 0 for r in held), held
