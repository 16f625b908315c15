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


def test_beyond_head_sizes_the_estimates_are_positive_and_one_holds(report, v):
    """Results: "Partialling out head sizes leaves a positive correlation for every one of the N scores
    that are not sizes ... after Holm N of them stays above zero: the X score"; summary and introduction:
    "positive in every estimate, survives a correction for multiple comparisons for only one of them",
    "cannot show it for all but one"; What to use: "only the token score
    passes the first test after Holm"."""
    card = report["scorecards"]["mean-circuit|task"]
    normalised = [s for s in card["scores"] if s not in ("norm_product", "product_norm")]
    assert all(card["stats"]["partial_norm_product"][s][0] > 0 for s in normalised)
    partial = {r["score"]: r for r in rows(card) if r["statistic"] == "partial_norm_product"}
    held = [s for s in normalised if holds(partial[s])]
    assert held == ["token"], held
    assert v["sc_n_partial_np_holds"] == 1 and v["sc_partial_np_holder"] == "token"


def test_nothing_is_shown_beyond_path_size(report):
    """Results: "What it does not show is anything beyond path size"; What to use: "none passes the
    second"."""
    card = report["scorecards"]["mean-circuit|task"]
    assert not [r for r in rows(card) if r["statistic"] == "partial_product_norm" and holds(r)]


def test_shortlisting_intervals_overlap(report, v):
    """Results: "Shortlisting does not pick a winner either, though size comes close. Path size's top pair
    is causal in a share 1.00 of the models with a circuit, and so is head sizes' ... The intervals
    overlap, and none of these differences survives Holm"; What to use: "its top pair was causal in every
    model with a circuit"."""
    assert v["sc_product_norm_top1"] == v["sc_norm_product_top1"] == 1.0
    assert overlap(v, "sc_product_norm_precision_at_k", "sc_frobenius_precision_at_k")
    assert overlap(v, "sc_subspace_top1", "sc_product_norm_top1")
    card = report["scorecards"]["mean-circuit|task"]
    assert not [r for r in rows(card) if r["statistic"] in ("top1", "precision_at_k") and r["against"] != "0"
                and holds(r)]


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
    through Q"; the gap "shrinks from X to Y ... both intervals hold zero, the second in a much narrower
    band"."""
    modes = report["scorecards"]["mean-circuit|largest"]["model_modes"]
    moved = [n for n, m in modes.items() if n.startswith("reverse") and m != "V"]
    assert moved and all(modes[n] == "Q" for n in moved), {n: modes[n] for n in moved}
    # the reverse-copy figure's caption: "Set mode to Q, where they carry their largest path"
    assert v["sc_n_reverse_moved"] == v["sc_n_reverse"]
    assert v["sc_gap_largest_lo"] <= 0 <= v["sc_gap_largest_hi"] and v["sc_gap_task_lo"] <= 0 <= v["sc_gap_task_hi"]
    assert abs(v["sc_gap_largest"]) < abs(v["sc_gap_task"])
    assert v["sc_gap_largest_hi"] - v["sc_gap_largest_lo"] < (v["sc_gap_task_hi"] - v["sc_gap_task_lo"]) / 2


def test_held_out_rules(report, v):
    """Held out: the second half's models with a circuit are "the reverse-copy models alone"; "No rule
    carries over. The token diagonal, first on the induction and recall models of the first half, is last
    on the reverse-copy models of the second; path size, first on the second half, is not first on the
    first by either statistic"; the differences that survive Holm are "all of them on the second half"
    with the size scores ahead; What to use: "The best score on one half ..., by Spearman and by
    precision@k, ranked last on the other"; "it did not come first on both held-out halves"."""
    h = report["held_out"]["mean-circuit|task|spearman"]
    assert {n.rsplit("-s", 1)[0] for n in h["scorecards"]["B"]["models"]} == {"reverse-rms-attn-2l"}
    assert {n.rsplit("-s", 1)[0] for n in h["scorecards"]["A"]["models"]} == {"induction-none-attn-2l",
                                                                             "recall-none-attn-2l"}
    assert v["ho_rho_A_chosen"] == v["ho_pk_A_chosen"] == "token diagonal"
    assert v["ho_rho_A_rank"] == v["ho_pk_A_rank"] == v["ho_rho_n_scores"]
    assert v["ho_rho_B_chosen"] == v["ho_pk_B_chosen"] == "path size"
    assert v["ho_rho_B_rank"] > 1 and v["ho_pk_B_rank"] > 1
    held = {k: [c for c in half["comparisons"] if c[1] != "0" and c[2] in COMPARED and c[7] is not None
                and c[7] < ALPHA] for k, half in h["scorecards"].items()}
    assert held["A"] == [] and len(held["B"]) == v["ho_n_holds"] > 0
    assert all(c[3] < 0 for c in held["B"]), [c for c in held["B"] if c[3] >= 0]


def test_thresholds_move_little(v):
    """Thresholds: "the thresholds move little, and what they move is inside the noise"; path size leads
    the Spearman estimate and precision@k in (nearly) every setting."""
    assert v["th_rho_size_leads"] >= v["th_n_settings"] - 1
    assert v["th_pk_size_leads"] >= v["th_n_settings"] - 1


def test_edge_attribution_beside_path_size(v):
    """Edge attribution patching: "beside path size's ...; the intervals overlap, so it is shown neither
    better nor worse"."""
    assert overlap(v, "eap_rho", "eap_product_norm_rho")


def test_what_survives_anywhere_has_path_size_ahead(report, v):
    """What to use: "across the N combinations of ground truth and mode we report, the comparisons that
    do survive are M, each with path size ahead"."""
    held = [r for c in report["scorecards"].values() for r in rows(c)
            if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert len(held) == v["sc_n_size_wins"]
    assert all(r["against"] == "product_norm" and r["difference"] < 0 for r in held), held


def test_the_mechanisms_the_zoo_section_names(v):
    """The zoo, "What the models do, measured": the induction models "use a previous-token head and an
    induction head, as designed" (every one); the reverse-copy models either attend straight to the answer
    or use the designed V-composition; "none of the one-layer models has a mechanism"; lookup: N "have a
    head on the right entry" and "none has a head that puts 0.3 of its attention on the entry the cues
    name"; text: every model "formed no induction mechanism"."""
    assert v["mech_ind2l_prev"] == v["n_ind2l"]
    assert v["mech_rev_direct"] + v["mech_rev_vcomp"] == v["n_reverse"]
    assert v["mech_recall1l_none"] == v["n_recall1l"]
    assert v["mech_lookup_entry"] == 0 and v["mech_lookup_diffuse"] == v["n_lookup"]
    assert v["mech_words_none"] == v["n_words"]


def test_lookup_and_text_models_are_reported_apart(report):
    """The zoo: "A model whose label says it has no circuit, or only a diffuse one, is reported apart
    below, whatever its path effects: that takes the lookup and text models out of the main tables"."""
    card = report["scorecards"]["mean-circuit|task"]
    apart = set(card["circuitless_models"])
    assert not [n for n in card["models"] if n.startswith(("lookup", "words", "recall-none-attn-1l"))]
    assert {n for n in card["model_modes"] if n.startswith(("lookup", "words"))} <= apart
