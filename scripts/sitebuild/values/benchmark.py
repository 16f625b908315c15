"""The numbers site/content/posts/which-composition-score.md states
(``{{< value "benchmark.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

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
    return {k: v for k, v in out.items() if checked or k not in checked_only}
