"""The numbers site/content/posts/which-composition-score.md states
(``{{< value "benchmark.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

import functools

import numpy as np

from ._shared import _holds, _the_same


def _bench_row(t: dict, group: str, mode: str, gt: str, score: str) -> dict:
    """The row of table ``t`` for these choices, as ``{field: value}``."""
    index = _ROWS.get(id(t))
    if index is None or index[0] is not t:
        index = _ROWS[id(t)] = (t, {tuple(r[:4]): dict(zip(t["row_fields"], r)) for r in t["rows"]})
    return index[1][(group, mode, gt, score)]


_ROWS: dict = {}


def _next(t: dict, group: str, gt: str, first: str) -> str:
    """The score with the next highest Spearman after ``first`` in ``group`` (each its task's mode), twins
    counted once: the one the paired bootstrap has the best chance of not telling apart from it."""
    from headspace.benchmark import modes_read, twin_classes
    rho = {s: _bench_row(t, group, "task", gt, s)["spearman"] for s in t["scores"]}
    others = [c[0] for c in twin_classes(t["scores"], modes_read(t, group, "task")) if first not in c]
    return max(others, key=rho.get)


def _ties(t: dict, group: str, mode: str, gt: str, score: str) -> int:
    """How many other classes of scores (twins counted once, ``headspace.benchmark.TWINS``) the
    benchmark cannot tell apart from ``score``'s Spearman with ``gt``."""
    from headspace.benchmark import separation
    return len(separation(t, group, mode, gt, score)[1])


def _others(t: dict, group: str, mode: str = "task") -> int:
    """How many other classes of scores there are beside one (twins counted once)."""
    from headspace.benchmark import n_classes
    return n_classes(t, group, mode) - 1


def _reverse_attention_to_answer() -> list[float]:
    """The reverse-copy models' second layer at the circuit's positions: the share of attention its
    most attentive head puts on the answer's own position (the token before the earlier occurrence
    of the current one), one per reverse-copy model of the zoo, on the first evaluation batch."""
    from pathlib import Path

    from headspace import benchmark as bench
    from headspace.tasks import PARTNER
    zoo = Path(__file__).resolve().parents[3] / "zoo"
    tokens, mask = bench.eval_batches(zoo, "reverse")
    tokens, mask = tokens[0], mask[0]
    b, t = np.nonzero(mask)
    j = np.array([np.flatnonzero(tokens[i, :q] == tokens[i, q] - PARTNER)[-1] for i, q in zip(b, t)])
    shares = []
    for name, e in bench.zoo_models(zoo).items():
        if e["task"] == "reverse":
            pattern = bench.load_zoo_model(zoo, name).attention_patterns(tokens)     # [batch, L, H, seq, seq]
            shares.append(pattern[b, 1, :, t, j - 1].mean(0).max())
    return [float(x) for x in shares]


def _reverse_q_over_v(resamples: int = 1000) -> tuple[int, int]:
    """The reverse-copy models' largest Q path against their largest V path (mean ablation at the
    circuit's positions), paired over the evaluation batches: ``(n_q, n_v)``, how many models'
    interval of (largest Q) - (largest V) over a bootstrap of their batches lies above zero, and how
    many below."""
    from pathlib import Path

    from headspace import benchmark as bench
    zoo = Path(__file__).resolve().parents[3] / "zoo"
    gts = bench.read_ground_truth(zoo)
    g, q, v = bench.GT_NAMES.index("mean-circuit"), bench.MODES.index("Q"), bench.MODES.index("V")
    rng = np.random.default_rng(0)
    bounds = []
    for name, e in bench.zoo_models(zoo).items():
        if e["task"] == "reverse":
            gt = gts[name][g]                                                    # [batches, modes, L, H, L, H]
            gt = gt.reshape(gt.shape[0], gt.shape[1], -1)
            drawn = gt[rng.integers(0, len(gt), (resamples, len(gt)))].mean(1)     # [resamples, modes, pairs]
            diff = drawn[:, q].max(-1) - drawn[:, v].max(-1)
            bounds.append(np.quantile(diff, [(1 - bench.LEVEL) / 2, (1 + bench.LEVEL) / 2]))
    bounds = np.array(bounds)
    return int((bounds[:, 0] > 0).sum()), int((bounds[:, 1] < 0).sum())


def benchmark(t: dict | None = None, checked: bool = False) -> dict:
    """site/content/posts/which-composition-score.md"""
    # ``t``: the table drawn with another bootstrap seed (tests/site/test_claims.py); default the shipped
    # one. ``checked``: also the values computed only for the claim tests, which the article does not state
    # The composition-score benchmark on the zoo. Every statistic is read from the benchmark table
    # (headspace.benchmark, shipped as headspace/models/benchmark.json) that the page's figure
    # reads; which score has the highest point estimate is reported together with the scores the
    # paired bootstrap cannot tell from it. The build asserts no claim a new seed or batch could
    # break (no inequality between two estimates, nothing an interval decides): those claims are
    # tests in tests/site/test_claims.py, each naming its sentence.
    from headspace.benchmark import CIRCUIT_EFFECT, LEVEL, MIN_EFFECT, REL_EFFECT, circuit_present, read_table, solves
    from headspace.pair_scores import BASELINES
    t = read_table() if t is None else t
    models = t["models"]
    out = {"n_models": len(models), "n_families": len(t["families"]),
           # the level of every interval (percentile bootstrap, headspace.benchmark)
           "level": LEVEL,
           "n_seeds": min(sum(m["family"] == f for m in models) for f in t["families"]),
           "n_batches": t["n_batches"], "batch": t["batch"], "resamples": t["resamples"],
           "min_effect": MIN_EFFECT, "rel_effect": REL_EFFECT, "n_scores": len(t["scores"]),
           # the width of every model's residual stream and heads (the zoo's one shape)
           "d_model": _the_same("benchmark.d_model", [m["d_model"] for m in models]),
           "d_head": _the_same("benchmark.d_head", [m["d_head"] for m in models])}
    secs = np.array([m["train_seconds"] for m in models], float)
    out.update(train_seconds_median=float(np.median(secs)), train_seconds_min=float(secs.min()),
               train_seconds_max=float(secs.max()))
    out.update(steps_min=min(m["steps"] for m in models), steps_max=max(m["steps"] for m in models),
               circuit_effect=CIRCUIT_EFFECT)
    own_mode = {task: t["modes"].index(t["mode_of_task"][task]) for task in t["tasks"]}

    def top(m, mode=None):
        """The model's largest path (mean ablation, circuit positions) in ``mode`` (default: its task's)."""
        return max(m["ground_truth"]["mean-circuit"][own_mode[m["task"]] if mode is None else mode])

    def solved(m):
        return solves(m["task"], m["heldout_circuit_loss"], m["circuit_loss_at_step_0"])

    def formed(m):
        return circuit_present(m["task"], m["ground_truth"]["mean-circuit"])

    out["n_solved"] = sum(map(solved, models))
    out["n_formed"] = sum(map(formed, models))
    for task in t["tasks"]:
        ms = [m for m in models if m["task"] == task]
        # held-out loss at the circuit's positions: the worst model of the task, and at step 0
        out[f"loss_{task}_max"] = max(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{task}_min"] = min(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{task}_step0"] = min(m["circuit_loss_at_step_0"] for m in ms)
        out[f"n_{task}"] = len(ms)
        out[f"solved_{task}"] = sum(map(solved, ms))
        out[f"formed_{task}"] = sum(map(formed, ms))
        out[f"steps_{task}_max"] = max(m["steps"] for m in ms)
        out[f"top_{task}_max"] = max(map(top, ms))
    # chance on the induction task's vocabulary (headspace.tasks.SHAPES): ln of its size, in nats
    from headspace.tasks import SHAPES
    out["vocab_induction"] = SHAPES["induction"][0]
    out["chance_induction"] = float(np.log(SHAPES["induction"][0]))
    # reverse copy: every model solves it; how many reach a V path of CIRCUIT_EFFECT, and how the
    # largest Q path compares with the largest V path (a model can find the answer's own position)
    rev = [m for m in models if m["task"] == "reverse"]
    q_mode, v_mode = t["modes"].index("Q"), t["modes"].index("V")
    out["top_reverse_min"] = min(map(top, rev))
    out["top_reverse_q_min"] = min(top(m, q_mode) for m in rev)
    out["top_reverse_q_max"] = max(top(m, q_mode) for m in rev)
    out["top_reverse_v_max"] = max(top(m, v_mode) for m in rev)
    # how many models' largest Q path outweighs their largest V path, and the reverse, beyond the
    # evaluation batches' noise (a paired bootstrap over each model's batches; counts, not asserted)
    out["n_reverse_q_over_v"], out["n_reverse_v_over_q"] = _reverse_q_over_v()
    # the median share, and how many models' most attentive head puts most of its attention there
    shares = _reverse_attention_to_answer()
    out["reverse_attention_to_answer"] = float(np.median(shares))
    out["reverse_attention_most"] = 0.5
    out["n_reverse_attend_answer"] = sum(x > out["reverse_attention_most"] for x in shares)
    _holds(all(map(solved, rev)), "every reverse-copy model solves its task")
    # the induction models by normalisation: how many of the normalised ones formed their circuit
    normed = [m for m in models if m["task"] == "induction" and m["normalization_type"]]
    out["n_induction_normed"], out["formed_induction_normed"] = len(normed), sum(map(formed, normed))
    # lookup: every model's largest Q path (the task leaves ln 4 nats to any model that reads the two
    # cues apart, headspace.tasks), and the largest V path beside it
    lookup = [m for m in models if m["task"] == "lookup"]
    out["lookup_q_min"], out["lookup_q_max"] = min(map(top, lookup)), max(map(top, lookup))
    out["lookup_v_max"] = max(top(m, v_mode) for m in lookup)
    _holds(all(map(solved, lookup)) and all(map(formed, lookup)),
           "every lookup model solves its task and has a Q path of the threshold's size")
    # agreement of the ground truths with each other, in each model's own mode: the median over models
    # with its interval (the table's hierarchical draws), and the lowest model's, with its interval
    # over that model's batches
    own = [t["mode_of_task"][m["task"]] for m in models]
    for a, b, key in (("mean-all", "mean-circuit", "all_circuit"), ("mean-circuit", "resample-circuit", "mean_resample"),
                      ("mean-all", "resample-all", "mean_resample_all")):
        out[f"agree_{key}_median"], out[f"agree_{key}_median_lo"], out[f"agree_{key}_median_hi"] = \
            t["agreement_median"][f"{a}|{b}"]
        per_model = [agree[f"{mode}:{a}|{b}"] for agree, mode in zip(t["agreement"], own)]
        lowest = min((r for r in per_model if r[0] is not None and np.isfinite(r[0])), key=lambda r: r[0])
        out[f"agree_{key}_min"], out[f"agree_{key}_min_lo"], out[f"agree_{key}_min_hi"] = lowest
    # the main table: all models, each in its task's mode
    for gt in ("mean-circuit", "resample-circuit", "mean-all", "resample-all"):
        tag = gt.replace("-", "_")
        rows = {s: _bench_row(t, "all", "task", gt, s) for s in t["scores"]}
        for s, r in rows.items():
            for f in ("spearman", "spearman_lo", "spearman_hi", "auroc", "auroc_lo", "auroc_hi"):
                if gt == "mean-circuit" or f in ("spearman", "spearman_lo", "spearman_hi"):
                    out[f"{tag}_{s}_{f}"] = float("nan") if r[f] is None else r[f]
        best = max(rows, key=lambda s: rows[s]["spearman"])
        worst = min(rows, key=lambda s: rows[s]["spearman"])
        out[f"{tag}_best"], out[f"{tag}_best_rho"] = best, rows[best]["spearman"]
        out[f"{tag}_worst"], out[f"{tag}_worst_rho"] = worst, rows[worst]["spearman"]
        for which, s in (("best", best), ("worst", worst)) if gt == "mean-all" else ():
            out[f"{tag}_{which}_lo"], out[f"{tag}_{which}_hi"] = rows[s]["spearman_lo"], rows[s]["spearman_hi"]
        # the next score, not a count of ties: the count moves by one between bootstrap seeds
        # (resample-all: 6 or 5); whether the bootstrap tells the first from it is a claim test
        out[f"{tag}_next"] = _next(t, "all", gt, best)
    # against mean ablation over all positions and over the circuit's: for how many scores the first
    # interval lies wholly below the second (a count of disjoint intervals; no point estimate is
    # compared, and the article gives both intervals of every score in its tables)
    out["n_all_below_circuit"] = sum(_bench_row(t, "all", "task", "mean-all", s)["spearman_hi"]
                                     < _bench_row(t, "all", "task", "mean-circuit", s)["spearman_lo"]
                                     for s in t["scores"])
    # how large the circuit's paths are: per model the largest path effect in its own mode (mean
    # ablation, circuit positions), the median over each task's models
    for task in t["tasks"]:
        tops = [max(m["ground_truth"]["mean-circuit"][t["modes"].index(t["mode_of_task"][task])])
                for m in models if m["task"] == task]
        out[f"{task}_top_effect_median"] = float(np.median(tops))
    # scores that rank alike by construction: the same Spearman in every row of the table (exact,
    # not a noisy comparison: frobenius_baseline is frobenius minus a constant per mode and shape;
    # projection_kernel is d_head times subspace minus a constant when every head has full rank;
    # token is whitened for Q and K). headspace.benchmark.TWINS lists them; the separation counts
    # count each set of twins once, so this holds them to it: equal in every row where they are twins
    from headspace.benchmark import TWINS, modes_read
    fields = t["row_fields"]
    by = {(r["group"], r["mode"], r["ground_truth"], r["score"]): r["spearman"]
          for r in (dict(zip(fields, r_)) for r_ in t["rows"])}
    for a, b, where in TWINS:
        pairs = [(v, by[k[:3] + (b,)]) for k, v in by.items() if k[3] == a and modes_read(t, k[0], k[1]) <= set(where)]
        _holds(pairs and all(x == y for x, y in pairs), f"{a} ranks as {b} in every row of the benchmark in {where}")
    # the families whose circuit formed in every seed: the plain induction models get the article's
    # second table; the two- and three-layer RMSNorm induction models, the reverse-copy models with
    # MLPs and the lookup models a sentence each
    formed_families = (("formed", "induction-none-attn-2l"), ("formedrms", "induction-rms-attn-2l"),
                       ("formed3l", "induction-rms-attn-3l"), ("formedrev", "reverse-ln-mlp-2l"),
                       ("formedlookup", "lookup-rms-attn-2l"))
    all_formed = [f for f in t["families"] if all(formed(m) for m in models if m["family"] == f)]
    _holds(all_formed == [f for _, f in formed_families],
           "the plain induction family, the two- and three-layer RMSNorm induction families, the reverse-copy "
           "models with MLPs and the lookup models, and only they, formed their circuit in every seed")
    for tag, family in formed_families:
        rows = {s_: _bench_row(t, family, "task", "mean-circuit", s_) for s_ in t["scores"]}
        if tag == "formed":
            for s_, r in rows.items():
                for f in ("spearman", "spearman_lo", "spearman_hi", "auroc", "auroc_lo", "auroc_hi"):
                    out[f"formed_{s_}_{f}"] = r[f]
        best = max(rows, key=lambda s_: rows[s_]["spearman"])
        out[f"{tag}_best"] = best
        out[f"{tag}_best_rho"] = rows[best]["spearman"]
        out[f"{tag}_best_lo"], out[f"{tag}_best_hi"] = rows[best]["spearman_lo"], rows[best]["spearman_hi"]
        out[f"{tag}_n_others"] = _others(t, family)
        out[f"{tag}_best_distinguished"] = out[f"{tag}_n_others"] - _ties(t, family, "task", "mean-circuit", best)
        out[f"{tag}_next"] = _next(t, family, "mean-circuit", best)
        tops = [top(m) for m in models if m["family"] == family]
        out[f"{tag}_top_min"], out[f"{tag}_top_max"] = min(tops), max(tops)
    out["n_other_scores"] = _others(t, "all")
    # which scores find the circuit's pairs: the lower ends of the built-in scores' AUROC intervals on
    # the families other than reverse copy, their median and the lowest (no count against a threshold,
    # which another draw of the bootstrap could move by one)
    los = {(f, s_): _bench_row(t, f, "task", "mean-circuit", s_)["auroc_lo"] for _, f in formed_families
           if f != "reverse-ln-mlp-2l" for s_ in t["scores"] if s_ not in BASELINES}
    out["found_auroc_lo_median"] = float(np.median(list(los.values())))
    lowest = min(los, key=los.get)
    out["found_auroc_lo_min"], out["found_auroc_lo_min_score"] = los[lowest], lowest[1]
    out["found_auroc_lo_min_task"] = next(m["task"] for m in models if m["family"] == lowest[0])
    out["n_found_total"] = len(los)
    # the reverse-copy models with MLPs: the built-in scores' AUROCs, and the baselines' lower ends
    rev = {s_: _bench_row(t, "reverse-ln-mlp-2l", "task", "mean-circuit", s_) for s_ in t["scores"]}
    rev_auroc = [r["auroc"] for s_, r in rev.items() if s_ not in BASELINES]
    out["formedrev_auroc_min"], out["formedrev_auroc_max"] = min(rev_auroc), max(rev_auroc)
    for b_ in BASELINES:
        out[f"formedrev_{b_}_auroc_lo"] = rev[b_]["auroc_lo"]
    # (the words about these counts, "none does", "they find the circuit's pairs", are claims about
    # intervals that a new batch could break: tests/site/test_claims.py checks them, not the build)
    out["n_formed_families"] = len(formed_families)
    out["n_formed_others"] = len(formed_families) - 1
    # how many different scores come first on those families
    # (a count of point estimates' leaders, stated beside the paired test; not asserted)
    out["n_formed_firsts"] = len({out[f"{tag}_best"] for tag, _ in formed_families})
    # ("on no family is the first separated from all the others", "no score stands apart" on the
    # three-layer models: tests/site/test_claims.py)
    # the three-layer induction models against the plain ones, score by score: for how many scores
    # the three-layer interval lies wholly below the plain one (disjoint intervals; the families are
    # different models), and the three-layer first's interval on the plain models
    three = {s_: _bench_row(t, "induction-rms-attn-3l", "task", "mean-circuit", s_) for s_ in t["scores"]}
    plain = {s_: _bench_row(t, "induction-none-attn-2l", "task", "mean-circuit", s_) for s_ in t["scores"]}
    out["formed3l_n_below"] = sum(three[s_]["spearman_hi"] < plain[s_]["spearman_lo"] for s_ in t["scores"])
    out["formed3l_n_above"] = sum(three[s_]["spearman_lo"] > plain[s_]["spearman_hi"] for s_ in t["scores"])
    b3 = out["formed3l_best"]
    out["formed3l_best_plain_rho"] = plain[b3]["spearman"]
    out["formed3l_best_plain_lo"], out["formed3l_best_plain_hi"] = plain[b3]["spearman_lo"], plain[b3]["spearman_hi"]
    # the two-layer induction models with LayerNorm and MLPs: how many left the plateau, in how many steps
    ln = [m for m in models if m["family"] == "induction-ln-mlp-2l"]
    out["n_induction_ln"], out["formed_induction_ln"] = len(ln), sum(map(formed, ln))
    out["steps_induction_ln"] = _the_same("benchmark.steps_induction_ln", [m["steps"] for m in ln])
    _holds(0 < out["formed_induction_ln"] < len(ln),
           "some but not all of the induction models with LayerNorm and MLPs formed their circuit")
    _holds(all(formed(m) == solved(m) for m in ln),
           "the induction models with LayerNorm and MLPs that formed their circuit are those that solve the task")
    for task in t["tasks"]:
        rows = {s: _bench_row(t, task, "task", "mean-circuit", s) for s in t["scores"]}
        best = max(rows, key=lambda s: rows[s]["spearman"])
        out[f"{task}_best"] = best
        out[f"{task}_best_rho"] = rows[best]["spearman"]
        out[f"{task}_best_lo"] = rows[best]["spearman_lo"]
        out[f"{task}_best_hi"] = rows[best]["spearman_hi"]
        # the next score and its interval, not a count of ties (induction 3 or 4, text 5 or 6 between
        # bootstrap seeds 0-3); whether the bootstrap tells them apart is a claim test
        nxt = _next(t, task, "mean-circuit", best)
        out[f"{task}_next"] = nxt
        out[f"{task}_next_rho"] = rows[nxt]["spearman"]
        out[f"{task}_next_lo"], out[f"{task}_next_hi"] = rows[nxt]["spearman_lo"], rows[nxt]["spearman_hi"]
        out[f"{task}_frobenius_rho"] = rows["frobenius"]["spearman"]
        out[f"{task}_frobenius_lo"] = rows["frobenius"]["spearman_lo"]
        out[f"{task}_frobenius_hi"] = rows["frobenius"]["spearman_hi"]
    # the magnitude baselines (headspace.pair_scores.BASELINES) against the built-in scores, on the whole
    # zoo and on the lookup models: the built-in score with the highest point estimate, and on the whole
    # zoo how many classes of built-in scores the paired bootstrap puts above norm_product (0 on bootstrap
    # seeds 0 to 3; the words about it are tests in tests/site/test_claims.py)
    from headspace.benchmark import modes_read, separation, twin_classes
    for tag, group in (("all", "all"), ("lookup", "lookup-rms-attn-2l")):
        rows = {s_: _bench_row(t, group, "task", "mean-circuit", s_) for s_ in t["scores"]}
        builtin = [s_ for s_ in t["scores"] if s_ not in BASELINES]
        best = max(builtin, key=lambda s_: rows[s_]["spearman"])
        out[f"base_{tag}_builtin_best"] = best
        out[f"base_{tag}_builtin_rho"] = rows[best]["spearman"]
        out[f"base_{tag}_builtin_lo"], out[f"base_{tag}_builtin_hi"] = rows[best]["spearman_lo"], rows[best]["spearman_hi"]
        for b_ in BASELINES:
            out[f"base_{tag}_{b_}_rho"] = rows[b_]["spearman"]
            out[f"base_{tag}_{b_}_lo"], out[f"base_{tag}_{b_}_hi"] = rows[b_]["spearman_lo"], rows[b_]["spearman_hi"]
        if tag == "all":       # (on lookup, how many is a count one draw can move: not stated)
            apart = separation(t, group, "task", "mean-circuit", "norm_product")[1]
            classes = twin_classes(builtin, modes_read(t, group, "task"))
            out["base_all_n_builtin"] = len(classes)
            out["base_all_n_above_norm_product"] = sum(
                c not in apart and rows[c[0]]["spearman"] > rows["norm_product"]["spearman"] for c in classes)
    # lookup: the scores the bootstrap cannot tell from its first (two on bootstrap seeds 0-9; named)
    from headspace.benchmark import separation as separation_
    ties = sorted(c[0] for c in separation_(t, "lookup", "task", "mean-circuit", out["lookup_best"])[1])
    for i, name in enumerate(ties):
        out[f"lookup_tie_{i + 1}"] = name
    out["base_all_product_norm_apart"] = _others(t, "all") - _ties(t, "all", "task", "mean-circuit", "product_norm")
    # the seed part of the bootstrap: the distinct multisets of n seeds drawn from n, C(2n - 1, n)
    from math import comb
    out["n_seed_draws"] = comb(2 * out["n_seeds"] - 1, out["n_seeds"])
    # computed for the checks above, or for every task alike where the article states some
    checked_only = {"formed_best_distinguished", "base_all_n_above_norm_product", "base_all_n_builtin", "formed_n_others", "formedrms_next", "formed3l_next", "formedrev_next",
                    "formedlookup_next", "mean_circuit_next", "mean_all_next", "resample_circuit_next",
                    "formed_best_hi", "resample_all_best_rho", "resample_all_worst", "resample_all_worst_rho", "formed_best_lo", "formed_best_rho",
                    "formed_top_max", "formed_top_min", "mean_circuit_worst", "resample_circuit_best_rho",
                    "resample_circuit_worst", "resample_circuit_worst_rho", "loss_lookup_step0",
                    "loss_reverse_step0", "solved_induction", "solved_lookup", "solved_reverse", "solved_text",
                    "steps_induction_max", "steps_lookup_max", "steps_reverse_max", "steps_text_max", "top_induction_max",
                    "top_lookup_max", "top_reverse_max"}
    out.update(scorecard_values())
    return {k: v for k, v in out.items() if checked or (k not in checked_only and k not in UNSTATED)}


# -- the scorecard (headspace.scorecard): the questions a researcher asks, with intervals over
# configurations, seeds and batches, Holm over the comparisons, the held-out halves and the thresholds

#: The scores of the article's scorecard table, one a row (the twins frobenius_baseline and
#: projection_kernel rank as frobenius and subspace in every mode: headspace.benchmark.TWINS).
CARD_ROWS = ("frobenius", "svd_bound", "subspace", "token", "whitened", "frobenius_unfolded", "svd_component",
             "token_diagonal", "product_norm", "norm_product")
#: The statistics the Holm family compares with the size scores (besides each partial against 0).
COMPARED = ("spearman", "auroc", "top1", "precision_at_k")
#: Holm-adjusted p below which a comparison holds.
ALPHA = 0.05


def name(score: str) -> str:
    """A score as the article's prose names it: the site's reader-facing name, without "(baseline)"."""
    from headspace_site.figure.outputs import words
    return words(score).replace(" (baseline)", "")


def holding(card: dict, against_size: bool = True) -> list:
    """The comparisons of a scorecard that hold after Holm (``p_holm`` < ALPHA): with ``against_size``,
    those of a score against a size score on a statistic of COMPARED, else each partial against 0."""
    f = card["comparison_fields"]
    rows = [dict(zip(f, c)) for c in card["comparisons"]]
    return [r for r in rows if r["p_holm"] is not None and r["p_holm"] < ALPHA
            and ((r["against"] != "0") == against_size) and (not against_size or r["statistic"] in COMPARED)]


def smallest_p(card: dict) -> float:
    """The smallest Holm-adjusted p of any comparison of a score with a size score (COMPARED)."""
    f = card["comparison_fields"]
    return min(r["p_holm"] for r in (dict(zip(f, c)) for c in card["comparisons"])
               if r["against"] != "0" and r["statistic"] in COMPARED and r["p_holm"] is not None)


def difference(card: dict, score: str, against: str, statistic: str) -> list:
    """``[difference, lo, hi, p, p_holm]`` of ``score`` minus ``against`` on ``statistic`` in ``card``."""
    f = card["comparison_fields"]
    return next(c[3:] for c in card["comparisons"] if c[0] == score and c[1] == against and c[2] == statistic)


def _triple(out: dict, key: str, iv) -> None:
    out[key], out[f"{key}_lo"], out[f"{key}_hi"] = iv


@functools.lru_cache(maxsize=1)
def zoo_confounds() -> dict:
    """What the ground truths reward beside composition, on the zoo (``zoo/``): per ground truth, the
    scorecard of the perturbation's size alone as a score (its push into the reader, measured on the
    evaluation batches: ``headspace.controlled``), and edge attribution patching (first evaluation
    batch, resample) scored as a weight score is, against resample path patching."""
    from pathlib import Path

    from headspace import benchmark as bench
    from headspace import controlled, scorecard
    from headspace.attribution import edge_attribution
    zoo = Path(__file__).resolve().parents[3] / "zoo"
    c = controlled.read_zoo(zoo)
    data = scorecard.zoo_data(zoo, ground_truths={controlled.CONTROLLED: c[controlled.CONTROLLED]})
    idx = {n: bench.later_pairs(*c["size_mean"][n].shape[2:4]) for n in data.names}
    per = lambda field: [c[field][n].mean(0).reshape(3, -1)[:, idx[n]] for n in data.names]  # noqa: E731
    eap = []
    for n in data.names:
        e = bench.zoo_models(zoo)[n]
        toks, mask = bench.eval_batches(zoo, e["task"])
        eap.append(edge_attribution(bench.load_zoo_model(zoo, n), toks[0], "QKV", "resample", mask[0]).reshape(3, -1)[:, idx[n]])
    data = data.with_score("size_mean", per("size_mean")).with_score("size_resample", per("size_resample"))
    data = data.with_score("eap", eap)
    cards = {g: scorecard.scorecard(data, g) for g in ("mean-circuit", "resample-circuit", controlled.CONTROLLED)}
    # pairs outside the circuit (below the causal threshold) in the formed models, task mode: how many have
    # an effect more than two standard errors (over the evaluation batches) above zero, and their median
    card = cards["mean-circuit"]
    modes = {n: "QKV".index(m) for n, m in card["model_modes"].items()}
    outside = {}
    for g in cards:
        effects = []
        for m, n in enumerate(data.names):
            if n in card["models"]:
                per_batch = data.ground_truths[g][m][:, modes[n]]                     # [batches, pairs]
                mean = per_batch.mean(0)
                se = per_batch.std(0, ddof=1) / np.sqrt(len(per_batch))
                causal = scorecard.causal_pairs(data.ground_truths["mean-circuit"][m][:, modes[n]].mean(0))
                effects += [(x, x > 2 * s) for x, s, k in zip(mean, se, causal) if not k]
        outside[g] = {"n": len(effects), "above": int(sum(bool(a) for _, a in effects)),
                      "median": float(np.median([x for x, _ in effects]))}
    return {"cards": cards, "outside": outside}


def scorecard_values() -> dict:
    """The numbers the article states from the scorecard report and the zoo's confound checks."""
    from headspace import scorecard
    from headspace.controlled import CONTROLLED
    from headspace.tasks import MODE_OF_TASK
    rep = scorecard.read_report()
    out = {}
    card = rep["scorecards"]["mean-circuit|task"]
    out.update(sc_n_formed=card["n_models"], sc_n_configs=card["n_configurations"],
               sc_n_circuitless=len(card["circuitless_models"]), sc_n_comparisons=card["n_comparisons"],
               sc_config_draws=card["distinct_draws"]["configurations"], sc_resamples=card["resamples"],
               sc_n_models=card["n_models"] + len(card["circuitless_models"]))
    for s in CARD_ROWS:
        for stat in scorecard.STATISTICS:
            iv = card["stats"][stat][s]
            if iv[0] is not None:
                _triple(out, f"sc_{s}_{stat}", iv)
    # Holm: what holds against the size scores (the prose: nothing), and the partials against 0
    out["sc_smallest_p"] = smallest_p(card)
    partial_np = {r["score"]: r for r in holding(card, False) if r["statistic"] == "partial_norm_product"}
    normalised = [s for s in card["scores"] if s not in scorecard.SIZE_SCORES]
    held = [s for s in normalised if s in partial_np]
    out["sc_n_normalised"], out["sc_n_partial_np_holds"] = len(normalised), len(held)
    out["sc_partial_np_min"] = min(card["stats"]["partial_norm_product"][s][0] for s in held)
    out["sc_partial_np_max"] = max(card["stats"]["partial_norm_product"][s][0] for s in held)
    missing = [s for s in normalised if s not in held]
    if len(missing) == 1:
        out["sc_partial_np_exception"] = name(missing[0])
    out["sc_n_partial_pn_holds"] = sum(r["statistic"] == "partial_product_norm" for r in holding(card, False))
    # every ground truth and mode of the report: how many differences from a size score hold after Holm,
    # in the normalised score's favour and against it
    allrows = [r for c in rep["scorecards"].values() for r in holding(c)]
    out["sc_n_cards"] = len(rep["scorecards"])
    out["sc_n_size_wins"] = sum(r["difference"] < 0 for r in allrows)
    out["sc_n_score_wins"] = sum(r["difference"] > 0 for r in allrows)
    # the mode: each model in the mode of its largest path
    largest = rep["scorecards"]["mean-circuit|largest"]
    out["sc_largest_n_formed"] = largest["n_models"]
    task_mode = {n: MODE_OF_TASK[n.split("-")[0]] for n in largest["model_modes"]}
    moved = [n for n, m in largest["model_modes"].items() if m != task_mode[n]]
    out["sc_n_moved_mode"] = len(moved)
    out["sc_n_reverse_moved"] = sum(n.startswith("reverse") for n in moved)
    out["sc_n_reverse"] = sum(n.startswith("reverse") for n in task_mode)
    _triple(out, "sc_gap_task", difference(card, "frobenius", "product_norm", "spearman")[:3])
    _triple(out, "sc_gap_largest", difference(largest, "frobenius", "product_norm", "spearman")[:3])
    _triple(out, "sc_largest_product_norm", largest["stats"]["spearman"]["product_norm"])
    _triple(out, "sc_largest_frobenius", largest["stats"]["spearman"]["frobenius"])
    out["sc_largest_smallest_p"] = smallest_p(largest)
    # the circuit-less models, apart
    for s in ("product_norm", "subspace"):
        _triple(out, f"sc_none_{s}", card["circuitless"]["spearman"][s])
    # the controlled ground truth
    excess = rep["scorecards"][f"{CONTROLLED}|task"]
    for s in ("product_norm", "frobenius", "norm_product"):
        _triple(out, f"sc_excess_{s}", excess["stats"]["spearman"][s])
    _triple(out, "sc_excess_frobenius_partial", excess["stats"]["partial_norm_product"]["frobenius"])
    out["sc_excess_smallest_p"] = smallest_p(excess)
    # held out: the rule "rank by the best Spearman" and "shortlist by the best precision@k", chosen on one
    # half of the configurations and tested on the other, both ways
    for stat, tag in (("spearman", "rho"), ("precision_at_k", "pk")):
        h = rep["held_out"][f"mean-circuit|task|{stat}"]
        for v in h["verdict"]:
            k = f"ho_{tag}_{v['chosen_on']}"
            out[f"{k}_chosen"] = name(v["chosen"])
            _triple(out, f"{k}_on_chosen", v["on_chosen_half"])
            _triple(out, f"{k}_on_held_out", v["on_held_out_half"])
            out[f"{k}_rank"] = v["rank_on_held_out_half"]
        out[f"ho_{tag}_n_scores"] = len(rep["scores"])
    h = rep["held_out"]["mean-circuit|task|spearman"]
    out["ho_n_A"], out["ho_n_B"] = len(h["halves"]["A"]), len(h["halves"]["B"])
    out["ho_formed_A"] = len(h["scorecards"]["A"]["models"])
    out["ho_formed_B"] = len(h["scorecards"]["B"]["models"])
    # Holm within each half: differences from a size score that hold
    f = card["comparison_fields"]
    out["ho_n_holds"] = sum(1 for half in h["scorecards"].values() for c in half["comparisons"]
                            if dict(zip(f, c))["against"] != "0" and dict(zip(f, c))["statistic"] in COMPARED
                            and c[7] is not None and c[7] < ALPHA)
    # thresholds: each varied alone; the leading point estimate on each statistic in each setting
    rows = rep["sensitivity"]["mean-circuit|task"]
    out["th_n_settings"] = len(rows)
    out["th_rho_size_leads"] = sum(r["leader"]["spearman"] == "product_norm" for r in rows)
    out["th_pk_size_leads"] = sum(r["leader"]["precision_at_k"] == "product_norm" for r in rows)
    out["th_partial_frobenius_leads"] = sum(r["leader"]["partial_norm_product"] in ("frobenius", "frobenius_baseline")
                                            for r in rows)
    out["th_formed_min"] = min(r["n_models"] for r in rows)
    out["th_formed_max"] = max(r["n_models"] for r in rows)
    # the confounds, from the zoo: the perturbation's size alone, and the pairs outside the circuit
    conf = zoo_confounds()
    for g, tag, size in (("mean-circuit", "mean", "size_mean"), ("resample-circuit", "resample", "size_resample"),
                         (CONTROLLED, "excess", "size_resample")):
        _triple(out, f"cf_{tag}_size", conf["cards"][g]["stats"]["spearman"][size])
        o = conf["outside"][g]
        out[f"cf_{tag}_outside"], out[f"cf_{tag}_outside_above"], out[f"cf_{tag}_outside_median"] = \
            o["n"], o["above"], o["median"]
    _triple(out, "cf_mean_product_norm", conf["cards"]["mean-circuit"]["stats"]["spearman"]["product_norm"])
    # edge attribution patching against resample path patching, beside path size
    rc = conf["cards"]["resample-circuit"]
    _triple(out, "eap_rho", rc["stats"]["spearman"]["eap"])
    _triple(out, "eap_product_norm_rho", rc["stats"]["spearman"]["product_norm"])
    _triple(out, "eap_pk", rc["stats"]["precision_at_k"]["eap"])
    return out


#: Values of the article's first version (its per-family and per-task tables, the benchmark table's
#: separations), which the rewrite from the scorecard (issue 47) no longer states; computed still for
#: the claim tests that read them, and to be pruned with the code that computes them.
UNSTATED = frozenset({
    'base_all_builtin_best', 'base_all_builtin_hi', 'base_all_builtin_lo', 'base_all_builtin_rho',
    'base_all_norm_product_hi', 'base_all_norm_product_lo', 'base_all_norm_product_rho',
    'base_all_product_norm_apart', 'base_all_product_norm_hi', 'base_all_product_norm_lo',
    'base_all_product_norm_rho', 'base_lookup_builtin_best', 'base_lookup_builtin_hi', 'base_lookup_builtin_lo',
    'base_lookup_builtin_rho', 'base_lookup_norm_product_hi', 'base_lookup_norm_product_lo',
    'base_lookup_norm_product_rho', 'base_lookup_product_norm_hi', 'base_lookup_product_norm_lo',
    'base_lookup_product_norm_rho', 'cf_excess_outside_median', 'cf_mean_product_norm', 'cf_resample_outside',
    'cf_resample_outside_above', 'cf_resample_outside_median', 'eap_pk', 'eap_pk_hi', 'eap_pk_lo',
    'formed3l_best', 'formed3l_best_distinguished', 'formed3l_best_hi', 'formed3l_best_lo',
    'formed3l_best_plain_hi', 'formed3l_best_plain_lo', 'formed3l_best_plain_rho', 'formed3l_best_rho',
    'formed3l_n_above', 'formed3l_n_below', 'formed3l_n_others', 'formed3l_top_max', 'formed3l_top_min',
    'formed_best', 'formed_frobenius_auroc', 'formed_frobenius_auroc_hi', 'formed_frobenius_auroc_lo',
    'formed_frobenius_baseline_auroc', 'formed_frobenius_baseline_auroc_hi',
    'formed_frobenius_baseline_auroc_lo', 'formed_frobenius_baseline_spearman',
    'formed_frobenius_baseline_spearman_hi', 'formed_frobenius_baseline_spearman_lo',
    'formed_frobenius_spearman', 'formed_frobenius_spearman_hi', 'formed_frobenius_spearman_lo',
    'formed_frobenius_unfolded_auroc', 'formed_frobenius_unfolded_auroc_hi',
    'formed_frobenius_unfolded_auroc_lo', 'formed_frobenius_unfolded_spearman',
    'formed_frobenius_unfolded_spearman_hi', 'formed_frobenius_unfolded_spearman_lo', 'formed_next',
    'formed_norm_product_auroc', 'formed_norm_product_auroc_hi', 'formed_norm_product_auroc_lo',
    'formed_norm_product_spearman', 'formed_norm_product_spearman_hi', 'formed_norm_product_spearman_lo',
    'formed_product_norm_auroc', 'formed_product_norm_auroc_hi', 'formed_product_norm_auroc_lo',
    'formed_product_norm_spearman', 'formed_product_norm_spearman_hi', 'formed_product_norm_spearman_lo',
    'formed_projection_kernel_auroc', 'formed_projection_kernel_auroc_hi', 'formed_projection_kernel_auroc_lo',
    'formed_projection_kernel_spearman', 'formed_projection_kernel_spearman_hi',
    'formed_projection_kernel_spearman_lo', 'formed_subspace_auroc', 'formed_subspace_auroc_hi',
    'formed_subspace_auroc_lo', 'formed_subspace_spearman', 'formed_subspace_spearman_hi',
    'formed_subspace_spearman_lo', 'formed_svd_bound_auroc', 'formed_svd_bound_auroc_hi',
    'formed_svd_bound_auroc_lo', 'formed_svd_bound_spearman', 'formed_svd_bound_spearman_hi',
    'formed_svd_bound_spearman_lo', 'formed_svd_component_auroc', 'formed_svd_component_auroc_hi',
    'formed_svd_component_auroc_lo', 'formed_svd_component_spearman', 'formed_svd_component_spearman_hi',
    'formed_svd_component_spearman_lo', 'formed_token_auroc', 'formed_token_auroc_hi', 'formed_token_auroc_lo',
    'formed_token_diagonal_auroc', 'formed_token_diagonal_auroc_hi', 'formed_token_diagonal_auroc_lo',
    'formed_token_diagonal_spearman', 'formed_token_diagonal_spearman_hi', 'formed_token_diagonal_spearman_lo',
    'formed_token_spearman', 'formed_token_spearman_hi', 'formed_token_spearman_lo', 'formed_whitened_auroc',
    'formed_whitened_auroc_hi', 'formed_whitened_auroc_lo', 'formed_whitened_spearman',
    'formed_whitened_spearman_hi', 'formed_whitened_spearman_lo', 'formedlookup_best',
    'formedlookup_best_distinguished', 'formedlookup_best_hi', 'formedlookup_best_lo', 'formedlookup_best_rho',
    'formedlookup_n_others', 'formedlookup_top_max', 'formedlookup_top_min', 'formedrev_auroc_max',
    'formedrev_auroc_min', 'formedrev_best', 'formedrev_best_distinguished', 'formedrev_best_hi',
    'formedrev_best_lo', 'formedrev_best_rho', 'formedrev_n_others', 'formedrev_norm_product_auroc_lo',
    'formedrev_product_norm_auroc_lo', 'formedrev_top_max', 'formedrev_top_min', 'formedrms_best',
    'formedrms_best_distinguished', 'formedrms_best_hi', 'formedrms_best_lo', 'formedrms_best_rho',
    'formedrms_n_others', 'formedrms_top_max', 'formedrms_top_min', 'found_auroc_lo_median',
    'found_auroc_lo_min', 'found_auroc_lo_min_score', 'found_auroc_lo_min_task', 'ho_rho_B_on_chosen',
    'ho_rho_B_on_chosen_hi', 'ho_rho_B_on_chosen_lo', 'ho_rho_B_on_held_out', 'ho_rho_B_on_held_out_hi',
    'ho_rho_B_on_held_out_lo', 'induction_best', 'induction_best_hi', 'induction_best_lo', 'induction_best_rho',
    'induction_frobenius_hi', 'induction_frobenius_lo', 'induction_frobenius_rho', 'induction_next',
    'induction_next_hi', 'induction_next_lo', 'induction_next_rho', 'induction_top_effect_median',
    'lookup_best', 'lookup_best_hi', 'lookup_best_lo', 'lookup_best_rho', 'lookup_frobenius_hi',
    'lookup_frobenius_lo', 'lookup_frobenius_rho', 'lookup_next', 'lookup_next_hi', 'lookup_next_lo',
    'lookup_next_rho', 'lookup_tie_1', 'lookup_tie_2', 'lookup_top_effect_median', 'mean_all_best',
    'mean_all_best_hi', 'mean_all_best_lo', 'mean_all_best_rho', 'mean_all_frobenius_baseline_spearman',
    'mean_all_frobenius_baseline_spearman_hi', 'mean_all_frobenius_baseline_spearman_lo',
    'mean_all_frobenius_spearman', 'mean_all_frobenius_spearman_hi', 'mean_all_frobenius_spearman_lo',
    'mean_all_frobenius_unfolded_spearman', 'mean_all_frobenius_unfolded_spearman_hi',
    'mean_all_frobenius_unfolded_spearman_lo', 'mean_all_norm_product_spearman',
    'mean_all_norm_product_spearman_hi', 'mean_all_norm_product_spearman_lo', 'mean_all_product_norm_spearman',
    'mean_all_product_norm_spearman_hi', 'mean_all_product_norm_spearman_lo',
    'mean_all_projection_kernel_spearman', 'mean_all_projection_kernel_spearman_hi',
    'mean_all_projection_kernel_spearman_lo', 'mean_all_subspace_spearman', 'mean_all_subspace_spearman_hi',
    'mean_all_subspace_spearman_lo', 'mean_all_svd_bound_spearman', 'mean_all_svd_bound_spearman_hi',
    'mean_all_svd_bound_spearman_lo', 'mean_all_svd_component_spearman', 'mean_all_svd_component_spearman_hi',
    'mean_all_svd_component_spearman_lo', 'mean_all_token_diagonal_spearman',
    'mean_all_token_diagonal_spearman_hi', 'mean_all_token_diagonal_spearman_lo', 'mean_all_token_spearman',
    'mean_all_token_spearman_hi', 'mean_all_token_spearman_lo', 'mean_all_whitened_spearman',
    'mean_all_whitened_spearman_hi', 'mean_all_whitened_spearman_lo', 'mean_all_worst', 'mean_all_worst_hi',
    'mean_all_worst_lo', 'mean_all_worst_rho', 'mean_circuit_best', 'mean_circuit_best_rho',
    'mean_circuit_frobenius_auroc', 'mean_circuit_frobenius_auroc_hi', 'mean_circuit_frobenius_auroc_lo',
    'mean_circuit_frobenius_baseline_auroc', 'mean_circuit_frobenius_baseline_auroc_hi',
    'mean_circuit_frobenius_baseline_auroc_lo', 'mean_circuit_frobenius_baseline_spearman',
    'mean_circuit_frobenius_baseline_spearman_hi', 'mean_circuit_frobenius_baseline_spearman_lo',
    'mean_circuit_frobenius_spearman', 'mean_circuit_frobenius_spearman_hi',
    'mean_circuit_frobenius_spearman_lo', 'mean_circuit_frobenius_unfolded_auroc',
    'mean_circuit_frobenius_unfolded_auroc_hi', 'mean_circuit_frobenius_unfolded_auroc_lo',
    'mean_circuit_frobenius_unfolded_spearman', 'mean_circuit_frobenius_unfolded_spearman_hi',
    'mean_circuit_frobenius_unfolded_spearman_lo', 'mean_circuit_norm_product_auroc',
    'mean_circuit_norm_product_auroc_hi', 'mean_circuit_norm_product_auroc_lo',
    'mean_circuit_norm_product_spearman', 'mean_circuit_norm_product_spearman_hi',
    'mean_circuit_norm_product_spearman_lo', 'mean_circuit_product_norm_auroc',
    'mean_circuit_product_norm_auroc_hi', 'mean_circuit_product_norm_auroc_lo',
    'mean_circuit_product_norm_spearman', 'mean_circuit_product_norm_spearman_hi',
    'mean_circuit_product_norm_spearman_lo', 'mean_circuit_projection_kernel_auroc',
    'mean_circuit_projection_kernel_auroc_hi', 'mean_circuit_projection_kernel_auroc_lo',
    'mean_circuit_projection_kernel_spearman', 'mean_circuit_projection_kernel_spearman_hi',
    'mean_circuit_projection_kernel_spearman_lo', 'mean_circuit_subspace_auroc',
    'mean_circuit_subspace_auroc_hi', 'mean_circuit_subspace_auroc_lo', 'mean_circuit_subspace_spearman',
    'mean_circuit_subspace_spearman_hi', 'mean_circuit_subspace_spearman_lo', 'mean_circuit_svd_bound_auroc',
    'mean_circuit_svd_bound_auroc_hi', 'mean_circuit_svd_bound_auroc_lo', 'mean_circuit_svd_bound_spearman',
    'mean_circuit_svd_bound_spearman_hi', 'mean_circuit_svd_bound_spearman_lo',
    'mean_circuit_svd_component_auroc', 'mean_circuit_svd_component_auroc_hi',
    'mean_circuit_svd_component_auroc_lo', 'mean_circuit_svd_component_spearman',
    'mean_circuit_svd_component_spearman_hi', 'mean_circuit_svd_component_spearman_lo',
    'mean_circuit_token_auroc', 'mean_circuit_token_auroc_hi', 'mean_circuit_token_auroc_lo',
    'mean_circuit_token_diagonal_auroc', 'mean_circuit_token_diagonal_auroc_hi',
    'mean_circuit_token_diagonal_auroc_lo', 'mean_circuit_token_diagonal_spearman',
    'mean_circuit_token_diagonal_spearman_hi', 'mean_circuit_token_diagonal_spearman_lo',
    'mean_circuit_token_spearman', 'mean_circuit_token_spearman_hi', 'mean_circuit_token_spearman_lo',
    'mean_circuit_whitened_auroc', 'mean_circuit_whitened_auroc_hi', 'mean_circuit_whitened_auroc_lo',
    'mean_circuit_whitened_spearman', 'mean_circuit_whitened_spearman_hi', 'mean_circuit_whitened_spearman_lo',
    'mean_circuit_worst_rho', 'n_all_below_circuit', 'n_formed_families', 'n_formed_firsts', 'n_formed_others',
    'n_found_total', 'n_other_scores', 'resample_all_best', 'resample_all_frobenius_baseline_spearman',
    'resample_all_frobenius_baseline_spearman_hi', 'resample_all_frobenius_baseline_spearman_lo',
    'resample_all_frobenius_spearman', 'resample_all_frobenius_spearman_hi',
    'resample_all_frobenius_spearman_lo', 'resample_all_frobenius_unfolded_spearman',
    'resample_all_frobenius_unfolded_spearman_hi', 'resample_all_frobenius_unfolded_spearman_lo',
    'resample_all_next', 'resample_all_norm_product_spearman', 'resample_all_norm_product_spearman_hi',
    'resample_all_norm_product_spearman_lo', 'resample_all_product_norm_spearman',
    'resample_all_product_norm_spearman_hi', 'resample_all_product_norm_spearman_lo',
    'resample_all_projection_kernel_spearman', 'resample_all_projection_kernel_spearman_hi',
    'resample_all_projection_kernel_spearman_lo', 'resample_all_subspace_spearman',
    'resample_all_subspace_spearman_hi', 'resample_all_subspace_spearman_lo', 'resample_all_svd_bound_spearman',
    'resample_all_svd_bound_spearman_hi', 'resample_all_svd_bound_spearman_lo',
    'resample_all_svd_component_spearman', 'resample_all_svd_component_spearman_hi',
    'resample_all_svd_component_spearman_lo', 'resample_all_token_diagonal_spearman',
    'resample_all_token_diagonal_spearman_hi', 'resample_all_token_diagonal_spearman_lo',
    'resample_all_token_spearman', 'resample_all_token_spearman_hi', 'resample_all_token_spearman_lo',
    'resample_all_whitened_spearman', 'resample_all_whitened_spearman_hi', 'resample_all_whitened_spearman_lo',
    'resample_circuit_best', 'resample_circuit_frobenius_baseline_spearman',
    'resample_circuit_frobenius_baseline_spearman_hi', 'resample_circuit_frobenius_baseline_spearman_lo',
    'resample_circuit_frobenius_spearman', 'resample_circuit_frobenius_spearman_hi',
    'resample_circuit_frobenius_spearman_lo', 'resample_circuit_frobenius_unfolded_spearman',
    'resample_circuit_frobenius_unfolded_spearman_hi', 'resample_circuit_frobenius_unfolded_spearman_lo',
    'resample_circuit_norm_product_spearman', 'resample_circuit_norm_product_spearman_hi',
    'resample_circuit_norm_product_spearman_lo', 'resample_circuit_product_norm_spearman',
    'resample_circuit_product_norm_spearman_hi', 'resample_circuit_product_norm_spearman_lo',
    'resample_circuit_projection_kernel_spearman', 'resample_circuit_projection_kernel_spearman_hi',
    'resample_circuit_projection_kernel_spearman_lo', 'resample_circuit_subspace_spearman',
    'resample_circuit_subspace_spearman_hi', 'resample_circuit_subspace_spearman_lo',
    'resample_circuit_svd_bound_spearman', 'resample_circuit_svd_bound_spearman_hi',
    'resample_circuit_svd_bound_spearman_lo', 'resample_circuit_svd_component_spearman',
    'resample_circuit_svd_component_spearman_hi', 'resample_circuit_svd_component_spearman_lo',
    'resample_circuit_token_diagonal_spearman', 'resample_circuit_token_diagonal_spearman_hi',
    'resample_circuit_token_diagonal_spearman_lo', 'resample_circuit_token_spearman',
    'resample_circuit_token_spearman_hi', 'resample_circuit_token_spearman_lo',
    'resample_circuit_whitened_spearman', 'resample_circuit_whitened_spearman_hi',
    'resample_circuit_whitened_spearman_lo', 'resamples', 'reverse_best', 'reverse_best_hi', 'reverse_best_lo',
    'reverse_best_rho', 'reverse_frobenius_hi', 'reverse_frobenius_lo', 'reverse_frobenius_rho', 'reverse_next',
    'reverse_next_hi', 'reverse_next_lo', 'reverse_next_rho', 'reverse_top_effect_median',
    'sc_largest_frobenius', 'sc_largest_frobenius_hi', 'sc_largest_frobenius_lo', 'sc_largest_n_formed',
    'sc_largest_product_norm', 'sc_largest_product_norm_hi', 'sc_largest_product_norm_lo',
    'sc_largest_smallest_p', 'sc_n_score_wins', 'sc_partial_np_exception', 'text_best', 'text_best_hi',
    'text_best_lo', 'text_best_rho', 'text_frobenius_hi', 'text_frobenius_lo', 'text_frobenius_rho',
    'text_next', 'text_next_hi', 'text_next_lo', 'text_next_rho', 'text_top_effect_median'})
