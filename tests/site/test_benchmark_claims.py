"""The claims "Which composition score should you trust?" makes in words, checked against the data.

Each test names the sentence it guards. The numbers the sentences print come from the build
(scripts/sitebuild/values/benchmark.py, from the shipped scorecard report and the zoo); these tests
recompute what the words say from the same report (headspace.scorecard.read_report) or read the
build's values. When a new zoo or a new bootstrap changes a conclusion, the test fails and says
which sentence to rewrite. No test here compares two estimates unless the sentence does.

Why these tests read the seeded report, and what a failure means. Every interval and p-value here comes
from the shipped report (headspace/models/scorecard.json) and the values built from it, both drawn with
bootstrap seed 0; the build cannot flip them (test_zoo_report_rebuilds_the_shipped_scorecard, in
tests/unit/test_scorecard.py, checks the report is what zoo/ gives with those draws). A verdict that rests on
an interval's end or an adjusted p near its edge could go the other way under another bootstrap seed, though
the data are the same; the article words such verdicts as estimates, not findings, and says where they are
narrow. The verdicts asserted within 10% of the interval's width of their edge (bootstrap seed 0), and the
Holm-adjusted p-values within a factor of 5 of 0.05, are (p and intervals by Student's t with n - 1 degrees
of freedom since the sixth review, decision 0005):

- ``test_nothing_is_shown_beyond_path_size``: the SVD component's partial beyond path size, lower end 0.004 of
  a width 0.29 (1.4%), counted in "N intervals exclude zero" (the count is a value; no name rests on it);
- ``test_the_mode_shrinks_the_gap``: the gap in the task's mode, upper end -0.032 of a width 0.35 (9%): "an
  interval that excludes zero"; in the largest path's mode +0.0098 of 0.20 (5%): "reaches just past it";
- ``test_the_paired_change_of_the_gap``: the change of the gap from the task's mode, lower ends -0.020
  (largest path's mode) and -0.023 (mechanism's) of widths 0.31 and 0.32 (7%): "reaches past zero";
- ``test_configuration_by_configuration``: the reverse-copy models with LayerNorm, token diagonal minus path
  size, upper end -0.019 of a width 1.05 (2%): counted among the intervals below zero before the correction;
  recall's adjusted p over the 9 configurations, 0.039, within a factor of 5 of 0.05;
- ``test_beyond_head_sizes_the_estimates_are_positive_and_none_holds``: the one survivor of the family, the token
  score beyond head sizes on resample ablation, adjusted p 0.035; the main card's smallest, 0.080;
- ``test_the_labels_set_aside``: the subspace score beyond path size with the circuit by path alone, in the
  largest path's mode, adjusted p 0.13 in its card's own family;
- ``test_edge_attribution_beside_path_size``: edge attribution from the first batch alone minus path size, upper
  end +0.061 of a width 0.69 (9%): "reaches past zero"; its p, 0.064, within a factor of 5 of 0.05.

A failure of one of these after a new bootstrap seed or a new zoo means the sentence quoted in the test's
docstring must be rewritten as the new draws say (an end that crossed zero: "reaches past zero" or "excludes
zero"; a p that crossed 0.05: "holds" or "does not hold after Holm"), not that the build is wrong. The
other interval assertions sit at least 10% of their interval's width from their edge.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VALUES = ROOT / "site" / "data" / "values.json"
ALPHA = 0.05
EDGE = 0.01          # an interval end this close to zero "sits at zero" (a bootstrap seed moves ends by about this)
COMPARED = ("spearman", "auroc", "top1", "precision_at_k")


@pytest.fixture(scope="module")
def v() -> dict:
    if not VALUES.is_file():
        pytest.fail(f"{VALUES} is missing: run scripts/build first")
    # the values the article states, and the rest of the zoo's counts, which the claims below check
    from sitebuild.values.benchmark import zoo_counts
    return json.loads(VALUES.read_text(encoding="utf-8"))["benchmark"] | zoo_counts()


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
    """Results: "Path size has the highest Spearman estimate" (the point estimate on all the data); What to
    use: "It has the highest Spearman estimate and the highest precision@k estimate"."""
    stats = report["scorecards"]["mean-circuit|task"]["stats"]
    for stat in ("spearman", "precision_at_k"):
        assert max(stats[stat], key=lambda s: stats[stat][s][0]) == "product_norm", stat


def test_beyond_head_sizes_the_estimates_are_positive_and_none_holds(report, v):
    """Results: "Partialling out head sizes leaves a positive correlation for every one of the N scores that are not
    sizes ..., and M of their intervals exclude zero. After Holm over the whole family, 0 of them stay above zero
    (0 in the mechanism's mode); the smallest adjusted p is q. In the whole report one comparison survives, the
    token score's correlation beyond head sizes against resample ablation (adjusted p x), on a ground truth and in
    a mode where no other score's does"; the introduction: "the number that survives it is 1"; What to use: "0 pass
    the first test ... in each task's mode and in the others". The survivor's adjusted p, 0.035 (bootstrap seed 0),
    is within a factor of 5 of 0.05 (module docstring)."""
    card = report["scorecards"]["mean-circuit|task"]
    normalised = [s for s in card["scores"] if s not in ("norm_product", "product_norm")]
    assert all(card["stats"]["partial_norm_product"][s][0] > 0 for s in normalised)
    partial = {r["score"]: r for r in rows(card) if r["statistic"] == "partial_norm_product"}
    assert v["sc_partial_np_n_excludes_0"] == sum(partial[s]["lo"] > 0 for s in normalised)
    assert v["sc_n_partial_np_holds"] == sum(holds(partial[s]) for s in normalised) == 0
    assert v["sc_partial_np_smallest_p_holm"] == min(partial[s]["p_holm"] for s in normalised) >= ALPHA
    survivors = [(k, r) for k, c in report["scorecards"].items() for r in rows(c) if holds(r)]
    assert v["sc_n_survive_all"] == len(survivors) == 1
    key, r = survivors[0]
    assert (key, r["score"], r["against"], r["statistic"]) == ("resample-circuit|task", "token", "0", "partial_norm_product")
    assert v["sc_survivor_p_holm"] == r["p_holm"]
    for k in ("mean-circuit|largest", "mean-circuit|mechanism"):
        assert not [x for x in rows(report["scorecards"][k]) if x["statistic"] == "partial_norm_product" and holds(x)], k


def test_nothing_is_shown_beyond_path_size(report, v):
    """Results: "Beyond *path* size the number that stays above zero after Holm is 0 (0 in the mechanism's mode).
    Before the correction N intervals exclude zero, the token diagonal's the farthest from it"; What to use:
    "0 ... the second". The count before the correction is the build's (an end near zero, the SVD component's at
    0.004, may cross under another bootstrap seed; the sentence prints the count, not the names)."""
    card = report["scorecards"]["mean-circuit|task"]
    assert not [r for r in rows(card) if r["statistic"] == "partial_product_norm" and holds(r)]
    assert v["sc_n_partial_pn_holds"] == 0
    st = card["stats"]["partial_product_norm"]
    from sitebuild.values.benchmark import CARD_ROWS
    above = [s for s in CARD_ROWS if s not in ("norm_product", "product_norm") and st[s][1] > 0]
    assert v["sc_n_partial_pn_excludes_0"] == len(above) and "token_diagonal" in above
    assert max(above, key=lambda s: st[s][1]) == "token_diagonal"          # "the farthest from it"
    # What to use: "The estimates beyond size are positive": beyond path size too, every score that is not a size
    assert all(st[s][0] > 0 for s in CARD_ROWS if s not in ("norm_product", "product_norm"))


def test_the_power_of_the_family(report, v):
    """Results: "over N comparisons Holm asks the smallest p to be below a, and the strongest difference from a
    size score on this card, the S score minus T by U, is d (lo to hi, p = q before correction). A difference in
    Spearman from a size score would have to be about D to clear that bar even half the time, so smaller real
    differences would go unseen". From the report: the strongest is the smallest unadjusted p of a score
    against a size score; it does not clear the bar; the detectable difference exceeds every observed
    Spearman difference from a size score (none would have cleared it)."""
    card = report["scorecards"]["mean-circuit|task"]
    assert v["sc_alpha_per"] == pytest.approx(ALPHA / v["sc_n_family"])
    sized = [r for r in rows(card) if r["against"] != "0" and r["statistic"] in COMPARED and r["p"] is not None]
    best = min(sized, key=lambda r: r["p"])
    assert v["sc_strongest_p"] == best["p"] > v["sc_alpha_per"]
    assert (v["sc_strongest"], v["sc_strongest_lo"], v["sc_strongest_hi"]) == (best["difference"], best["lo"], best["hi"])
    rho = [abs(r["difference"]) for r in sized if r["statistic"] == "spearman"]
    assert v["sc_detectable_rho"] > max(rho)
    assert 0.2 < v["sc_detectable_rho"] < 0.8                         # "about D": a sizeable fraction of the scale


def test_shortlisting_intervals_overlap(report, v):
    """Results: "Shortlisting is not shown to pick a winner either. Path size's top pair is causal in a share X
    (lo to hi), the highest estimate, the SVD bound's in W (lo to hi), the next. No difference from a size score
    on these three statistics survives Holm. In the mechanism's mode
    the S score's top-1 is highest, T (lo to hi)" (the intervals overlap too; the verdict is Holm's on the paired
    differences, not the overlap's). Point estimates are the zoo's own (no bootstrap draw)."""
    top1 = report["scorecards"]["mean-circuit|task"]["stats"]["top1"]
    order = sorted((s for s in top1 if s not in ("frobenius_baseline", "projection_kernel")), key=lambda s: -top1[s][0])
    assert order[:2] == ["product_norm", "svd_bound"] and top1[order[0]][0] > top1[order[1]][0] > top1[order[2]][0]
    assert overlap(v, "sc_svd_bound_top1", "sc_product_norm_top1")
    mech = report["scorecards"]["mean-circuit|mechanism"]["stats"]["top1"]
    best = max(mech, key=lambda s: mech[s][0])
    assert mech[best][0] > max(x[0] for s, x in mech.items() if s != best)          # one highest, no tie
    from sitebuild.values.benchmark import name
    assert v["sc_mech_top1_leader"] == name(best)
    assert v["sc_mech_top1_leader_value"] == mech[best][0]
    assert overlap(v, "sc_product_norm_precision_at_k", "sc_frobenius_precision_at_k")
    assert overlap(v, "sc_frobenius_auroc", "sc_product_norm_auroc")
    card = report["scorecards"]["mean-circuit|task"]
    assert not [r for r in rows(card) if r["statistic"] in ("top1", "precision_at_k", "auroc")
                and r["against"] != "0" and holds(r)]


def test_size_of_the_push_predicts_as_well_as_path_size(v):
    """What the ground truth rewards: size alone "predicts the ground truth at X ... beside path size's
    (...); paired over the same draws, size alone minus path size is ..." (the difference's check is in
    test_size_orders_the_pairs_outside_the_circuit); "Resample ablation does no better": its size-alone
    interval is not wholly below mean ablation's; most pairs outside the circuit are above zero by two
    standard errors."""
    assert v["cf_resample_size_hi"] >= v["cf_mean_size_lo"]
    assert v["cf_mean_outside_above"] > v["cf_mean_outside"] / 4       # "pairs outside any circuit show effects too"
    assert v["cf_excess_size_lo"] > 0                                 # excess: "discounts size but still rewards it"


def test_the_median_effects_outside_the_circuit(v):
    """What the ground truth rewards: "N of the M pairs below the causal threshold have an effect more than two
    standard errors ... above zero, with a median of x nats (over all the pairs outside the circuit, y)"; the
    table's "their median effect" (of those pairs) beside the "median effect of all pairs outside". The review
    (sceptic4) re-derived the first as 2.8e-3, 3.0e-3, 3.7e-3 and the second as 6.3e-4, 5.1e-4, 2.5e-6 nats."""
    # With the table family (660 pairs outside, was 615) the medians moved to these (sitebuild.values, not
    # re-derived by a review); on the excess ground truth the median of all pairs outside is now about zero
    # (-1.8e-8, was 2.5e-6), so it is held to within 1e-6 of zero rather than to a relative tolerance.
    for tag, above, everyone in (("mean", 2.63e-3, 5.38e-4), ("resample", 2.85e-3, 4.04e-4), ("excess", 3.73e-3, None)):
        assert v[f"cf_{tag}_outside_above_median"] > v[f"cf_{tag}_outside_median"], tag
        assert v[f"cf_{tag}_outside_above_median"] == pytest.approx(above, rel=0.05), tag
        if everyone is None:
            assert abs(v[f"cf_{tag}_outside_median"]) < 1e-6, tag
        else:
            assert v[f"cf_{tag}_outside_median"] == pytest.approx(everyone, rel=0.05), tag


def test_controlled_ground_truth_leaves_no_difference_from_size(report, v):
    """A ground truth that discounts generic damage: "Again no difference from a size score survives Holm"."""
    card = report["scorecards"]["excess-circuit|task"]
    assert not [r for r in rows(card) if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert v["sc_excess_smallest_p"] >= ALPHA


def test_the_mode_shrinks_the_gap(report, v):
    """The mode: "N of the S scored models change mode (K of those with a circuit there), among them M of the
    reverse-copy models, whose largest path runs through Q"; the reverse-copy figure's caption: "Set mode to Q, where
    M of the N carry their largest path"; the gap "shrinks from X (lo to hi), an interval that excludes zero, to Y
    (lo to hi), one that reaches just past it; neither gap survives Holm". The task's upper end, -0.032 of a width
    0.35 (9%), and the largest path's, +0.0098 of 0.20 (5%), are near their edge (module docstring)."""
    modes = report["scorecards"]["mean-circuit|largest"]["model_modes"]
    moved = [n for n, m in modes.items() if n.startswith("reverse") and m != "V"]
    assert moved and all(modes[n] == "Q" for n in moved), {n: modes[n] for n in moved}
    assert v["sc_n_reverse_moved"] == len(moved)
    card = report["scorecards"]["mean-circuit|largest"]
    task = report["scorecards"]["mean-circuit|task"]["model_modes"]
    all_moved = [n for n, m in modes.items() if m != task[n]]
    assert (v["sc_n_moved_mode"], v["sc_n_scored"]) == (len(all_moved), len(modes))
    assert v["sc_n_moved_mode_formed"] == sum(n in card["models"] for n in all_moved) < v["sc_n_moved_mode"]
    assert v["sc_gap_task_hi"] < 0 < v["sc_gap_largest_hi"] < 0.02       # "excludes zero ... reaches just past it"
    assert v["sc_gap_largest"] > v["sc_gap_task"]                         # "shrinks" (estimates, the zoo's own)
    for card in ("mean-circuit|task", "mean-circuit|largest"):
        row = next(r for r in rows(report["scorecards"][card])
                   if (r["score"], r["against"], r["statistic"]) == ("frobenius", "product_norm", "spearman"))
        assert not holds(row), card                                    # "neither gap survives Holm"


def test_held_out_rules(report, v):
    """Held out: the halves' models with a circuit are in "N and M configurations: the first the induction
    models with RMSNorm in two layers and with LayerNorm, the reverse-copy models with LayerNorm, the
    recall models and the repetitive-text models; the second the induction models without normalisation and in three layers, the
    reverse-copy models with RMSNorm and the table-lookup models"; each bullet's
    chosen score and its rank on the other half (the token diagonal, first on the first half, last on the
    second; path size, first on the second, not first on the first; by precision@k path size and then
    another score, neither first on the other half); "On this split neither rule carries over: each half's
    first choice is not first on the other, and within each half the number of differences from a size
    score that survive Holm is 0"."""
    h = report["held_out"]["mean-circuit|task|spearman"]
    configs = {k: {n.rsplit("-s", 1)[0] for n in half["models"]} for k, half in h["scorecards"].items()}
    assert configs["A"] == {"induction-rms-attn-2l", "induction-ln-mlp-2l", "reverse-ln-mlp-2l", "recall-none-attn-2l",
                            "reptext-none-attn-2l"}
    assert configs["B"] == {"induction-none-attn-2l", "induction-rms-attn-3l", "reverse-rms-attn-2l", "table-none-attn-2l"}
    assert (v["ho_configs_A"], v["ho_configs_B"]) == (len(configs["A"]), len(configs["B"]))
    assert v["ho_rho_A_chosen"] == "token diagonal" and v["ho_rho_A_rank"] == v["ho_rho_n_scores"]
    assert v["ho_rho_B_chosen"] == "path size" and v["ho_rho_B_rank"] > 1
    assert v["ho_pk_A_chosen"] == "path size" and v["ho_pk_B_chosen"] not in ("path size", "head sizes")
    assert v["ho_pk_A_rank"] > 1 and v["ho_pk_B_rank"] > 1
    held = [c for half in h["scorecards"].values() for c in half["comparisons"]
            if c[1] != "0" and c[2] in COMPARED and c[7] is not None and c[7] < ALPHA]
    assert held == [] and v["ho_n_holds"] == 0


def test_held_out_over_many_splits(v):
    """Held out, over every split: "No shortlisting rule carries over"; "So what carries over in most splits is
    only that path size ranks pairs near the top by Spearman; the best-ranking score on one half is first on
    the other in only about half the tries"; "The half chooses path size N times and the token diagonal M times";
    "path size ranks no lower than 2 of 12 on every half", by precision@k "no lower than 3 on any half"; What to
    use: "Only path size's place near the top (never below 2 by Spearman and 3 by precision@k on a half) held on
    every split". Point estimates over a fixed set of splits, no bootstrap draw: the
    counts change only with the zoo, and the bounds leave margins (a count near the middle, not at an edge)."""
    n, splits = v["sp_n_directions"], v["sp_n_splits"]
    assert n == 2 * splits and splits >= 10 and v["sp_n_seeds"] >= 20
    # "about half": between a third and two thirds of the tries
    assert n / 3 <= v["sp_rho_first"] <= 2 * n / 3
    assert v["sp_rho_both_ways"] < splits
    assert v["sp_rho_size_worst_rank"] <= 2 and v["sp_rho_size_chosen"] > n / 2
    assert v["sp_rho_other_chosen"] == "token diagonal"
    # "the rule itself does not carry over: the chosen score is rarely first on the other half": first on the
    # other half in at most a fifth of the tries ("far fewer by precision@k" than by Spearman)
    assert v["sp_pk_first"] <= n / 5 and v["sp_pk_both_ways"] <= splits / 5 and v["sp_pk_first"] < v["sp_rho_first"] / 2
    # "path size stays near the top, by Spearman and by precision@k, on every half": in the top sp_top
    assert v["sp_pk_size_worst_rank"] <= v["sp_top"] and v["sp_rho_size_worst_rank"] <= v["sp_top"]
    assert v["sp_pk_size_chosen"] > v["sp_pk_other_chosen_n"]               # "path size, chosen most often"


def test_thresholds_move_little(v):
    """Thresholds: "the thresholds move little, within the noise"; path size leads
    the Spearman estimate and precision@k in (nearly) every setting."""
    assert v["th_rho_size_leads_sets"] == v["th_n_model_sets"]
    assert v["th_pk_size_leads"] >= v["th_n_settings"] - 1


def test_thresholds_top1(report, v):
    """Thresholds: "path size has the highest top-1 in N, tied in M with the SVD bound": from the report's rows, path size is at the top (a tie counts) in N, and every other score at the
    top is the SVD bound, in M. Point estimates: no bootstrap."""
    rows = report["sensitivity"]["mean-circuit|task"]
    top, ties = 0, 0
    for r in rows:
        t1 = {s: x[0] for s, x in r["stats"]["top1"].items() if x[0] is not None}
        best = [s for s, x in t1.items() if x >= max(t1.values()) - 1e-12]
        top += "product_norm" in best
        assert set(best) <= {"product_norm", "svd_bound"}, best
        ties += set(best) == {"product_norm", "svd_bound"}
    assert v["th_top1_size_best"] == top == v["th_n_settings"] and v["th_top1_svd_best"] == ties


def test_thresholds_are_fewer_computations_than_settings(report, v):
    """Thresholds: "Only the circuit threshold changes which models count (the others leave every Spearman as
    it was), so these are N distinct computations of Spearman"; path size leads precision@k "in one by only
    X". From the report's rows: settings with the same models give the same Spearman, and N is the number of
    model counts."""
    rows = report["sensitivity"]["mean-circuit|task"]
    by_models = {}
    for r in rows:
        by_models.setdefault(r["n_models"], []).append(json.dumps(r["stats"]["spearman"], sort_keys=True))
    assert all(len(set(s)) == 1 for s in by_models.values())
    assert v["th_n_model_sets"] == len(by_models) < v["th_n_settings"]
    # "Path size has the highest Spearman estimate in K of them"
    led = {json.dumps(r["stats"]["spearman"], sort_keys=True) for r in rows if r["leader"]["spearman"] == "product_norm"}
    assert v["th_rho_size_leads_sets"] == len(led) <= v["th_n_model_sets"]
    assert all(r["leader"]["spearman"] == "product_norm" for r in rows)     # in every setting, so in all K
    leads = [r for r in rows if r["leader"]["precision_at_k"] == "product_norm"]
    gaps = [r["stats"]["precision_at_k"]["product_norm"][0] - max(x[0] for k, x in r["stats"]["precision_at_k"].items()
                                                                  if k != "product_norm" and x[0] is not None)
            for r in leads]
    assert v["th_pk_size_min_margin"] == pytest.approx(min(gaps), abs=1e-9) and min(gaps) > 0


def test_edge_attribution_beside_path_size(report, v):
    """Edge attribution patching: "Averaged over the same evaluation batches as the ground truth, ... it ranks
    pairs at X (lo to hi), beside path size's Y (lo to hi); the paired difference, edge attribution minus path
    size, is d (lo to hi, p = q before any correction): no difference is shown, either way, with or without the
    table-lookup models (d' (lo' to hi')). From the first batch alone, the cost-matched variant, it ranks pairs
    at X1 (lo1 to hi1), the difference d1 (lo1 to hi1, p = q1), an interval that reaches past zero. Neither is in
    the family Holm corrects, and neither p would come near its bar. Edge attribution is not shown to differ from
    path size, on the ground truth's own batches or from one batch; from one batch its estimate is the lower".
    Every interval here draws edge attribution's batches together with the ground truth's
    (``batch_score_beside``), so its own batch noise is in it. The averaged difference's interval covers zero with
    room on both sides (bootstrap seed 0, Student's t: -0.36 and +0.23 of a width 0.59); the one-batch
    difference's upper end, +0.061 of a width 0.69 (9%), is near its edge (module docstring)."""
    for key in ("eap_minus_size", "eap_minus_size_no_table"):
        width = v[f"{key}_hi"] - v[f"{key}_lo"]
        assert v[f"{key}_lo"] < -0.1 * width and v[f"{key}_hi"] > 0.1 * width, key   # "no difference is shown"
    assert v["eap_minus_size_p"] > ALPHA
    assert 0 < v["eap_one_minus_size_hi"]                                 # "an interval that reaches past zero"
    assert v["eap_one_minus_size_lo"] < v["eap_one_minus_size"] < 0       # "its estimate is the lower"
    assert v["eap_one_minus_size_p"] > ALPHA                              # "not shown to differ"
    assert min(v["eap_one_minus_size_p"], v["eap_minus_size_p"]) > 100 * v["sc_alpha_per"]   # "neither p would come near its bar"
    # path size's numbers are the resample card's own: the same batch draws, the same models
    card = report["scorecards"]["resample-circuit|task"]
    assert v["eap_n_models"] == card["n_models"]
    assert [round(v[f"eap_product_norm_rho{k}"], 4) for k in ("", "_lo", "_hi")] == card["stats"]["spearman"]["product_norm"]


def test_edge_attribution_gets_the_sign_of_the_largest_path_wrong(v):
    """Edge attribution patching: "for the path with the largest exact effect it gives even the sign wrong in
    N1 of the M models with a circuit on the first batch, and in N of them averaged over all the batches".
    Deterministic (no bootstrap): counts of the zoo's models."""
    assert 0 < v["eap_wrong_sign_all"] <= v["eap_n_models"] and 0 < v["eap_wrong_sign_one"] <= v["eap_n_models"]


def test_edge_attribution_cost_and_first_order_error(v):
    """Edge attribution patching: path patching needs "the equivalent of N runs of the model from the reader's
    layer on, per batch" (three modes for each pair of an earlier and a later head of four heads a layer),
    against one forward and one backward pass; "the largest exact effect of a model with a circuit is X to Y
    times its largest edge attribution score (median M), leaving out the N table-lookup models that look the
    entry up, where it is A to B times: their loss at the circuit's positions is near zero": the full patch is
    not small (every model's exact effect is larger, so the first order underestimates it everywhere), and the
    table's three are the largest ratios by far. Deterministic: no bootstrap."""
    assert v["pp_runs_2l"] == 3 * 4 * 4 and v["pp_runs_3l"] == 3 * 3 * 4 * 4
    assert 1 < v["eap_under_min"] <= v["eap_under_median"] <= v["eap_under_max_rest"]
    assert v["eap_under_table_min"] > 10 * v["eap_under_max_rest"] and v["eap_n_table"] == v["mech_table2l_entry"]
    assert v["table_entry_loss_max"] < 0.01                            # "near zero"


def test_one_holm_family_over_every_card(report, v):
    """How the numbers are made: "N comparisons for each combination of ground truth and mode ... all M
    comparisons form one family, and their p-values are adjusted together by Holm's method"."""
    cards = report["scorecards"]
    assert v["sc_n_cards"] == len(cards) and v["sc_n_comparisons"] * len(cards) == v["sc_n_family"]
    for card in cards.values():
        assert card["holm_family"] == {"cards": list(cards), "n_comparisons": v["sc_n_family"]}
    # "the exact twins' included: without them it would hold N, a slightly less strict correction"
    twins = {"frobenius_baseline", "projection_kernel"}
    kept = [r for c in cards.values() for r in rows(c) if r["p"] is not None and not {r["score"], r["against"]} & twins]
    assert v["sc_n_family_no_twins"] == len(kept) < v["sc_n_family"]


def test_no_difference_from_size_survives_anywhere(report, v):
    """What to use: "after a correction for N comparisons, the number of differences between a score and a
    size baseline that survive, over all M combinations of ground truth and mode we report, is 0. No score is
    shown better or worse than size anywhere"; the introduction and summary: "Pooled over the configurations
    of models, none of the scores we test is shown to rank pairs of heads, or to shortlist them, better or worse
    than the plain size of the path between them, against any of our ground truths. Within single
    configurations one is: the token diagonal ranks pairs better than path size on the recall models, and worse
    on both reverse-copy configurations" (the configurations, Holm over them: test_configuration_by_configuration
    checks which)."""
    held = [(key, r) for key, c in report["scorecards"].items() for r in rows(c)
            if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert v["sc_n_held_anywhere"] == len(held) == 0, held
    # "within single configurations one is": the exceptions are the per-configuration ones that survive Holm
    assert (v["pc_n_td_above_holm"], v["pc_n_td_below_holm"]) == (1, 1)     # recall; reverse copy with RMSNorm


def test_beyond_path_size_the_excess_card_shows_a_direction_not_a_finding(report, v):
    """A ground truth that discounts generic damage: "Beyond *path* size, the subspace score (with its twin) has the
    largest estimate: ... in each task's mode, ... in the mechanism's and ... in the largest path's. Its direction is
    consistent: the mean over each configuration's models is above zero in 9 of the 9 configurations (from a to b).
    A sign test (one-sided) puts that at p = 0.002, the smallest p that so many configurations can give ..., and
    Student's t at p before the correction. Both are above the bar of 5.4e-5: after Holm its p is 1"; the introduction: "the
    subspace score's is positive in every one of the 9 configurations". No partial beyond path size holds on any
    card. The configuration means are the zoo's own (no bootstrap); the smallest, 0.056, is a point estimate."""
    held = [(key, r["score"]) for key, c in report["scorecards"].items() for r in rows(c)
            if r["statistic"] == "partial_product_norm" and holds(r)]
    assert held == [], held
    card = report["scorecards"]["excess-circuit|task"]
    st = card["stats"]["partial_product_norm"]
    normalised = [s for s in card["scores"] if s not in ("norm_product", "product_norm")]
    assert max(normalised, key=lambda s: st[s][0]) in ("subspace", "projection_kernel")   # "the largest estimate"
    for k in ("sc_excess_subspace_partial_pn", "sc_excess_mech_subspace_partial_pn", "sc_excess_largest_subspace_partial_pn"):
        assert v[f"{k}_lo"] > 0.05, k
    assert v["sc_excess_subspace_n_positive"] == v["sc_excess_subspace_n_configs"] == v["sc_n_configs"]
    assert v["sc_excess_subspace_config_min"] > 0
    assert v["sc_excess_subspace_sign_p"] == pytest.approx(0.5 ** v["sc_n_configs"])   # "the smallest ... can give"
    row = next(r for r in rows(card) if (r["score"], r["against"], r["statistic"]) == ("subspace", "0", "partial_product_norm"))
    assert (v["sc_excess_subspace_p"], v["sc_excess_subspace_p_holm"]) == (row["p"], row["p_holm"])
    assert v["sc_excess_subspace_sign_p"] > 10 * v["sc_alpha_per"] and v["sc_excess_subspace_p"] > 10 * v["sc_alpha_per"]
    assert row["p_holm"] >= ALPHA


def test_the_mechanism_mode(report, v):
    """The mode: each model "in the mode its recorded mechanism names ... N models have a circuit, and M of them
    leave their task's mode: the reverse-copy models that attend to the answer, read in Q. The mechanism's mode
    and the largest path's differ for K of them, a reverse-copy model with LayerNorm labelled by its Q path whose
    largest path runs through V. The Frobenius score's shortfall ... an interval whose upper end sits at zero,
    as the largest path's does on the other side, and it does not survive Holm"; Results: beyond head sizes "after
    Holm N of them stay above zero (J in the mechanism's mode)"; What to use: "fewer in the largest
    path's and in the mechanism's"; "read it in the mode its mechanism uses, which is neither always its task's
    nor always that of its largest path"."""
    from headspace.benchmark import zoo_models
    from headspace.tasks import MODE_OF_TASK as task_mode
    entries = zoo_models(ROOT / "zoo")
    mech, largest = report["scorecards"]["mean-circuit|mechanism"], report["scorecards"]["mean-circuit|largest"]
    moved = [n for n in mech["models"] if mech["model_modes"][n] != task_mode[entries[n]["task"]]]
    assert len(moved) == v["sc_mech_n_moved"] > 0 and mech["n_models"] == v["sc_mech_n_formed"]
    assert all(entries[n]["task"] == "reverse" and entries[n]["mechanism"] == "direct attention to the answer"
               and mech["model_modes"][n] == "Q" for n in moved), moved
    differ = [n for n in mech["models"] if mech["model_modes"][n] != largest["model_modes"][n]]
    assert len(differ) == v["sc_mech_n_not_largest"] == 1
    assert differ[0].startswith("reverse-ln-mlp") and (mech["model_modes"][differ[0]], largest["model_modes"][differ[0]]) == ("Q", "V")
    # "an interval that reaches past zero, as the largest path's does"
    assert 0 < v["sc_gap_mechanism_hi"] and 0 < v["sc_gap_largest_hi"] and v["sc_gap_mechanism_lo"] < -EDGE
    # How the numbers are made, and the headline counts in brackets: the mechanism's mode moves only reverse-copy
    # models (above), has K models in J configurations, no difference from a size score holds, path size has the
    # highest Spearman estimate, and no partial beyond path size holds (the heading "none is shown to")
    assert v["sc_mech_n_configs"] == mech["n_configurations"] and v["sc_mech_smallest_p"] >= ALPHA
    sp = mech["stats"]["spearman"]
    assert v["sc_mech_spearman_leader"] == "path size" and max(sp, key=lambda s: sp[s][0]) == "product_norm"
    assert v["sc_mech_n_partial_pn_holds"] == 0
    row = next(r for r in rows(mech) if (r["score"], r["against"], r["statistic"]) == ("frobenius", "product_norm", "spearman"))
    assert not holds(row)
    normalised = [s for s in mech["scores"] if s not in ("norm_product", "product_norm")]
    for card, n in ((mech, v["sc_mech_n_partial_np_holds"]), (largest, None)):
        held = [r for r in rows(card) if r["statistic"] == "partial_norm_product" and r["score"] in normalised and holds(r)]
        assert n is None or len(held) == n
        assert len(held) == v["sc_n_partial_np_holds"] == 0              # "in each task's mode and in the others"


@pytest.mark.slow
def test_what_rests_on_the_repetitive_text_family():
    """The excess ground truth: the subspace score's partial beyond path size: "without the 3 repetitive-text models
    ... it barely moves"; and without that family still no difference from a size score, and no partial beyond path
    size, survives Holm on any card. The nine cards recomputed without the family (a few minutes)."""
    from headspace import controlled, scorecard
    zoo = ROOT / "zoo"
    data = scorecard.zoo_data(zoo, None, {controlled.CONTROLLED: controlled.read_zoo(zoo)[controlled.CONTROLLED]})
    sub = data.subset([i for i, f in enumerate(data.families) if f != "reptext-none-attn-2l"])
    cards = scorecard.holm_family({f"{g}|{m}": scorecard.scorecard(sub, g, m) for g in scorecard.REPORT_GROUND_TRUTHS
                                   for m in scorecard.REPORT_MODES})
    with_family = {r["score"]: r for r in rows(scorecard.read_report()["scorecards"]["excess-circuit|task"])
                   if r["statistic"] == "partial_product_norm"}
    without = {r["score"]: r for r in rows(cards["excess-circuit|task"]) if r["statistic"] == "partial_product_norm"}
    assert not holds(with_family["subspace"]) and not holds(without["subspace"])
    assert abs(without["subspace"]["difference"] - with_family["subspace"]["difference"]) < 0.05   # "barely moves"
    assert not [r for c in cards.values() for r in rows(c) if r["against"] != "0" and r["statistic"] in COMPARED
                and holds(r)]


def test_the_excess_estimate_without_the_newest_families(report, v):
    """A ground truth that discounts generic damage: "The estimate rests on breadth, not on a few models: without the
    3 repetitive-text models, whose circuit is in doubt (above), it barely moves, x (lo to hi), and without the
    table-lookup family as well it stays y (lo to hi). Both families joined the zoo after the first review of this
    benchmark had seen its results" (that last: test_the_newest_families_came_after_the_first_review). Estimates
    are the zoo's own (no bootstrap)."""
    sub = v["sc_excess_subspace_partial_pn"], v["sc_excess_subspace_partial_pn_noreptext"]
    assert abs(sub[0] - sub[1]) < 0.05                                           # "barely moves"
    assert abs(sub[0] - v["sc_excess_subspace_partial_pn_no_newest"]) < 0.05     # "it stays"
    assert v["reptext_keys_circuits"] < v["mech_reptext_prev"]                   # "whose circuit is in doubt"


def test_the_mechanisms_the_zoo_section_names(v):
    """The zoo, "What the models do, measured": "all N models without normalisation use a previous-token
    head and an induction head, as designed. Of the M with RMSNorm or LayerNorm, a do; b use a shifted
    window instead ...; c, the model on the plateau, formed none"; reverse copy: the models attend straight
    to the answer, use the designed V-composition, or "with LayerNorm and MLPs, has no mechanism we can
    name" (two, with LayerNorm and MLPs); "none of the one-layer models has a mechanism"; lookup: "none of the N models
    has a head on the right entry; all N answer from attention spread over many entries", and
    "none has a head that puts 0.3 of its attention on the entry the cues name"; text: "none of the word-level
    and character-level models formed an induction mechanism"; "Every reverse-copy model solves its task,
    though not as it was designed to: N of the 10 attend straight to the answer (below), even though M also have a V
    path of the threshold's size"; losses: the highest induction loss is "a model with LayerNorm still
    on the plateau", and every model with two or more layers but that one solves its task."""
    assert v["mech_ind2l_prev"] == v["n_ind2l"]
    assert v["mech_ind_normed_prev"] + v["mech_ind_normed_shifted"] + v["mech_ind_normed_none"] == v["n_ind_normed"]
    assert v["mech_ind_normed_none"] == v["mech_indln_none"] == 1
    assert v["loss_induction_max"] == v["loss_indln_max"] > 1 > v["loss_induction_second"]
    # "(not the induction model on the plateau, nor the N table-lookup models on theirs)"
    assert v["n_solved"] == v["n_models"] - 1 - v["table_n_plateau"] and v["solved_induction"] == v["n_induction"] - 1
    assert v["solved_table"] == v["n_table"] - v["table_n_plateau"] and v["solved_table1l"] == 0
    assert (v["mech_task_reverse_direct"] + v["mech_task_reverse_vcomp"] + v["mech_task_reverse_none"]
            == v["n_reverse"])
    assert v["mech_task_reverse_vcomp"] == 0 and v["mech_task_reverse_none"] == v["mech_revln_none"] == 2
    assert v["solved_reverse"] == v["n_reverse"]
    assert v["n_reverse_attend_answer"] == v["mech_task_reverse_direct"] > 0 and v["formed_reverse"] > 0
    assert v["mech_recall1l_none"] == v["n_recall1l"]
    assert v["mech_lookup_entry"] == 0 and v["mech_lookup_diffuse"] == v["n_lookup"]
    assert v["mech_words_none"] == v["n_words"] and v["mech_chars_none"] == v["n_chars"] == v["n_text"]
    # repetitive text: "N of the M models use a previous-token head and an induction head ...; the other K grew
    # both heads, but their paths stay under the threshold"
    assert v["mech_reptext_prev"] + v["mech_reptext_none"] == v["n_reptext"] and v["mech_reptext_prev"] >= 1
    assert v["formed_reptext"] == v["mech_reptext_prev"] and v["top_reptext_max"] >= v["circuit_effect"]
    # "on 20 of its evaluation batches (4 for the lookup and word-level models)"
    from headspace import mechanisms
    from headspace.benchmark import zoo_models
    batches = {n: mechanisms.read(ROOT / "zoo", n)["batches"] for n in zoo_models(ROOT / "zoo")}
    fewer = {n.split("-")[0] for n, b in batches.items() if b < v["mech_batches"]}
    assert v["mech_batches"] == max(batches.values()) == 20 and fewer == {"lookup", "words"}, fewer
    assert {b for n, b in batches.items() if n.split("-")[0] in fewer} == {v["mech_batches_min"]}
    # "designed K paths of a (lo to hi over the batches) to b nats; the other K ... under the threshold, the
    # closer at c (lo to hi)"; the writer "at every position ... x to y ... at the keys ... under the threshold in
    # N of the M models labelled induction. Measured there, the family would have one circuit, not three"
    assert v["reptext_formed_min"] >= v["circuit_effect"] > v["reptext_under_max"]
    assert v["reptext_under_max_hi"] >= v["circuit_effect"]            # "an interval that reaches the threshold"
    assert v["reptext_writer_all_min"] >= v["attention_threshold"] > v["reptext_writer_keys_min"]
    assert v["mech_reptext_prev"] - v["reptext_formed_keys_below"] == 1 and v["mech_reptext_prev"] == 3


def test_the_table_lookup(v):
    """The zoo, "What the models do, measured": table lookup: "N of the 5 two-layer models (seeds ...) look the
    entry up as designed. A first-layer head puts a to b of its attention on the previous token, a second-layer
    head c to d of its own on the cell the two cues name, and the Q path between the two costs ... The other K
    stay on the plateau with no head on the cell: one has a V path just over the threshold (labelled a diffuse
    lookup), one no path at all. None of the 5 one-layer models has a mechanism"; the losses: those that look
    the entry up "end below x nats; the other K stay at y to z, near ln 4, what one cue alone leaves, and so do
    the one-layer ones"; the lookup paragraph: "the others solve nothing"; the figure's caption: the Q path of
    those that look it up "is the largest by far", the plateau's paths "all small beside those"; What this
    benchmark still lacks: "the other K plateau where one cue leaves them". Recorded measurements and the
    table's ground truths, no bootstrap."""
    import math
    from headspace import mechanisms
    from headspace.benchmark import read_table, zoo_models
    entries = zoo_models(ROOT / "zoo")
    recs = {n: mechanisms.read(ROOT / "zoo", n) for n, e in entries.items() if e["family"] == "table-none-attn-2l"}
    labels = sorted(r["label"] for r in recs.values())
    assert v["n_table"] == len(recs) == 5 and v["n_table1l"] == v["mech_table1l_none"] == 5
    assert v["mech_table2l_entry"] + v["mech_table2l_diffuse"] + v["mech_table2l_none"] == v["n_table"]
    assert v["mech_table2l_entry"] == labels.count("entry lookup") == v["formed_table"] == v["solved_table"]
    assert v["table_n_plateau"] == v["n_table"] - v["mech_table2l_entry"] and v["formed_table1l"] == 0
    entry = {n: r for n, r in recs.items() if r["label"] == "entry lookup"}
    assert v["table_entry_seeds"] == "0, 3 and 4" and sorted(entry) == [f"table-none-attn-2l-s{s}" for s in (0, 3, 4)]
    assert v["table_writer_min"] >= 0.9 and v["table_reader_min"] >= 0.9            # "as designed"
    for n, r in entry.items():
        seed = n.rsplit("-s", 1)[1]
        assert r["mode"] == "Q" and v[f"table_path_s{seed}_lo"] > 1 and v[f"table_path_s{seed}"] == r["effect"]
    diffuse = [r for r in recs.values() if r["label"] == "diffuse lookup"]
    assert len(diffuse) == v["mech_table2l_diffuse"] == 1 and diffuse[0]["mode"] == "V"
    assert mechanisms.PATH <= diffuse[0]["effect"] < 1.5 * mechanisms.PATH          # "just over the threshold"
    plateau = [r for r in recs.values() if r["label"] != "entry lookup"]
    assert all(r["reader_attention"] is None or r["reader_attention"] < mechanisms.ATTENTION for r in plateau)
    # the losses: near ln 4 (within 0.1 of it) for the plateau and the one-layer control, far below for the rest
    assert v["table_entry_loss_max"] < 0.01 < 1 < v["table_plateau_min"]
    for k in ("table_plateau_min", "table_plateau_max", "loss_table1l_min", "loss_table1l_max"):
        assert abs(v[k] - math.log(4)) < 0.1, k
    # the figure: the looked-up Q path the largest by far (ten times any other path of its model), and every path
    # of the plateau's models small beside the smallest of them (a twentieth)
    models = {m["name"]: m for m in read_table()["models"] if m["family"] == "table-none-attn-2l"}
    q = read_table()["modes"].index("Q")
    for n in entry:
        g = sorted((x for mode in models[n]["ground_truth"]["mean-circuit"] for x in mode), reverse=True)
        assert g[0] == max(models[n]["ground_truth"]["mean-circuit"][q]) > 10 * g[1], n
    smallest = min(max(models[n]["ground_truth"]["mean-circuit"][q]) for n in entry)
    assert all(max(max(mode) for mode in models[n]["ground_truth"]["mean-circuit"]) < smallest / 20
               for n in models if n not in entry)


def test_lookup_and_text_models_are_reported_apart(report, v):
    """The zoo: "A model whose label says it has no circuit, or only a diffuse one, is reported apart
    below, whatever its path effects: that takes the lookup models, the K table-lookup models on the plateau,
    the word-level and character-level text models and the repetitive-text models without induction out of
    the main tables, and the three models with LayerNorm labelled none formed"; Results: the models apart are,
    "by their recorded mechanism the lookup models, the K table-lookup models on the plateau, the word-level
    and character-level text models, the N repetitive-text models that formed none
    and the three models with LayerNorm labelled none formed; and a reverse-copy model whose largest V path
    stays under" the threshold."""
    card = report["scorecards"]["mean-circuit|task"]
    apart = set(card["circuitless_models"])
    assert not [n for n in card["models"] if n.startswith(("lookup", "words", "text", "recall-none-attn-1l"))]
    assert {n for n in card["model_modes"] if n.startswith(("lookup", "words", "text"))} <= apart
    reptext_apart = {n for n in apart if n.startswith("reptext")}
    assert len(reptext_apart) == v["mech_reptext_none"]
    assert {n for n in card["models"] if n.startswith("reptext")} | reptext_apart == {
        n for n in card["model_modes"] if n.startswith("reptext")}
    assert len(card["models"]) - len([n for n in card["models"] if not n.startswith("reptext")]) == v["mech_reptext_prev"]
    table_apart = {n for n in apart if n.startswith("table")}
    assert table_apart == {"table-none-attn-2l-s1", "table-none-attn-2l-s2"} and len(table_apart) == v["table_n_plateau"]
    others = apart - {n for n in apart if n.startswith(("lookup", "words", "text", "reptext", "table"))}
    assert others == {"induction-ln-mlp-2l-s2", "reverse-ln-mlp-2l-s0", "reverse-ln-mlp-2l-s4",
                      "reverse-rms-attn-2l-s0"}, others


def test_configuration_by_configuration(v):
    """Results, configuration by configuration: "The difference lies above zero in 1 configuration, recall,
    the one task that forces V-composition, and below zero in 2, the two reverse-copy configurations. These 9
    tests are their own family ...: with Holm over them alone, 1 above and 1 below remain, recall and the
    reverse-copy models with RMSNorm ...; the reverse-copy configuration with LayerNorm, whose interval ends at h
    over 3 seeds, does not"; What to use: "no score is shown to do better than path size on average over these 9
    configurations, but not on recall, where the token diagonal ranks pairs better by ...". Point estimates
    are the models' own (no bootstrap), so the signs are asserted on them with a margin; the interval ends
    are bootstrap draws, so each is asserted only where it is more than 0.2 from zero (a bootstrap seed
    moves an end by a few hundredths). The counts of intervals above and below zero are bootstrap-dependent
    at the margin: the reverse-copy configuration with LayerNorm ends at -0.019 of a width 1.05 (2%, bootstrap
    seed 0, Student's t over its 3 seeds), which the article gives with its number."""
    assert v["pc_n_configs"] == v["sc_n_configs"]
    rec, rev = "pc_recall_none_attn_2l", ("pc_reverse_rms_attn_2l", "pc_reverse_ln_mlp_2l")
    assert v[f"{rec}_diff"] > 0.3 and v[f"{rec}_diff_lo"] > 0.2
    assert v[f"{rec}_leader"] == "token diagonal"
    for k in rev:
        assert v[f"{k}_diff"] < -0.3 and v[f"{k}_diff_hi"] < 0, k
    assert (v["pc_n_td_above"], v["pc_n_td_below"]) == (1, 2)
    assert v["pc_table_none_attn_2l_diff"] < -0.3 and v["pc_table_none_attn_2l_diff_hi"] > 0.2
    assert v["pc_n_size_leads"] < v["pc_n_configs"]
    # "These 9 tests are their own family, outside the scorecard's: with Holm over them alone, 1 and 2 remain,
    # the weakest at adjusted p x": the review (sceptic4) found each of the three more than 5 standard errors
    # from zero
    assert (v["pc_n_td_above_holm"], v["pc_n_td_below_holm"]) == (1, 1)
    assert v["pc_largest_p_holm_kept"] < ALPHA
    # "... recall and the reverse-copy models with RMSNorm ...; the reverse-copy configuration with LayerNorm, whose
    # interval ends at h over 3 seeds, does not": its interval excludes zero before the correction, not after
    from headspace import configurations, scorecard
    from headspace.stats import holm
    from sitebuild.values.benchmark import CONFIG_PAIR, _zoo, configuration_p
    data = scorecard.zoo_data(_zoo())
    configs = [r["configuration"] for r in configurations.by_configuration(data, pairs=[CONFIG_PAIR], resamples=2)]
    assert len(configs) == v["pc_n_configs"]
    adjusted = dict(zip(configs, holm([configuration_p(data, f) for f in configs])))
    kept = sorted(f for f, a in adjusted.items() if a < ALPHA)
    assert kept == ["recall-none-attn-2l", "reverse-rms-attn-2l"], adjusted
    assert v["pc_reverse_ln_mlp_2l_diff_hi"] < 0 and v["pc_reverse_ln_mlp_2l_n"] == 3    # "each seed also has its own interval, over its own evaluation batches, and in N of the N seeds of the
    # configurations whose interval excludes zero it excludes zero on the same side. The seeds' differences run
    # from a to b on recall, ...": the seeds of recall and both reverse-copy configurations
    assert v["pc_seed_n_side"] == v["pc_seed_n"] == sum(v[f"{k}_n"] for k in (rec, *rev))
    assert 0 < v[f"{rec}_seed_near"] <= v[f"{rec}_seed_far"]
    for k in rev:
        assert v[f"{k}_seed_far"] <= v[f"{k}_seed_near"] < 0, k


@pytest.mark.slow
def test_the_held_configurations_every_seed_excludes_zero():
    """Results, configuration by configuration: "each seed also has its own interval, over its own evaluation
    batches, and in N of the N seeds of the configurations whose interval excludes zero it excludes zero on the
    same side", recomputed from the zoo: the token diagonal's Spearman minus path size's, per seed with a
    circuit, with its percentile interval over its 20 batches, on recall (above zero) and on both reverse-copy
    configurations (below). The nearest end is 0.14 (recall, seed 0) from zero, against batch noise of a few
    hundredths (the review's own bootstrap, sceptic6, gave the same)."""
    from headspace import scorecard
    from sitebuild.values.benchmark import _zoo, seed_intervals
    data = scorecard.zoo_data(_zoo())
    card = scorecard.scorecard(data, resamples=2)
    for family, sign in (("recall-none-attn-2l", 1), ("reverse-rms-attn-2l", -1), ("reverse-ln-mlp-2l", -1)):
        models = [n for n, f in zip(data.names, data.families) if f == family and n in card["models"]]
        ivs = seed_intervals(data, models)
        assert len(ivs) >= 3 and all((iv.lo if sign > 0 else -iv.hi) > 0.1 for iv in ivs), (family, ivs)


def test_the_multiplicity_policy_as_applied(report, v):
    """How the numbers are made: "Three sets of tests stand outside that family, and the text says so where each
    appears: the differences within single configurations, corrected by Holm over their own 9; the cards with the
    circuit decided by the path alone, each corrected over its own N; and edge attribution beside path size and
    the change of the Frobenius score's gap with the mode, not corrected at all". The path-alone cards carry
    their own family; the scorecard's family is every card of ``scorecards`` and no other."""
    family = report["scorecards"]["mean-circuit|task"]["holm_family"]
    assert family["cards"] == list(report["scorecards"]) and family["n_comparisons"] == v["sc_n_family"]
    for key, card in report["circuit_by_path"].items():
        assert card["n_comparisons"] == v["pa_n_comparisons"] < v["sc_n_family"], key
        assert card.get("holm_family", {}).get("cards") != family["cards"], key
    assert v["pc_n_configs"] < v["sc_n_family"]


def test_why_the_task_mode_stays_the_main_table(report, v):
    """Results: "The two differ for N of the M models with a circuit, all reverse copy: a V path of the
    threshold's size counts them in, but their recorded mechanism runs through Q. ... The verdict is the same in
    the mechanism's mode: ... no difference from a size score survives Holm". Recorded labels and modes, no
    bootstrap, except the verdict (test_the_mechanism_mode checks it)."""
    from headspace.benchmark import zoo_models
    from headspace.tasks import MODE_OF_TASK
    entries = zoo_models(ROOT / "zoo")
    card, mech = report["scorecards"]["mean-circuit|task"], report["scorecards"]["mean-circuit|mechanism"]
    other = [n for n in card["models"] if mech["model_modes"][n] != MODE_OF_TASK[entries[n]["task"]]]
    assert len(other) == v["sc_task_n_mech_other"] > 0 and v["sc_n_formed"] == len(card["models"])
    assert all(entries[n]["task"] == "reverse" and mech["model_modes"][n] == "Q" for n in other), other
    assert all(card["model_modes"][n] == "V" for n in other)
    assert v["sc_mech_smallest_p"] >= ALPHA


def test_the_newest_families_came_after_the_first_review():
    """A ground truth that discounts generic damage: "the zoo too was chosen after looking: both families joined it
    after the first review of this benchmark had seen its results". Both are outside the first zoo, and decision
    0004 records each as added for issue 47, the first review."""
    from sitebuild.values.benchmark import _FIRST_ZOO, NEWEST
    text = (ROOT / "docs" / "decisions" / "0004-zoo-mechanisms.md").read_text(encoding="utf-8")
    sections = text.split("\n### ")
    for family in NEWEST:
        assert family not in _FIRST_ZOO
        task = family.split("-")[0]
        assert any(f"`{task}" in sec.splitlines()[0] and "issue 47" in sec for sec in sections[1:]), family


def test_path_size_first_on_both_halves(v):
    """What to use, rule 2: "by Spearman path size came first on both halves in only N of M splits": the splits
    where each half chooses path size (a count of point estimates, no bootstrap)."""
    assert 0 < v["sp_rho_size_first_both"] <= v["sp_rho_both_ways"]
    assert v["sp_rho_size_first_both"] < v["sp_n_splits"]


def test_ground_truth_agreement_with_and_without_a_circuit(v):
    """Five ground truths: "the models without a circuit agree better"; mean ablation over
    all positions and over the circuit's positions agree "hardly at all" on the models with a circuit. The
    medians are the zoo's own point estimates (no bootstrap), compared with a margin; "hardly at all" is an
    interval that covers zero with ends more than 0.1 from it, which a bootstrap seed does not move past."""
    assert v["agree_n_circuit"] == v["sc_n_formed"] and v["agree_n_apart"] == v["sc_n_circuitless"]
    for key in ("mean_resample", "mean_resample_all", "all_circuit"):
        assert v[f"agree_{key}_apart"] > v[f"agree_{key}_circuit"] + 0.05, key
    assert abs(v["agree_all_circuit_circuit"]) < 0.2
    assert v["agree_all_circuit_circuit_lo"] < -0.1 and v["agree_all_circuit_circuit_hi"] > 0.1


def test_what_the_word_level_models_lack(v):
    """The zoo: "The word-level models come closest: N have a designed K path of X to Y nats, over the
    threshold, and a writer on the previous word, but their reader puts only A to B of its attention on the
    induction target (no word-level reader more than C), under the 0.3 an induction head needs"; How the
    numbers are made: "A path of that size alone, which 43 models have (above), is not enough" (one word per
    count: "has a circuit" for the scorecard's models, "a path of the threshold's size" for the zoo's).
    Recorded measurements, no bootstrap."""
    from headspace import benchmark as bench
    from headspace import mechanisms
    from sitebuild.values.benchmark import _zoo
    zoo = _zoo()
    recs = [mechanisms.read(zoo, n) for n, e in bench.zoo_models(zoo).items() if e["task"] == "words"]
    over = [r for r in recs if r["effect"] >= mechanisms.PATH]
    assert v["words_n_path_over"] == len(over) >= 1
    assert all(r["label"] == "none formed" for r in recs)
    assert all(r["writer_attention"] >= mechanisms.ATTENTION for r in over)
    assert v["words_reader_all_max"] < v["attention_threshold"] == mechanisms.ATTENTION
    assert v["words_path_min"] >= v["circuit_effect"]
    assert v["n_formed"] > v["sc_n_formed"]


def test_size_orders_the_pairs_outside_the_circuit(v):
    """What the ground truth rewards: "Much of what a size score earns here is ordering pairs outside any
    circuit by how much their ablation hurts: on those pairs alone ... path size's Spearman with mean ablation
    is ... and the Frobenius score's ...". The means are the zoo's own (no bootstrap); path size's interval
    lies above zero with its lower end more than 0.05 from it, and the Frobenius score's covers zero with both
    ends more than 0.05 away, which a bootstrap seed does not move past."""
    for g in ("mean", "resample"):
        assert v[f"out_{g}_pn"] > v[f"out_{g}_frob"] + 0.15
        assert v[f"out_{g}_pn_lo"] > 0.05
        assert v[f"out_{g}_frob_lo"] < -0.05 and v[f"out_{g}_frob_hi"] > 0.05
    # size alone against path size, paired: stated with its interval, asserted only on the zoo's own estimate
    assert abs(v["cf_size_minus_pn"]) < 0.15 and v["cf_size_minus_pn_lo"] < v["cf_size_minus_pn"] < v["cf_size_minus_pn_hi"]


def test_counts_in_prose_are_values(v, report):
    """Numbers the prose once typed in words, now values: the repetitive-text models "with a circuit and ...
    without", "the family would have 1 circuit, not 3", the "models with LayerNorm labelled none formed"
    reported apart, and "Before the correction N intervals exclude zero" (beyond path size). Each is checked
    against what the sentence says it counts."""
    assert v["mech_reptext_prev"] + v["mech_reptext_none"] == v["n_reptext"]
    assert v["reptext_keys_circuits"] == v["mech_reptext_prev"] - v["reptext_formed_keys_below"]
    apart = report["scorecards"]["mean-circuit|task"]["circuitless_models"]
    ln_none = [n for n in apart if "-ln-" in n and not n.startswith(("text", "words", "reptext"))]
    assert v["n_ln_none"] == len(ln_none)


def test_counts_in_words(v):
    """Counts the prose writes in words: "the five configurations we kept from our first zoo", "Every model has
    four heads per layer", and the held-out splits' "only about half the tries by Spearman"."""
    from headspace.benchmark import read_table
    from sitebuild.values.benchmark import _FIRST_ZOO
    t = read_table()
    assert len(_FIRST_ZOO) == 5 and set(_FIRST_ZOO) <= set(t["families"])
    assert {m["n_heads"] for m in t["models"]} == {4}
    assert 0.4 <= v["sp_rho_first"] / v["sp_n_directions"] <= 0.6


def test_the_held_out_splits_verdict_words_are_its_ranks(report, v):
    """Held out, the split's verdict: "On this split <neither rule carries over>: each half's first choice <is
    not first> on the other". Both phrases are values (sitebuild.values.benchmark.held_out_words); here they
    are recomputed from the report's ranks on the other half, so a new zoo that makes a choice first on the
    other half changes the words, and this test says the sentence around them must still read. Ranks of point
    estimates: no bootstrap draw moves them."""
    ranks = {stat: [d["rank_on_held_out_half"] for d in report["held_out"][f"mean-circuit|task|{stat}"]["verdict"]]
             for stat in ("spearman", "precision_at_k")}
    assert [v["ho_rho_A_rank"], v["ho_rho_B_rank"]] == ranks["spearman"]
    assert [v["ho_pk_A_rank"], v["ho_pk_B_rank"]] == ranks["precision_at_k"]
    carry = sum(all(r == 1 for r in rs) for rs in ranks.values())
    firsts = sum(r == 1 for rs in ranks.values() for r in rs)
    from sitebuild.values.benchmark import held_out_words
    assert held_out_words(v) == {"ho_rules_verdict": v["ho_rules_verdict"], "ho_first_choices": v["ho_first_choices"]}
    assert (carry, v["ho_rules_verdict"]) == (0, "neither rule carries over")
    assert (firsts, v["ho_first_choices"]) == (0, "is not first")


def test_the_paired_change_of_the_gap(report, v):
    """The mode: "Nor is the shrinking itself shown: paired over one bootstrap, the gap changes by X (lo to hi), an
    interval that reaches just past zero. It is an estimate, not a finding"; in the mechanism's mode "paired, it
    is X (lo to hi) smaller than in the task's mode, again reaching past zero". The values are the report's
    (headspace.scorecard.mode_gaps); each mode's gap estimate there is its card's; the change's estimate is the
    zoo's own (no draw), so "smaller" is asserted on it; the lower ends are bootstrap quantiles within 3% of
    their interval's width of zero (see the module docstring): "just past" is asserted as within 0.02."""
    gaps = report["mode_gaps"]["mean-circuit"]
    assert gaps["gap"] == {"score": "frobenius", "against": "product_norm", "statistic": "spearman"}
    for mode, key in (("task", "sc_gap_task"), ("largest", "sc_gap_largest"), ("mechanism", "sc_gap_mechanism")):
        assert gaps["gaps"][mode][0] == v[key], mode                   # the same estimate as the card's
    for mode in ("largest", "mechanism"):
        d, lo, hi, p = gaps["differences"][f"{mode}-task"]
        k = f"sc_gap_change_{mode}"
        assert [v[k], v[f"{k}_lo"], v[f"{k}_hi"]] == [d, lo, hi]
        assert d > 0                                                   # "smaller than in the task's mode"
        assert -0.05 < lo < 0 < hi and p > ALPHA, (mode, lo, hi, p)    # "reaches past zero"


def test_the_labels_set_aside(report, v):
    """The models without a circuit, "With the labels set aside": with the path alone deciding, N models in M
    configurations have a circuit, K more: "the lookup models, word-level models and reverse-copy models with
    LayerNorm labelled none formed"; within each card's own family "the number of differences from a size
    score that survive Holm is 0, and J scores hold beyond head sizes and 0 beyond path size. More hold beyond head
    sizes here than on the main card because the family is smaller and the configurations more ... Read in the mode
    of each model's largest path ..., 0 scores hold beyond path size; the subspace score comes closest ... So on the
    main ground truth nothing beyond path size is shown, whichever models count as having a circuit". What the
    sensitivity shows, whichever way: the counts are asserted as they are. The subspace score's p in its own
    family is 0.13 (bootstrap seed 0), within a factor of 5 of 0.05 (module docstring)."""
    from headspace.benchmark import zoo_models
    entries = zoo_models(ROOT / "zoo")
    main, path = report["scorecards"]["mean-circuit|task"], report["circuit_by_path"]["mean-circuit|task"]
    largest = report["circuit_by_path"]["mean-circuit|largest"]
    assert path["circuit_by"] == largest["circuit_by"] == "path" and main["circuit_by"] == "label"
    assert set(main["models"]) <= set(path["models"])
    added = [n for n in path["models"] if n not in main["models"]]
    assert v["pa_n_formed"] == len(path["models"]) and v["pa_n_added"] == len(added)
    assert v["pa_n_configs"] == path["n_configurations"] > main["n_configurations"]
    assert {entries[n]["mechanism"] for n in added} <= {"none formed", "diffuse lookup"}
    assert sorted({entries[n]["family"] for n in added}) == ["lookup-rms-attn-2l", "reverse-ln-mlp-2l", "words-none-attn-2l"]
    assert v["pa_added_lookup"] + v["pa_added_words"] + v["pa_added_reverse"] == len(added)
    assert v["pa_added_lookup"] == v["n_lookup"]                         # "the lookup models": all of them
    for card in (path, largest):
        assert not [r for r in rows(card) if r["against"] != "0" and r["statistic"] in COMPARED and holds(r)]
    assert v["pa_n_held"] == 0
    normalised = [s for s in path["scores"] if s not in ("norm_product", "product_norm")]
    beyond = lambda c, st: sorted(r["score"] for r in rows(c) if r["statistic"] == st and r["score"] in normalised and holds(r))  # noqa: E731
    assert len(beyond(path, "partial_norm_product")) == v["pa_n_partial_np_holds"]
    assert beyond(path, "partial_product_norm") == [] and v["pa_n_partial_pn_holds"] == 0
    # "More hold beyond head sizes than on the main card: over 11 configurations Student's t asks fewer standard
    # errors than over 9, and the family is smaller; but 9 of these models are ones whose labels name no circuit"
    assert v["pa_n_partial_np_holds"] > v["sc_n_partial_np_holds"]
    assert v["pa_n_comparisons"] < v["sc_n_family"] and v["pa_n_configs"] > v["sc_n_configs"]
    # "Read in the mode of each model's largest path ..., 0 scores hold beyond path size; the subspace score comes
    # closest, at x (lo to hi), adjusted p q in its card's family and r with every comparison of the report counted"
    held = beyond(largest, "partial_product_norm")
    assert len(held) == v["pa_largest_n_partial_pn_holds"] == 0
    pn = {r["score"]: r for r in rows(largest) if r["statistic"] == "partial_product_norm" and r["score"] in normalised}
    assert min(pn, key=lambda s: pn[s]["p"]) in ("subspace", "projection_kernel")   # "comes closest"
    assert v["pa_largest_subspace_p_holm"] == pn["subspace"]["p_holm"] >= ALPHA
    assert v["pa_largest_subspace_p_all"] >= v["pa_largest_subspace_p_holm"]
