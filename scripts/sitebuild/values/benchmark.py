"""The numbers site/content/posts/which-composition-score.md states
(``{{< value "benchmark.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

import functools
import json

import numpy as np

from ._shared import _holds, _the_same


#: the tasks whose models are wider (d_model 64, d_head 16; scripts/train_zoo.py CONFIGS)
WIDE_TASKS = ("words", "reptext")


def _bench_row(t: dict, group: str, mode: str, gt: str, score: str) -> dict:
    """The row of table ``t`` for these choices, as ``{field: value}``."""
    index = _ROWS.get(id(t))
    if index is None or index[0] is not t:
        index = _ROWS[id(t)] = (t, {tuple(r[:4]): dict(zip(t["row_fields"], r)) for r in t["rows"]})
    return index[1][(group, mode, gt, score)]


_ROWS: dict = {}


def _zoo():
    """The benchmark's zoo folder (``zoo/`` at the top of the repository)."""
    from pathlib import Path
    return Path(__file__).resolve().parents[3] / "zoo"


def _reverse_attention_to_answer() -> list[float]:
    """The reverse-copy models' second layer at the circuit's positions: the share of attention its
    most attentive head puts on the answer's own position (the token before the earlier occurrence
    of the current one), one per reverse-copy model of the zoo, on the first evaluation batch."""
    from headspace import benchmark as bench
    from headspace.tasks import PARTNER
    zoo = _zoo()
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
    from headspace import benchmark as bench
    zoo = _zoo()
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


def _unscored(family: str) -> list[dict]:
    """The models of a family the benchmark's table leaves out (one layer: no pair of heads), with the
    fields the values read from the table's models: task, losses at the circuit's positions."""
    from headspace import benchmark as bench
    from headspace import store
    zoo = _zoo()
    out = []
    for name, e in bench.zoo_models(zoo).items():
        if e["family"] == family:
            _holds(store.read_config(zoo / name)["n_layers"] == 1, f"{name}, left out of the benchmark, has one layer")
            curve = store.read_training_curve(zoo / name)
            out.append({"name": name, "task": e["task"], "heldout_circuit_loss": curve["heldout_circuit_loss"][-1],
                        "circuit_loss_at_step_0": curve["heldout_circuit_loss"][0]})
    return out


#: The mechanism labels (headspace.mechanisms.LABELS) as the keys of their counts: ``mech_<family tag>_<tag>``.
_LABEL_TAGS = {"previous-token induction": "prev", "shifted-window induction": "shifted",
               "previous-token V-composition": "vcomp", "direct attention to the answer": "direct",
               "entry lookup": "entry", "diffuse lookup": "diffuse", "none formed": "none"}
def table_values() -> dict:
    """The table family's recorded mechanisms (headspace.mechanisms, on the zoo's evaluation batches): which
    seeds look the entry up (``table_entry_seeds``, as the prose lists them), each one's Q path with its
    interval over the batches (``table_path_s<seed>``), the share of attention its first-layer head puts on the
    previous token and its second-layer head on the cell the two cues name, over those seeds; and the held-out
    loss at the circuit's positions of the seeds that do not (their plateau: reading one cue leaves ln 4)."""
    from headspace import mechanisms, store
    from headspace.benchmark import zoo_models
    zoo = _zoo()
    names = sorted(n for n, e in zoo_models(zoo).items() if e["family"] == "table-none-attn-2l")
    recs = {n: mechanisms.read(zoo, n) for n in names}
    entry = [n for n in names if recs[n]["label"] == "entry lookup"]
    rest = [n for n in names if n not in entry]
    _holds(bool(entry) and bool(rest), "some table seeds look the entry up and some do not")
    _holds(all(recs[n]["mode"] == "Q" for n in entry), "every table seed that looks the entry up does it by a Q path")
    seeds = [n.rsplit("-s", 1)[1] for n in entry]
    out = {"table_entry_seeds": ", ".join(seeds[:-1]) + " and " + seeds[-1] if len(seeds) > 1 else seeds[0]}
    for n, seed in zip(entry, seeds):
        r = recs[n]
        out[f"table_path_s{seed}"] = r["effect"]
        out[f"table_path_s{seed}_lo"], out[f"table_path_s{seed}_hi"] = r["effect_interval"]
    for key, field in (("writer", "writer_attention"), ("reader", "reader_attention")):
        vals = [recs[n][field] for n in entry]
        out[f"table_{key}_min"], out[f"table_{key}_max"] = min(vals), max(vals)
    loss = {n: store.read_training_curve(zoo / n)["heldout_circuit_loss"][-1] for n in names}
    out["table_entry_loss_max"] = max(loss[n] for n in entry)
    out["table_n_plateau"] = len(rest)
    out["table_plateau_min"], out["table_plateau_max"] = min(loss[n] for n in rest), max(loss[n] for n in rest)
    return out


#: The zoo's families by the short tag of their values.
_FAMILY_TAGS = {"induction-none-attn-2l": "ind2l", "induction-rms-attn-2l": "indrms", "induction-ln-mlp-2l": "indln",
                "induction-rms-attn-3l": "ind3l", "reverse-rms-attn-2l": "rev", "reverse-ln-mlp-2l": "revln",
                "recall-none-attn-2l": "recall2l", "recall-none-attn-1l": "recall1l", "lookup-rms-attn-2l": "lookup",
                "words-none-attn-2l": "words", "text-ln-mlp-2l": "chars",
                "reptext-none-attn-2l": "reptext", "table-none-attn-2l": "table2l", "table-none-attn-1l": "table1l"}


#: The first zoo's configurations kept as they were trained, seeds 0-2, with seeds 3 and 4 added later
#: (docs/decisions/0004, section 6).
_FIRST_ZOO = ("induction-rms-attn-2l", "induction-ln-mlp-2l", "induction-rms-attn-3l", "reverse-ln-mlp-2l",
              "text-ln-mlp-2l")



def mechanism_counts() -> dict:
    """Per family, how many of its seeds carry each recorded mechanism (headspace.mechanisms, the label
    in the zoo's manifest): ``{"mech_<family>_<label>": count}``, every label of every family (0 too);
    and per task over its families, ``mech_task_<task>_<label>``."""
    from headspace import benchmark as bench
    entries = bench.zoo_models(_zoo())
    out = {}
    for family, tag in _FAMILY_TAGS.items():
        labels = [e["mechanism"] for e in entries.values() if e["family"] == family]
        for label, ltag in _LABEL_TAGS.items():
            out[f"mech_{tag}_{ltag}"] = labels.count(label)
    for task in dict.fromkeys(e["task"] for e in entries.values()):
        labels = [e["mechanism"] for e in entries.values() if e["task"] == task]
        for label, ltag in _LABEL_TAGS.items():
            out[f"mech_task_{task}_{ltag}"] = labels.count(label)
    # the normalised induction models (RMSNorm in two and three layers, LayerNorm with MLPs)
    normed = [e["mechanism"] for e in entries.values() if e["task"] == "induction" and e["family"] != "induction-none-attn-2l"]
    out["n_ind_normed"] = len(normed)
    for label, ltag in _LABEL_TAGS.items():
        out[f"mech_ind_normed_{ltag}"] = normed.count(label)
    return out


#: The per-task and per-family counts (``zoo_counts``) the article states; the claim tests read the rest
#: of the table themselves.
STATED_COUNTS = (
    *(f"{k}_{task}" for task in ("induction", "reverse", "lookup", "text", "words", "reptext", "table")
      for k in ("n", "formed")),
    *(f"{k}_{tag}" for tag in ("recall1l", "recall2l", "table1l") for k in ("n", "formed")),
    *(f"loss_{tag}_{k}" for tag in ("recall1l", "recall2l", "table1l") for k in ("min", "max")),
    *(f"loss_{task}_{k}" for task in ("induction", "reverse", "lookup", "text", "words", "reptext") for k in ("min", "max")),
    "loss_induction_second", "loss_induction_step0", "loss_text_step0", "loss_words_step0", "loss_reptext_step0",
    "loss_text_step0_max", "loss_words_step0_max", "loss_reptext_step0_max",
    "top_text_max", "top_words_max",
    "mech_ind2l_prev", "mech_lookup_diffuse", "mech_recall2l_vcomp",
    "mech_reptext_prev", "mech_reptext_none", "mech_table2l_entry", "mech_table2l_diffuse", "mech_table2l_none",
    "mech_task_reverse_direct", "mech_task_reverse_none", "mech_task_reverse_vcomp",
    "n_ind_normed", "mech_ind_normed_none", "mech_ind_normed_prev", "mech_ind_normed_shifted")


def zoo_counts(t: dict | None = None) -> dict:
    """The zoo as a table of counts: per task (``<what>_<task>``) and per family (``<what>_<tag>``, tags in
    ``_FAMILY_TAGS``), how many models there are (``n``), solve their task (``solved``), have a circuit
    (``formed``); the held-out loss at the circuit's positions (``loss_..._min``, ``_max``, per task also
    ``_step0`` and the second highest, ``_second``); the largest path in the task's mode (``top_..._max``);
    and every mechanism count (``mechanism_counts``). The article states ``STATED_COUNTS``; the claim
    tests (tests/site/test_benchmark_claims.py) check the rest."""
    from headspace.benchmark import circuit_present, read_table, solves
    t = read_table() if t is None else t
    models = t["models"]
    own_mode = {task: t["modes"].index(t["mode_of_task"][task]) for task in t["tasks"]}

    def top(m):
        return max(m["ground_truth"]["mean-circuit"][own_mode[m["task"]]])

    def solved(m):
        return solves(m["task"], m["heldout_circuit_loss"], m["circuit_loss_at_step_0"])

    def formed(m):
        return circuit_present(m["task"], m["ground_truth"]["mean-circuit"])

    out = {}
    for task in t["tasks"]:
        ms = [m for m in models if m["task"] == task]
        out[f"loss_{task}_max"] = max(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{task}_min"] = min(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{task}_step0"] = min(m["circuit_loss_at_step_0"] for m in ms)
        out[f"loss_{task}_step0_max"] = max(m["circuit_loss_at_step_0"] for m in ms)
        out[f"n_{task}"] = len(ms)
        out[f"solved_{task}"] = sum(map(solved, ms))
        out[f"formed_{task}"] = sum(map(formed, ms))
        out[f"top_{task}_max"] = max(map(top, ms))
        if len(ms) > 1:     # the second-highest loss (the article names the highest apart)
            out[f"loss_{task}_second"] = sorted(m["heldout_circuit_loss"] for m in ms)[-2]
    for family, tag in _FAMILY_TAGS.items():
        ms = [m for m in models if m["family"] == family]
        if not ms:             # the one-layer control: not in the table (no pair of heads); from its files
            ms = _unscored(family)
            out[f"n_{tag}"], out[f"formed_{tag}"] = len(ms), 0
        else:
            out[f"n_{tag}"], out[f"formed_{tag}"] = len(ms), sum(map(formed, ms))
            out[f"top_{tag}_max"] = max(map(top, ms))
        out[f"solved_{tag}"] = sum(map(solved, ms))
        out[f"loss_{tag}_min"] = min(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{tag}_max"] = max(m["heldout_circuit_loss"] for m in ms)
    out.update(mechanism_counts())
    return out


def benchmark(t: dict | None = None, checked: bool = False) -> dict:
    """site/content/posts/which-composition-score.md"""
    # ``t``: the table drawn with another bootstrap seed (tests/site/test_claims.py); default the shipped
    # one. ``checked``: also the values computed only for the claim tests, which the article does not state.
    # Every statistic of the zoo is read from the benchmark table (headspace.benchmark, shipped as
    # headspace/models/benchmark.json) that the page's figure reads, or from the scorecard report
    # (scorecard_values below). The build asserts no claim a new seed or batch could break; those
    # claims are tests in tests/site/test_benchmark_claims.py and tests/site/test_claims.py.
    from headspace.benchmark import CIRCUIT_EFFECT, LEVEL, MIN_EFFECT, REL_EFFECT, circuit_present, read_table, solves
    from headspace.pair_scores import BASELINES
    from headspace.tasks import SHAPES
    t = read_table() if t is None else t
    models = t["models"]
    seeds = [sum(m["family"] == f for m in models) for f in t["families"]]
    from headspace.benchmark import zoo_models
    zoo_entries = zoo_models(_zoo())
    out = {"n_models": len(models),
           # the whole zoo, with the one-layer control the table leaves out (no pair of heads)
           "n_models_zoo": len(zoo_entries), "n_families_zoo": len({e["family"] for e in zoo_entries.values()}),
           # the level of every interval (percentile bootstrap, headspace.benchmark)
           "level": LEVEL, "n_seeds": max(seeds),
           "n_batches": t["n_batches"], "batch": t["batch"],
           "min_effect": MIN_EFFECT, "rel_effect": REL_EFFECT, "n_scores": len(t["scores"]),
           # the width of the residual stream and heads: one shape for most tasks, one for the text of
           # words and of repetitive windows (WIDE_TASKS)
           "d_model": _the_same("benchmark.d_model", [m["d_model"] for m in models if m["task"] not in WIDE_TASKS]),
           "d_head": _the_same("benchmark.d_head", [m["d_head"] for m in models if m["task"] not in WIDE_TASKS]),
           "d_model_words": _the_same("benchmark.d_model_words", [m["d_model"] for m in models if m["task"] in WIDE_TASKS]),
           "d_head_words": _the_same("benchmark.d_head_words", [m["d_head"] for m in models if m["task"] in WIDE_TASKS])}
    # training time per model: the stack's wall time divided by its seeds (scripts/train_zoo.py)
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
    counts = zoo_counts(t)
    out.update({k: counts[k] for k in STATED_COUNTS})
    # the article: every configuration has the same number of seeds, those kept from the first zoo too (they
    # got seeds 3 and 4 later)
    first = [f for f in t["families"] if f in _FIRST_ZOO]
    _holds(len(first) == len(_FIRST_ZOO), "every configuration kept from the first zoo is in the table")
    _holds(min(seeds) == max(seeds), f"every configuration has as many seeds as the others; got {dict(zip(t['families'], seeds))}")
    # the text models' ground truths were measured on fewer evaluation batches (for time: zoo/README.md)
    from headspace.benchmark import read_ground_truth
    gts = read_ground_truth(_zoo())
    out["n_batches_words"] = _the_same("benchmark.n_batches_words",
                                       [gts[m["name"]].shape[1] for m in models if m["task"] == "words"])
    _holds(all(gts[m["name"]].shape[1] == t["n_batches"] for m in models if m["task"] != "words"),
           "every model but the text models is measured on all the evaluation batches")
    # word-level text's vocabulary (the most frequent words and one id for the rest) and window
    out["words_vocab"], out["words_window"] = SHAPES["words"]
    out["words_vocab_known"] = SHAPES["words"][0] - 1
    # the steps of the two slowest configurations kept from the first zoo
    for family, tag in (("induction-rms-attn-2l", "indrms"), ("induction-ln-mlp-2l", "indln")):
        out[f"steps_{tag}"] = _the_same(f"benchmark.steps_{tag}", [m["steps"] for m in models if m["family"] == family])
    # the share of a head's attention that makes it do a pattern (headspace.mechanisms)
    from headspace.mechanisms import ATTENTION
    out["attention_threshold"] = ATTENTION
    # chance on the induction task's vocabulary (headspace.tasks.SHAPES): ln of its size, in nats
    out["vocab_induction"] = SHAPES["induction"][0]
    out["chance_induction"] = float(np.log(SHAPES["induction"][0]))
    # reverse copy: how many reach a V path of CIRCUIT_EFFECT, and how the largest Q path compares with
    # the largest V path (a model can find the answer's own position)
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
    # recall: the largest V path of the two-layer models, and the largest Q and K paths beside it
    recall = [m for m in models if m["family"] == "recall-none-attn-2l"]
    out["recall_v_min"], out["recall_v_max"] = min(map(top, recall)), max(map(top, recall))
    out["recall_qk_max"] = max(max(top(m, q_mode), top(m, t["modes"].index("K"))) for m in recall)
    _holds(all(map(solved, recall)) and all(map(formed, recall)),
           "every two-layer recall model solves its task and has a V path of the threshold's size")
    one = [m for m in models if m["family"] == "recall-none-attn-1l"]
    _holds(not any(map(solved, one)), "no one-layer recall model solves the task")
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
    # on the lookup models: head sizes against the built-in score with the highest point estimate (the
    # figure's caption "its interval holds zero and that of the best composition score lies above it":
    # tests/site/test_claims.py)
    rows = {s_: _bench_row(t, "lookup-rms-attn-2l", "task", "mean-circuit", s_) for s_ in t["scores"]}
    builtin = [s_ for s_ in t["scores"] if s_ not in BASELINES]
    best = max(builtin, key=lambda s_: rows[s_]["spearman"])
    checked_only = {"base_lookup_builtin_lo", "base_lookup_norm_product_lo", "base_lookup_norm_product_hi"}
    out["base_lookup_builtin_lo"] = rows[best]["spearman_lo"]
    out["base_lookup_norm_product_lo"] = rows["norm_product"]["spearman_lo"]
    out["base_lookup_norm_product_hi"] = rows["norm_product"]["spearman_hi"]
    # the seed part of the bootstrap: the distinct multisets of n seeds drawn from n, C(2n - 1, n)
    from math import comb
    out["n_seed_draws"] = comb(2 * out["n_seeds"] - 1, out["n_seeds"])
    out.update(reptext_values())
    out.update(table_values())
    out.update(scorecard_values())
    return {k: v for k, v in out.items() if checked or k not in checked_only}


def reptext_values() -> dict:
    """The repetitive-text family's recorded mechanisms (headspace.mechanisms, on the zoo's 20 evaluation
    batches): the designed K path of each seed with its interval over the batches, and the writer's share on
    the previous token where it is measured (every position), where the reader reads it (after every earlier
    occurrence of the pair) and at the selected anchors only."""
    from headspace import mechanisms
    from headspace.benchmark import zoo_models
    zoo = _zoo()
    recs = [mechanisms.read(zoo, n) for n, e in zoo_models(zoo).items() if e["family"] == "reptext-none-attn-2l"]
    formed = [r for r in recs if r["label"] == "previous-token induction"]
    under = [r for r in recs if r["label"] == "none formed"]
    _holds(len(formed) + len(under) == len(recs), "every repetitive-text model is labelled induction or none formed")
    out = {"mech_batches": _the_same("benchmark.mech_batches", [r["batches"] for r in recs])}
    # every model's record states its batches: the fewest, and the tasks whose records have fewer (the article
    # names them; tests/site/test_benchmark_claims.py)
    entries = zoo_models(zoo)
    batches = {n: mechanisms.read(zoo, n)["batches"] for n in entries}
    out["mech_batches_min"] = min(batches.values())
    # the formed seeds' weakest path (its interval's lower end: is it clear of the bar?) and strongest
    weakest = min(formed, key=lambda r: r["effect"])
    out.update(reptext_formed_min=weakest["effect"], reptext_formed_min_lo=weakest["effect_interval"][0],
               reptext_formed_min_hi=weakest["effect_interval"][1],
               reptext_formed_max=max(r["effect"] for r in formed))
    # the seeds under the bar: the strongest of them, with its interval (does it reach the bar?)
    if under:
        top = max(under, key=lambda r: r["effect"])
        out.update(reptext_under_max=top["effect"], reptext_under_max_lo=top["effect_interval"][0],
                   reptext_under_max_hi=top["effect_interval"][1])
    for where, key in (("writer_attention", "all"), ("writer_attention_at_keys", "keys")):
        vals = [r[where] for r in recs]
        out[f"reptext_writer_{key}_min"], out[f"reptext_writer_{key}_max"] = min(vals), max(vals)
    out["reptext_formed_keys_below"] = sum(r["writer_attention_at_keys"] < mechanisms.ATTENTION for r in formed)
    # measured at the keys, the circuits the family would have left
    out["reptext_keys_circuits"] = len(formed) - out["reptext_formed_keys_below"]
    # the models with LayerNorm of the designed tasks (not text) whose label is "none formed" (reported
    # apart whatever their paths)
    out["n_ln_none"] = sum(e["mechanism"] == "none formed" for e in zoo_models(_zoo()).values()
                           if e.get("normalization_type") == "LN" and e["task"] not in mechanisms.TEXT_TASKS)
    return out


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


#: The number of things as the prose writes it.
NUMBER_WORDS = {0: "none", 1: "one", 2: "two", 3: "three", 4: "four"}


def held_out_words(out: dict) -> dict:
    """The held-out split's verdict as the sentence words it, from the ranks on the other half
    (``ho_<rule>_<half>_rank``): ``ho_rules_verdict`` ("neither rule carries over", "only one rule carries
    over", "both rules carry over": a rule carries over when each half's choice is first on the other) and
    ``ho_first_choices`` (whether each half's first choice is first on the other: "is not first", "is first",
    or "is first in N of 4 choices")."""
    ranks = {tag: [out[f"ho_{tag}_{h}_rank"] for h in ("A", "B")] for tag in ("rho", "pk")}
    carry = sum(all(r == 1 for r in rs) for rs in ranks.values())
    verdict = {0: "neither rule carries over", 1: "only one rule carries over", 2: "both rules carry over"}[carry]
    firsts = sum(r == 1 for rs in ranks.values() for r in rs)
    n = sum(len(rs) for rs in ranks.values())
    choices = ("is not first" if firsts == 0 else "is first" if firsts == n
               else f"is first in {NUMBER_WORDS.get(firsts, firsts)} of {NUMBER_WORDS.get(n, n)} choices")
    return {"ho_rules_verdict": verdict, "ho_first_choices": choices}


def path_alone_values(rep: dict, card: dict) -> dict:
    """The main card recomputed with the circuit decided by the path alone (``scorecard(circuit_by="path")``,
    report key ``circuit_by_path``, each card with its own Holm family of ``pa_n_comparisons``): in the task's
    mode, the models with a circuit and configurations, how many more than by label and path and from which
    families, path size's and the Frobenius score's Spearman, and how many differences from a size score,
    partials beyond head sizes and beyond path size hold; in the largest path's mode, the models, how many hold
    beyond path size, and the subspace score's partial there with its p adjusted over every comparison of the
    report and of both cards at once (``pa_largest_subspace_p_all``: the strictest family the text could mean)."""
    from headspace import scorecard, stats
    path = rep["circuit_by_path"]["mean-circuit|task"]
    largest = rep["circuit_by_path"]["mean-circuit|largest"]
    added = [n for n in path["models"] if n not in card["models"]]
    tasks = [n.split("-")[0] for n in added]
    out = {"pa_n_formed": path["n_models"], "pa_n_added": len(added), "pa_n_configs": path["n_configurations"],
           "pa_n_comparisons": path["n_comparisons"], "pa_added_lookup": tasks.count("lookup"),
           "pa_added_words": tasks.count("words"), "pa_added_reverse": tasks.count("reverse")}
    rho = path["stats"]["spearman"]
    for s, tag in (("product_norm", "pn"), ("frobenius", "frob")):
        _triple(out, f"pa_{tag}_rho", rho[s])
    normalised = [s for s in path["scores"] if s not in scorecard.SIZE_SCORES]

    def n_holding(c, statistic):
        return sum(r["statistic"] == statistic and r["score"] in normalised for r in holding(c, False))

    out["pa_n_held"] = len(holding(path)) + len(holding(largest))          # in either mode
    out["pa_n_partial_np_holds"] = n_holding(path, "partial_norm_product")
    out["pa_n_partial_pn_holds"] = n_holding(path, "partial_product_norm")
    out["pa_largest_n_formed"] = largest["n_models"]
    out["pa_largest_n_partial_pn_holds"] = n_holding(largest, "partial_product_norm")
    _triple(out, "pa_largest_subspace_partial_pn", largest["stats"]["partial_product_norm"]["subspace"])
    f = card["comparison_fields"]
    out["pa_largest_subspace_p_holm"] = next(r["p_holm"] for r in (dict(zip(f, c)) for c in largest["comparisons"])
                                             if (r["score"], r["against"], r["statistic"]) ==
                                             ("subspace", "0", "partial_product_norm"))
    cards = [*rep["scorecards"].values(), path, largest]
    rows = [dict(zip(f, c)) for c_ in cards for c in c_["comparisons"]]
    adjusted = stats.holm(np.array([np.nan if r["p"] is None else r["p"] for r in rows], dtype=float))
    first = len(rows) - len(largest["comparisons"])
    at = next(i for i in range(first, len(rows))
              if (rows[i]["score"], rows[i]["against"], rows[i]["statistic"]) == ("subspace", "0", "partial_product_norm"))
    out["pa_largest_subspace_p_all"] = float(adjusted[at])
    return out


def power_values(card: dict) -> dict:
    """What the Holm family can detect on the main card: the per-comparison p the smallest must reach
    (``sc_alpha_per``, 0.05 over the family), the strongest difference of a score from a size score by its
    unadjusted p (``sc_strongest_*``: names, the difference with its interval, ``sc_strongest_p``), and the
    Spearman difference from a size score that would reach that threshold half the time
    (``sc_detectable_rho``: the threshold's quantile times the median standard error of those
    differences, read off their intervals as the p-values are, by Student's t with n - 1 degrees of
    freedom, n the card's configurations: ``stats.p_value``, ``stats.expanded_interval``)."""
    from headspace import scorecard, stats
    m = card["holm_family"]["n_comparisons"]
    df = card["bootstrap"]["n"] - 1
    f = card["comparison_fields"]
    rows = [dict(zip(f, c)) for c in card["comparisons"]]
    sized = [r for r in rows if r["against"] != "0" and r["statistic"] in COMPARED and r["p"] is not None]
    best = min(sized, key=lambda r: r["p"])
    z = stats.t_quantile(1 - ALPHA / m, df)
    q = stats.t_quantile(card.get("level", scorecard.LEVEL), df)
    se = [(r["hi"] - r["lo"]) / (2 * q) for r in sized if r["statistic"] == "spearman"]
    out = {"sc_alpha_per": ALPHA / m, "sc_strongest_score": name(best["score"]),
           "sc_strongest_against": name(best["against"]), "sc_strongest_statistic": STATISTIC_WORDS[best["statistic"]],
           "sc_strongest_p": best["p"], "sc_detectable_rho": float(z * np.median(se))}
    _triple(out, "sc_strongest", (best["difference"], best["lo"], best["hi"]))
    return out


#: A ground truth as the prose names it.
GROUND_TRUTH_WORDS = {"mean-circuit": "mean ablation", "resample-circuit": "resample ablation",
                      "excess-circuit": "the excess ground truth"}
#: A statistic as the prose names it.
STATISTIC_WORDS = {"spearman": "Spearman", "auroc": "AUROC", "top1": "top-1 hit", "precision_at_k": "precision@k"}


#: The two newest families, added after the first review: the article gives the excess card's estimate beyond path
#: size without them.
NEWEST = ("reptext-none-attn-2l", "table-none-attn-2l")


def excess_subspace_without(families=NEWEST, seed: int = 0) -> dict:
    """The subspace score's partial beyond path size on the excess card without ``families``, as its comparison
    row (``difference``, ``lo``, ``hi``, ``p``, ``p_holm``, Holm over every card of the report recomputed without
    them), at bootstrap ``seed`` (0: the shipped report's). About a minute at load 6 on two cores."""
    from headspace import controlled, scorecard
    zoo = _zoo()
    data = scorecard.zoo_data(zoo, None, {controlled.CONTROLLED: controlled.read_zoo(zoo)[controlled.CONTROLLED]})
    sub = data.subset([i for i, f in enumerate(data.families) if f not in families])
    cards = scorecard.holm_family({f"{g}|{m}": scorecard.scorecard(sub, g, m, seed=seed)
                                   for g in scorecard.REPORT_GROUND_TRUTHS for m in scorecard.REPORT_MODES})
    c = cards[f"{controlled.CONTROLLED}|task"]
    return next(dict(zip(c["comparison_fields"], x)) for x in c["comparisons"]
                if (x[0], x[1], x[2]) == ("subspace", "0", "partial_product_norm"))


def excess_subspace_configurations(score: str = "subspace") -> dict:
    """The subspace score's partial beyond path size on the excess ground truth (each task's mode), configuration by
    configuration (``configurations.by_configuration``: the mean over the configuration's models with a circuit):
    in how many configurations it is above zero (``sc_excess_subspace_n_positive`` of ``_n_configs``), the range
    of the configuration means, and the one-sided sign test over configurations (``_sign_p``: the chance of at
    least that many above zero if each were as likely below). Why: with 9 configurations the sign test cannot go
    below 2^-9, about 0.002, the most that 9 units can show without assuming a normal tail; it is the evidence for
    the direction, which the Holm family over every card cannot reach."""
    from math import comb
    from headspace import configurations, controlled, scorecard
    zoo = _zoo()
    data = scorecard.zoo_data(zoo, None, {controlled.CONTROLLED: controlled.read_zoo(zoo)[controlled.CONTROLLED]})
    rows = configurations.by_configuration(data, controlled.CONTROLLED, "task", scores=[score])
    means = [r["stats"]["partial_product_norm"][score][0] for r in rows]
    n, k = len(means), sum(m > 0 for m in means)
    return {"sc_excess_subspace_n_configs": n, "sc_excess_subspace_n_positive": k,
            "sc_excess_subspace_config_min": min(means), "sc_excess_subspace_config_max": max(means),
            "sc_excess_subspace_sign_p": sum(comb(n, j) for j in range(k, n + 1)) / 2 ** n}


@functools.lru_cache(maxsize=1)
def without_reptext_excess() -> dict:
    """The excess card's partials beyond path size without the repetitive-text family, ``{score: [estimate,
    lo, hi]}`` (the bootstrap of the shipped report, seed 0): the estimate barely moves, the interval widens."""
    from headspace import controlled, scorecard
    zoo = _zoo()
    data = scorecard.zoo_data(zoo, None, {controlled.CONTROLLED: controlled.read_zoo(zoo)[controlled.CONTROLLED]})
    sub = data.subset([i for i, f in enumerate(data.families) if f != "reptext-none-attn-2l"])
    return scorecard.scorecard(sub, controlled.CONTROLLED, "task")["stats"]["partial_product_norm"]


def _triple(out: dict, key: str, iv) -> None:
    out[key], out[f"{key}_lo"], out[f"{key}_hi"] = iv


def batch_score_beside(data, card: dict, per_batch: list, against: str = "product_norm", seed: int = 0,
                       resamples: int | None = None, level: float | None = None) -> dict:
    """Spearman of a score measured on the evaluation batches (edge attribution patching), beside the weight
    score ``against``, on the models with a circuit of ``card`` (a ``scorecard`` of ``data``), with the
    score's batches drawn together with the ground truth's.

    ``per_batch``: per model of ``data`` an array ``[n_batches, 3, P]``, the score on each batch the ground
    truth is measured on. Why: the scorecard holds every score fixed while it resamples the ground truth's
    batches, right for a weight score but not for one measured on the same batches: it would leave the
    score's own batch noise out of its interval. Here each draw averages the score over the very batches it
    averages the ground truth over (the scorecard's own batch draws, same ``seed``: path size's numbers are
    the card's), and the models as the card does (configurations, then seeds, ``scorecard.bootstrap_units``).
    Returns ``{key: [estimate, lo, hi]}`` (the differences with their p as a fourth) for: ``"all"``, the score
    averaged over all the batches; ``"one"``, the score from one batch (the first for the estimate, the first
    of each draw's batches in the draws: the cost-matched variant, its batch noise included); ``"against"``;
    ``"all_minus"`` and ``"one_minus"``, each minus ``against`` over the same draws.

    >>> import numpy as np
    >>> from headspace import scorecard
    >>> d = scorecard.ZooData.synthetic(np.random.default_rng(0))
    >>> card = scorecard.scorecard(d, "mean-circuit", resamples=50)
    >>> noisy = [g + np.random.default_rng(1).normal(0, 0.02, g.shape) for g in d.ground_truths["mean-circuit"]]
    >>> r = batch_score_beside(d, card, noisy, resamples=50)
    >>> round(r["against"][0], 4) == card["stats"]["spearman"]["product_norm"][0], r["all"][0] > r["one"][0]
    (True, True)
    """
    from headspace import scorecard, stats
    resamples = card["resamples"] if resamples is None else resamples
    level = card["level"] if level is None else level
    gt_name = card["ground_truth"]
    formed = np.array([n in card["models"] for n in data.names])
    modes = ["QKV".index(card["model_modes"][n]) for n in data.names]
    # the scorecard's batch draws (scorecard._model_draws): one generator, every model in order
    rng = np.random.default_rng(seed)
    per = {k: np.full((len(data.names), resamples + 1), np.nan) for k in ("all", "one", "against")}
    n_batches = []
    for m in range(len(data.names)):
        gt = data.ground_truths[gt_name][m][:, modes[m]]                       # [B, P]
        B = gt.shape[0]
        n_batches.append(B)
        sb = np.asarray(per_batch[m], dtype=float)[:, modes[m]]               # [B, P]
        if sb.shape != gt.shape:
            raise ValueError(f"per_batch[{m}] must have the ground truth's shape {list(gt.shape)} in its mode; "
                             f"got {list(sb.shape)}")
        draws = rng.integers(0, B, (resamples, B))
        w = np.zeros((resamples + 1, B))
        w[0] = 1.0 / B
        np.add.at(w, (np.repeat(np.arange(1, resamples + 1), B), draws.ravel()), 1.0 / B)
        g = w @ gt                                                              # [D, P]
        one = np.concatenate([sb[:1], sb[draws[:, 0]]])                         # [D, P]
        per["all"][m] = stats.spearman_along(w @ sb, g)
        per["one"][m] = stats.spearman_along(one, g)
        per["against"][m] = stats.spearman_along(np.asarray(data.scores[against][m])[modes[m]][None], g)
    counts, n, _ = scorecard.bootstrap_units(data.families, formed, n_batches, resamples, seed + 1)
    c = counts.astype(float)
    mean = {k: np.einsum("dm,md->d", c, np.nan_to_num(v)) / np.einsum("dm,md->d", c, np.isfinite(v).astype(float))
            for k, v in per.items()}
    mean["all_minus"], mean["one_minus"] = mean["all"] - mean["against"], mean["one"] - mean["against"]
    out = {}
    for k, d in mean.items():
        iv = stats.expanded_interval(d[1:], d[0], n, level)
        out[k] = [float(iv[0]), float(iv[1]), float(iv[2])]
        if k.endswith("_minus"):
            out[k].append(float(stats.p_value(d[1:], d[0], n)))
    return out


@functools.lru_cache(maxsize=1)
def zoo_confounds() -> dict:
    """What the ground truths reward beside composition, on the zoo (``zoo/``): per ground truth, the
    scorecard of the perturbation's size alone as a score (its push into the reader, measured on the
    evaluation batches: ``headspace.controlled``), and edge attribution patching (resample) on every
    evaluation batch the ground truths are measured on, scored as a weight score is against resample path
    patching, its batches drawn with the ground truth's (``batch_score_beside``)."""
    from headspace import benchmark as bench
    from headspace import controlled, scorecard
    from headspace.attribution import edge_attribution
    zoo = _zoo()
    c = controlled.read_zoo(zoo)
    data = scorecard.zoo_data(zoo, ground_truths={controlled.CONTROLLED: c[controlled.CONTROLLED]})
    weights_data = data
    idx = {n: bench.later_pairs(*c["size_mean"][n].shape[2:4]) for n in data.names}
    per = lambda field: [c[field][n].mean(0).reshape(3, -1)[:, idx[n]] for n in data.names]  # noqa: E731
    # edge attribution on each batch the resample ground truth is measured on ([B, 3, P] per model)
    eap = []
    for m, n in enumerate(data.names):
        toks, mask = bench.eval_batches(zoo, bench.zoo_models(zoo)[n]["task"])
        model = bench.load_zoo_model(zoo, n)
        eap.append(np.stack([edge_attribution(model, toks[b], "QKV", "resample", mask[b]).reshape(3, -1)[:, idx[n]]
                             for b in range(data.ground_truths["resample-circuit"][m].shape[0])]))
    data = data.with_score("size_mean", per("size_mean")).with_score("size_resample", per("size_resample"))
    cards = {g: scorecard.scorecard(data, g) for g in ("mean-circuit", "resample-circuit", controlled.CONTROLLED)}
    # pairs outside the circuit (below the causal threshold) in the formed models, task mode: how many have
    # an effect more than two standard errors (over the evaluation batches) above zero, the median of those,
    # and the median of all of them (the review, sceptic4: the two differ by 4x to 1,500x)
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
                      "median": float(np.median([x for x, _ in effects])),
                      "median_above": float(np.median([x for x, a in effects if a]))}
    # edge attribution beside path size, its batches drawn with the ground truth's: on every model with a
    # circuit, and without the table-lookup family, whose lookups leave it almost no gradient
    rc = cards["resample-circuit"]
    eap_beside = batch_score_beside(data, rc, eap)
    keep = [i for i, f in enumerate(data.families) if f != "table-none-attn-2l"]
    no_table = data.subset(keep)
    eap_no_table = batch_score_beside(no_table, scorecard.scorecard(no_table, "resample-circuit"), [eap[i] for i in keep])
    # the first-order error and the sign, per model with a circuit, task mode: the largest exact effect over
    # the largest EAP, on the same (first) batch; and whether EAP gives the path of largest exact effect a
    # negative score, on the first batch and on the mean of the batches
    ratios, wrong_sign_one, wrong_sign_all = {}, [], []
    for m, n in enumerate(data.names):
        if n in rc["models"]:
            mode = "QKV".index(rc["model_modes"][n])
            exact = data.ground_truths["resample-circuit"][m][:, mode]                # [B, P]
            ratios[n] = float(exact[0].max() / np.abs(eap[m][0, mode]).max())
            if eap[m][0, mode][np.argmax(exact[0])] < 0:
                wrong_sign_one.append(n)
            if eap[m][:, mode].mean(0)[np.argmax(exact.mean(0))] < 0:
                wrong_sign_all.append(n)
    return {"cards": cards, "outside": outside, "data": weights_data, "eap_ratios": ratios,
            "eap_beside": eap_beside, "eap_no_table": eap_no_table,
            "eap_wrong_sign_one": wrong_sign_one, "eap_wrong_sign_all": wrong_sign_all}


#: The held-out rules the article states over many splits: the statistic and its key's tag.
SPLIT_RULES = (("spearman", "rho"), ("precision_at_k", "pk"))


def split_values(data) -> dict:
    """The held-out rule over every distinct split the first ``splits.N_SEEDS`` split seeds draw
    (``headspace.splits.many_splits``): per rule, how often the score chosen on one half is first, in the
    top ``splits.TOP`` and (Spearman) last on the other, in how many splits it carries over both ways, how
    often path size and the most chosen other score are chosen, and path size's worst rank on any half."""
    from headspace import splits
    out = {}
    for stat, tag in SPLIT_RULES:
        s = splits.many_splits(data, stat)
        k = f"sp_{tag}"
        out["sp_n_splits"], out["sp_n_seeds"], out["sp_n_directions"] = s["n_splits"], s["n_seeds"], s["n_directions"]
        out["sp_top"] = s["top"]
        out[f"{k}_first"], out[f"{k}_top"] = s["first_on_other"], s["top_on_other"]
        if stat == "spearman":
            out[f"{k}_last"] = s["last_on_other"]
        out[f"{k}_both_ways"] = s["both_ways"]
        out[f"{k}_size_chosen"] = s["chosen_counts"].get("product_norm", 0)
        out[f"{k}_size_worst_rank"] = s["worst_rank"]["product_norm"]
        # the score chosen most often besides path size, and how often
        others = [(n, c) for n, c in s["chosen_counts"].items() if n != "product_norm"]
        if others:
            out[f"{k}_other_chosen"], out[f"{k}_other_chosen_n"] = name(others[0][0]), others[0][1]
        # the splits where path size is first on both halves (each half chooses it): "path size came first on
        # both halves in N splits" says this, not ``both_ways``, which counts any score that carries over
        if stat == "spearman":
            out[f"{k}_size_first_both"] = sum(len(r["directions"]) == 2 and all(d["chosen"] == "product_norm"
                                                                               for d in r["directions"])
                                              for r in s["splits"])
    return out


#: The paired difference the per-configuration table gives: the token diagonal against path size.
CONFIG_PAIR = ("token_diagonal", "product_norm")


def configuration_tag(family: str) -> str:
    """A configuration's name as a value key: ``recall-none-attn-2l`` -> ``recall_none_attn_2l``."""
    return family.replace("-", "_")


def configuration_values(data) -> dict:
    """Per configuration with a circuit (``headspace.configurations.by_configuration``, main ground truth, each
    model in its task's mode): the Spearman of path size and of the token diagonal, their paired difference,
    and the score with the highest estimate, each with its interval over the configuration's seeds and batches;
    and how many configurations' difference interval lies above zero and below it, before and after Holm over
    the configurations."""
    from headspace import configurations
    rows = configurations.by_configuration(data, pairs=[CONFIG_PAIR])
    out = {"pc_n_configs": len(rows)}
    for r in rows:
        k = f"pc_{configuration_tag(r['configuration'])}"
        rho = r["stats"]["spearman"]
        out[f"{k}_n"] = r["n_models"]
        _triple(out, f"{k}_pn", rho["product_norm"])
        _triple(out, f"{k}_td", rho["token_diagonal"])
        _triple(out, f"{k}_diff", r["differences"]["-".join(CONFIG_PAIR)]["spearman"])
        out[f"{k}_leader"] = name(r["leader"]["spearman"])
        _triple(out, f"{k}_leader_rho", rho[r["leader"]["spearman"]])
    diffs = [r["differences"]["-".join(CONFIG_PAIR)]["spearman"] for r in rows]
    out["pc_n_td_above"] = sum(d[1] > 0 for d in diffs)
    out["pc_n_td_below"] = sum(d[2] < 0 for d in diffs)
    out["pc_n_size_leads"] = sum(r["leader"]["spearman"] == "product_norm" for r in rows)
    # the same counts after Holm over the configurations alone (their own family of pc_n_configs tests, not the
    # scorecard's): each difference's p as the configuration's own scorecard computes it (stats.p_value, over
    # its seeds), the card drawn as by_configuration draws it
    from headspace import stats
    p = [configuration_p(data, r["configuration"]) for r in rows]
    adjusted = stats.holm(p)
    out["pc_n_td_above_holm"] = sum(bool(d[0] > 0 and a < ALPHA) for d, a in zip(diffs, adjusted))
    out["pc_n_td_below_holm"] = sum(bool(d[0] < 0 and a < ALPHA) for d, a in zip(diffs, adjusted))
    out["pc_largest_p_holm_kept"] = max((float(a) for a in adjusted if a < ALPHA), default=None)
    # a configuration's p rests on 3 to 5 seeds; each seed has its own evidence, over its own evaluation
    # batches. Over the configurations whose interval excludes zero: per seed, the difference with its
    # percentile interval over its batches (seed_intervals); how many seeds in all, how many have an interval
    # on their configuration's side of zero, and per configuration the range of the seeds' estimates
    sided = [(r, d) for r, d in zip(rows, diffs) if d[1] > 0 or d[2] < 0]
    out["pc_seed_n"], out["pc_seed_n_side"] = 0, 0
    for r, d in sided:
        ivs = seed_intervals(data, r["models"])
        out["pc_seed_n"] += len(ivs)
        out["pc_seed_n_side"] += sum(bool(iv.lo > 0 if d[0] > 0 else iv.hi < 0) for iv in ivs)
        k = f"pc_{configuration_tag(r['configuration'])}"
        est = sorted((iv.estimate for iv in ivs), key=abs)
        out[f"{k}_seed_near"], out[f"{k}_seed_far"] = est[0], est[-1]
    return out


def configuration_p(data, family: str, ground_truth: str = "mean-circuit", pair=CONFIG_PAIR) -> float:
    """The p of ``pair[0]`` minus ``pair[1]`` on Spearman within one configuration, as that configuration's
    own scorecard computes it (``scorecard.scorecard`` on the family's models, the draws of
    ``configurations.by_configuration``): the interval beside it in the table and this p come from the same
    draws and the same reference (``stats.p_value``)."""
    from headspace import scorecard
    keep = [i for i, f in enumerate(data.families) if f == family]
    card = scorecard.scorecard(data.subset(keep), ground_truth, "task")
    return float(next(c[6] for c in card["comparisons"] if (c[0], c[1], c[2]) == (*pair, "spearman")))


def seed_intervals(data, models, pair=None, ground_truth: str = "mean-circuit") -> list:
    """Per model of ``models`` (names in ``data``): the Spearman of ``pair[0]`` minus that of ``pair[1]``
    (default ``CONFIG_PAIR``) against the mean of its batches of ``ground_truth``, in its task's mode, with its
    paired percentile interval over a bootstrap of its evaluation batches (``stats.spearman_difference``).
    Why: the evidence of one seed on its own, which a configuration's p over 3 to 5 seeds cannot give."""
    from headspace import stats
    a, b = CONFIG_PAIR if pair is None else pair
    out = []
    for n in models:
        i = data.names.index(n)
        mode = "QKV".index(data.task_mode[i])
        out.append(stats.spearman_difference(data.scores[a][i][mode], data.scores[b][i][mode],
                                             data.ground_truths[ground_truth][i][:, mode]))
    return out


#: The pairs of ground truths whose agreement the article states (a, b, key).
AGREEMENT_PAIRS = (("mean-all", "mean-circuit", "all_circuit"), ("mean-circuit", "resample-circuit", "mean_resample"),
                   ("mean-all", "resample-all", "mean_resample_all"), ("mean-circuit", "excess-circuit", "mean_excess"),
                   ("resample-circuit", "excess-circuit", "resample_excess"))


def agreement_values(data, with_circuit, resamples: int = 1000) -> dict:
    """How well two ground truths agree, model by model (Spearman over its pairs of the two ground truths'
    means over its evaluation batches, in its task's mode), as the median over the models with a circuit
    (``with_circuit``) and over the others apart, each with a percentile interval over a bootstrap of the
    configurations and their seeds (``stats.cluster_draws``; the batches are not redrawn here)."""
    from headspace import stats
    keep = np.array([n in with_circuit for n in data.names])
    out = {"agree_n_circuit": int(keep.sum()), "agree_n_apart": int((~keep).sum())}
    for a, b, key in AGREEMENT_PAIRS:
        rho = np.array([stats.spearman(ga.mean(0)[MODE_INDEX[mode]], gb.mean(0)[MODE_INDEX[mode]])
                        for ga, gb, mode in zip(data.ground_truths[a], data.ground_truths[b], data.task_mode)])
        for part, tag in ((keep, "circuit"), (~keep, "apart")):
            idx = np.flatnonzero(part)
            fams = [data.families[i] for i in idx]
            counts = stats.cluster_draws(fams, resamples, 0)
            draws = [np.median(np.repeat(rho[idx], c)) for c in counts[1:] if c.sum()]
            lo, hi = np.quantile(draws, [0.025, 0.975])
            _triple(out, f"agree_{key}_{tag}", (float(np.median(rho[idx])), float(lo), float(hi)))
    return out


def outside_order_values(data, card, resamples: int = 1000) -> dict:
    """On the pairs outside the circuit alone (below the causal threshold by mean ablation at the circuit's
    positions) of each model with a circuit, in its task's mode: the Spearman of path size and of the
    Frobenius score with the mean and the resample ground truth (batch means), averaged over the models,
    each with a percentile interval over a bootstrap of configurations and seeds (``stats.cluster_draws``;
    batches not redrawn)."""
    from headspace import scorecard, stats
    ms = [i for i, n in enumerate(data.names) if n in card["models"]]
    counts = stats.cluster_draws([data.families[i] for i in ms], resamples, 0).astype(float)
    out = {}
    for g, gtag in (("mean-circuit", "mean"), ("resample-circuit", "resample")):
        for score, stag in (("product_norm", "pn"), ("frobenius", "frob")):
            rho = []
            for i in ms:
                mode = MODE_INDEX[card["model_modes"][data.names[i]]]
                outside = ~scorecard.causal_pairs(data.ground_truths["mean-circuit"][i].mean(0)[mode])
                rho.append(stats.spearman(data.scores[score][i][mode][outside],
                                          data.ground_truths[g][i].mean(0)[mode][outside]))
            rho = np.array(rho)
            ok = np.isfinite(rho)
            c = counts * ok[None]
            draws = (c @ np.where(ok, rho, 0.0)) / c.sum(1)
            lo, hi = np.quantile(draws[1:], [0.025, 0.975])
            _triple(out, f"out_{gtag}_{stag}", (float(draws[0]), float(lo), float(hi)))
    return out


#: Each mode's index in a ground truth's mode axis.
MODE_INDEX = {"Q": 0, "K": 1, "V": 2}


def words_values() -> dict:
    """The word-level text models: their designed path (the label's measurement, headspace.mechanisms) and
    the designed reader's attention on the induction target, over the seeds whose path alone reaches the
    label's path threshold (the label needs both)."""
    from headspace import benchmark as bench
    from headspace import mechanisms
    zoo = _zoo()
    recs = [mechanisms.read(zoo, n) for n, e in bench.zoo_models(zoo).items() if e["task"] == "words"]
    over = [r for r in recs if r["effect"] >= mechanisms.PATH]
    return {"words_n_path_over": len(over), "words_path_min": min(r["effect"] for r in over),
            "words_path_max": max(r["effect"] for r in over),
            "words_reader_min": min(r["reader_attention"] for r in over),
            "words_reader_max": max(r["reader_attention"] for r in over),
            "words_reader_all_max": max(r["reader_attention"] for r in recs)}


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
    # the estimates of every score that is not a size, and which hold after Holm (named when one does)
    out["sc_partial_np_min"] = min(card["stats"]["partial_norm_product"][s][0] for s in normalised)
    out["sc_partial_np_max"] = max(card["stats"]["partial_norm_product"][s][0] for s in normalised)
    if len(held) == 1:
        out["sc_partial_np_holder"] = name(held[0])
        _triple(out, "sc_partial_np_held", card["stats"]["partial_norm_product"][held[0]])
    # beyond head sizes before any correction (intervals that exclude zero) and the smallest adjusted p among them
    out["sc_partial_np_n_excludes_0"] = sum(card["stats"]["partial_norm_product"][s][1] > 0 for s in normalised)
    f = card["comparison_fields"]
    np_rows = [dict(zip(f, c)) for c in card["comparisons"] if c[1] == "0" and c[2] == "partial_norm_product"
               and c[0] in normalised]
    out["sc_partial_np_smallest_p_holm"] = min(r["p_holm"] for r in np_rows)
    # every comparison of the family that survives Holm, over every card (named when exactly one)
    survivors = [(key, dict(zip(f, c))) for key, c_ in rep["scorecards"].items() for c in c_["comparisons"]
                 if c[7] is not None and c[7] < ALPHA]
    out["sc_n_survive_all"] = len(survivors)
    if len(survivors) == 1:
        key, r = survivors[0]
        out["sc_survivor_score"] = name(r["score"])
        out["sc_survivor_what"] = {"partial_norm_product": "beyond head sizes", "partial_product_norm":
                                   "beyond path size"}.get(r["statistic"], STATISTIC_WORDS.get(r["statistic"], r["statistic"]))
        out["sc_survivor_ground_truth"] = GROUND_TRUTH_WORDS[key.split("|")[0]]
        out["sc_survivor_p_holm"] = r["p_holm"]
    # the bar in standard errors: the t (n - 1 degrees of freedom, n the configurations) whose two-sided tail is
    # 0.05 over the family, the smallest p's bar under Holm, and the normal's for the same tail
    from statistics import NormalDist
    from headspace import stats
    bar = ALPHA / card["holm_family"]["n_comparisons"]
    out["sc_bar_t"] = stats.t_quantile(1 - bar, card["bootstrap"]["n"] - 1)
    out["sc_bar_z"] = NormalDist().inv_cdf(1 - bar / 2)
    # before any correction: how many scores' partial beyond path size has an interval that excludes zero (the
    # claim tests check how near zero the nearest ends are: tests/site/test_benchmark_claims.py)
    ends = [min(abs(lo), abs(hi)) for s in CARD_ROWS if s not in scorecard.SIZE_SCORES
            for _, lo, hi in [card["stats"]["partial_product_norm"][s]] if lo > 0 or hi < 0]
    out["sc_n_partial_pn_excludes_0"] = len(ends)
    out["sc_n_partial_pn_holds"] = sum(r["statistic"] == "partial_product_norm" for r in holding(card, False))
    # the one score beyond head sizes that does not hold after Holm (named when exactly one), with its interval
    dropped = [s for s in normalised if s not in held]
    if len(dropped) == 1:
        out["sc_partial_np_dropped_score"] = name(dropped[0])
        _triple(out, "sc_partial_np_dropped", card["stats"]["partial_norm_product"][dropped[0]])
    # the Holm family: every comparison of every card of the report (headspace.scorecard.holm_family)
    out["sc_n_family"] = card["holm_family"]["n_comparisons"]
    # the same family without the exact twins' comparisons (frobenius_baseline, projection_kernel: they rank
    # as frobenius and subspace), which the report keeps in; the article states both sizes
    f = card["comparison_fields"]
    out["sc_n_family_no_twins"] = sum(
        1 for c_ in rep["scorecards"].values() for c in c_["comparisons"]
        if dict(zip(f, c))["p"] is not None and not {c[0], c[1]} & {"frobenius_baseline", "projection_kernel"})
    out.update(power_values(card))
    # how many combinations of ground truth and mode the report holds (the article: no difference from a
    # size score holds after Holm in any of them; tests/site/test_benchmark_claims.py)
    out["sc_n_cards"] = len(rep["scorecards"])
    # the comparisons with a size score that do hold after Holm, over every card (the article names the one)
    held_any = [(key, r) for key, c in rep["scorecards"].items() for r in holding(c)]
    out["sc_n_held_anywhere"] = len(held_any)
    if len(held_any) == 1:
        key, r = held_any[0]
        out["sc_held_score"], out["sc_held_against"] = name(r["score"]), name(r["against"])
        # the article states how much better the size score does: against minus score, and its interval
        _triple(out, "sc_held_lead", (-r["difference"], -r["hi"], -r["lo"]))
        out["sc_held_p_holm"] = r["p_holm"]
    # the mode: each model in the mode of its largest path
    largest = rep["scorecards"]["mean-circuit|largest"]
    task_mode = {n: MODE_OF_TASK[n.split("-")[0]] for n in largest["model_modes"]}
    moved = [n for n, m in largest["model_modes"].items() if m != task_mode[n]]
    out["sc_n_moved_mode"] = len(moved)
    out["sc_n_scored"] = len(largest["model_modes"])
    out["sc_n_moved_mode_formed"] = sum(n in largest["models"] for n in moved)
    out["sc_n_reverse_moved"] = sum(n.startswith("reverse") for n in moved)
    out["sc_n_reverse"] = sum(n.startswith("reverse") for n in task_mode)
    _triple(out, "sc_gap_task", difference(card, "frobenius", "product_norm", "spearman")[:3])
    _triple(out, "sc_gap_largest", difference(largest, "frobenius", "product_norm", "spearman")[:3])
    # each model in the mode its recorded mechanism names (headspace.mechanisms): how many leave their task's
    # mode, how many of those with a circuit read in another mode than their largest path's, and the gap there
    mech = rep["scorecards"]["mean-circuit|mechanism"]
    out["sc_mech_n_formed"] = mech["n_models"]
    out["sc_mech_n_moved"] = sum(m != task_mode[n] for n, m in mech["model_modes"].items() if n in mech["models"])
    out["sc_mech_n_not_largest"] = sum(mech["model_modes"][n] != largest["model_modes"][n] for n in mech["models"])
    # the main card's models with a circuit whose recorded mechanism runs through another mode than their task's
    # (read in the task's mode all the same: the article says why, and that the mechanism's card agrees)
    out["sc_task_n_mech_other"] = sum(mech["model_modes"][n] != task_mode[n] for n in card["models"])
    _triple(out, "sc_gap_mechanism", difference(mech, "frobenius", "product_norm", "spearman")[:3])
    # how the gap changes with the mode, paired: one bootstrap draws every mode's gap at once
    # (headspace.scorecard.mode_gaps), the change from the task's mode taken draw by draw
    gaps = rep["mode_gaps"]["mean-circuit"]
    for m in ("largest", "mechanism"):
        _triple(out, f"sc_gap_change_{m}", gaps["differences"][f"{m}-task"][:3])
    # the sensitivity with the circuit decided by the path alone (the labels ignored): how many models come in,
    # from which tasks, and what the main card's verdicts become (its own Holm family)
    out.update(path_alone_values(rep, card))
    # beyond head sizes in the mechanism's mode: how many of the scores that are not sizes hold after Holm
    out["sc_mech_n_partial_np_holds"] = sum(r["statistic"] == "partial_norm_product" and r["score"] in normalised
                                            for r in holding(mech, False))
    # the headline counts in the mechanism's mode, which the article sets beside the task's (recommendation 4):
    # configurations with a circuit, the smallest adjusted p against a size score, the partials beyond path
    # size that hold, path size's Spearman and the score with the highest Spearman estimate
    out["sc_mech_n_configs"] = mech["n_configurations"]
    out["sc_mech_smallest_p"] = smallest_p(mech)
    out["sc_mech_n_partial_pn_holds"] = sum(r["statistic"] == "partial_product_norm" for r in holding(mech, False))
    _triple(out, "sc_mech_product_norm_spearman", mech["stats"]["spearman"]["product_norm"])
    # top-1 in the mechanism's mode: the score with the highest estimate (the twins left out), and its interval
    top1 = max((s_ for s_ in CARD_ROWS if mech["stats"]["top1"][s_][0] is not None), key=lambda s_: mech["stats"]["top1"][s_][0])
    out["sc_mech_top1_leader"] = name(top1)
    _triple(out, "sc_mech_top1_leader_value", mech["stats"]["top1"][top1])
    out["sc_mech_spearman_leader"] = name(max((s_ for s_ in CARD_ROWS if mech["stats"]["spearman"][s_][0] is not None),
                                              key=lambda s_: mech["stats"]["spearman"][s_][0]))
    # the circuit-less models, apart
    for s in ("product_norm", "subspace"):
        _triple(out, f"sc_none_{s}", card["circuitless"]["spearman"][s])
    # the controlled ground truth
    excess = rep["scorecards"][f"{CONTROLLED}|task"]
    for s in ("product_norm", "frobenius", "norm_product"):
        _triple(out, f"sc_excess_{s}", excess["stats"]["spearman"][s])
    _triple(out, "sc_excess_frobenius_partial", excess["stats"]["partial_norm_product"]["frobenius"])
    out["sc_excess_smallest_p"] = smallest_p(excess)
    # beyond path size on the excess card: the subspace score's partial, the largest estimate, with its p before
    # and after Holm over the family (the article: consistent in direction, not shown after the correction)
    _triple(out, "sc_excess_subspace_partial_pn", excess["stats"]["partial_product_norm"]["subspace"])
    row = next(dict(zip(excess["comparison_fields"], c)) for c in excess["comparisons"]
               if (c[0], c[1], c[2]) == ("subspace", "0", "partial_product_norm"))
    out["sc_excess_subspace_p"], out["sc_excess_subspace_p_holm"] = row["p"], row["p_holm"]
    # the same without the repetitive-text family (the estimate barely moves; only the interval widens)
    _triple(out, "sc_excess_subspace_partial_pn_noreptext", without_reptext_excess()["subspace"])
    # without both of the two newest families (the repetitive text and the table lookup), at seed 0
    both = excess_subspace_without()
    _triple(out, "sc_excess_subspace_partial_pn_no_newest", (both["difference"], both["lo"], both["hi"]))
    # configuration by configuration: the sign of its mean, and the sign test over the configurations
    out.update(excess_subspace_configurations())
    # the same in the mode each model's recorded mechanism names and in its largest path's, where it holds too
    _triple(out, "sc_excess_mech_subspace_partial_pn",
            rep["scorecards"][f"{CONTROLLED}|mechanism"]["stats"]["partial_product_norm"]["subspace"])
    _triple(out, "sc_excess_largest_subspace_partial_pn",
            rep["scorecards"][f"{CONTROLLED}|largest"]["stats"]["partial_product_norm"]["subspace"])
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
    for half in ("A", "B"):
        out[f"ho_configs_{half}"] = len({n.rsplit("-s", 1)[0] for n in h["scorecards"][half]["models"]})
    # the split's verdict in words: how many of the two rules carry over both ways, and whether each half's
    # first choice is first on the other (the ranks above)
    out.update(held_out_words(out))
    # Holm within each half: differences from a size score that hold
    f = card["comparison_fields"]
    out["ho_n_holds"] = sum(1 for half in h["scorecards"].values() for c in half["comparisons"]
                            if dict(zip(f, c))["against"] != "0" and dict(zip(f, c))["statistic"] in COMPARED
                            and c[7] is not None and c[7] < ALPHA)
    # thresholds: each varied alone; the leading point estimate on each statistic in each setting
    rows = rep["sensitivity"]["mean-circuit|task"]
    out["th_n_settings"] = len(rows)
    out["th_pk_size_leads"] = sum(r["leader"]["precision_at_k"] == "product_norm" for r in rows)
    # the score that leads the partial correlation beyond head sizes in the most settings, and in how many
    leaders = [r["leader"]["partial_norm_product"] for r in rows]
    top_partial = max(dict.fromkeys(leaders), key=leaders.count)
    out["th_partial_leader"], out["th_partial_leader_leads"] = name(top_partial), leaders.count(top_partial)
    out["th_formed_min"] = min(r["n_models"] for r in rows)
    out["th_formed_max"] = max(r["n_models"] for r in rows)
    # only the circuit threshold changes which models count; the other two change which pairs are causal,
    # which leaves every Spearman as it was: how many distinct computations the settings really are
    out["th_n_model_sets"] = len({json.dumps(r["stats"]["spearman"], sort_keys=True) for r in rows})
    # in how many of those distinct computations path size has the highest Spearman
    out["th_rho_size_leads_sets"] = len({json.dumps(r["stats"]["spearman"], sort_keys=True) for r in rows
                                         if r["leader"]["spearman"] == "product_norm"})
    # path size's narrowest lead on precision@k over the settings where it leads
    margins = [sorted((x[0] for x in r["stats"]["precision_at_k"].values() if x[0] is not None), reverse=True)
               for r in rows if r["leader"]["precision_at_k"] == "product_norm"]
    out["th_pk_size_min_margin"] = min(m[0] - m[1] for m in margins)
    # top-1: in how many settings path size, and the SVD bound, has the highest estimate (a tie counts for both)
    def top1_best(r, score):
        vals = [x[0] for x in r["stats"]["top1"].values() if x[0] is not None]
        return r["stats"]["top1"][score][0] is not None and r["stats"]["top1"][score][0] >= max(vals) - 1e-12
    out["th_top1_size_best"] = sum(top1_best(r, "product_norm") for r in rows)
    out["th_top1_svd_best"] = sum(top1_best(r, "svd_bound") for r in rows)
    # the confounds, from the zoo: the perturbation's size alone, and the pairs outside the circuit
    conf = zoo_confounds()
    for g, tag, size in (("mean-circuit", "mean", "size_mean"), ("resample-circuit", "resample", "size_resample"),
                         (CONTROLLED, "excess", "size_resample")):
        _triple(out, f"cf_{tag}_size", conf["cards"][g]["stats"]["spearman"][size])
        o = conf["outside"][g]
        out[f"cf_{tag}_outside"], out[f"cf_{tag}_outside_above"], out[f"cf_{tag}_outside_median"] = \
            o["n"], o["above"], o["median"]
        out[f"cf_{tag}_outside_above_median"] = o["median_above"]
    # size alone against path size, paired over the same draws
    _triple(out, "cf_size_minus_pn", difference(conf["cards"]["mean-circuit"], "size_mean", "product_norm", "spearman")[:3])
    # the pairs outside the circuit alone: how well path size and the Frobenius score order them
    out.update(outside_order_values(conf["data"], conf["cards"]["mean-circuit"]))
    # path size's estimate and interval beside it (the article: size alone's interval overlaps it)
    _triple(out, "cf_mean_product_norm", conf["cards"]["mean-circuit"]["stats"]["spearman"]["product_norm"])
    # edge attribution patching against resample path patching, beside path size: averaged over the ground
    # truth's batches, and from one batch (the cost-matched variant), each with its batches drawn with the
    # ground truth's; the paired differences over the same draws (the article compares by them, not by overlap)
    rc = conf["cards"]["resample-circuit"]
    eb, nt = conf["eap_beside"], conf["eap_no_table"]
    _triple(out, "eap_rho", eb["all"])
    _triple(out, "eap_one_rho", eb["one"])
    _triple(out, "eap_product_norm_rho", eb["against"])
    _triple(out, "eap_minus_size", eb["all_minus"][:3])
    out["eap_minus_size_p"] = eb["all_minus"][3]
    _triple(out, "eap_one_minus_size", eb["one_minus"][:3])
    out["eap_one_minus_size_p"] = eb["one_minus"][3]
    _triple(out, "eap_minus_size_no_table", nt["all_minus"][:3])
    out["eap_n_models"] = rc["n_models"]
    # the path of largest exact effect scored below zero: on one batch, and on the mean of the batches
    out["eap_wrong_sign_one"], out["eap_wrong_sign_all"] = len(conf["eap_wrong_sign_one"]), len(conf["eap_wrong_sign_all"])
    # how far the first order is from the full patch: per model with a circuit, the largest exact effect over
    # the largest EAP score in its task's mode, on the same (first) evaluation batch
    ratios = conf["eap_ratios"]
    out["eap_under_min"], out["eap_under_median"] = float(np.min(list(ratios.values()))), float(np.median(list(ratios.values())))
    # the largest ratios are the table-lookup models that look the entry up: their loss at the circuit's positions
    # is near zero, so the gradient edge attribution multiplies nearly vanishes (the article gives them apart)
    table = [r for n, r in ratios.items() if n.startswith("table-")]
    rest = [r for n, r in ratios.items() if not n.startswith("table-")]
    out["eap_under_table_min"], out["eap_under_table_max"] = min(table), max(table)
    out["eap_under_max_rest"] = max(rest)
    out["eap_n_table"] = len(table)
    # the cost as a count: one forward and one backward pass give every path; path patching runs the model
    # from the reader's layer on once per pair and mode (headspace.ground_truth.path_effects), here for the
    # zoo's two- and three-layer shapes
    from headspace import benchmark as bench
    from headspace import store
    shapes = {(c["n_layers"], c["n_heads"]) for c in (store.read_config(_zoo() / n) for n in conf["data"].names)}
    for L, H in sorted(shapes):
        out[f"pp_runs_{L}l"] = 3 * int(bench.later_pairs(L, H).size)
    # the held-out rules over many splits, on the weight scores the report scores
    data = conf["data"]
    # agreement between ground truths, the models with a circuit and the others apart
    out.update(agreement_values(data, card["models"]))
    # the word-level models: what their label lacks
    out.update(words_values())
    weights = scorecard.ZooData(data.names, data.families, data.tasks, data.task_mode,
                                {s: data.scores[s] for s in rep["scores"]}, data.ground_truths, data.mechanisms)
    out.update(split_values(weights))
    # the same statistics within each configuration, not pooled
    out.update(configuration_values(weights))
    return out
