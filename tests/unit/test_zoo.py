"""The benchmark zoo: what each model learned, whether its circuit is there by the ground truth, and
that the shipped benchmark table is what the zoo's weights and ground truths give.

Losses are in nats, on the first 4 held-out evaluation batches (pooled), at the positions where the
task's circuit acts; chance on induction and reverse copy is ln 64 = 4.16, on lookup ln 76 = 4.33,
on recall ln 48 = 3.87, on the table ln 36 = 3.58. Two levels:

* *learned*: at least ``LEARNED`` nats under chance (word-level text: under its step-0 loss);
* *solved* (``benchmark.solves``): induction, reverse copy and recall under 1 nat, lookup under
  ln 4 = 1.39 (what reading its two cues one at a time leaves), the table under 1 nat (one cue alone leaves
  ln 4 on its Latin half), text 1 nat under its step-0 loss.

The zoo (scripts/train_zoo.py CONFIGS; docs/decisions/0004-zoo-mechanisms.md) has five seeds a
configuration. By design, the one-layer recall models
cannot solve recall (``test_recall_needs_two_layers_and_its_models_use_v_composition``): they are the
control; they learn (a guess among the context's values) but do not solve it, and have no circuit. Of
the first zoo's models, induction-ln-mlp-2l-s2 is still on the plateau after 16000 steps (2.20 nats on
the first 4 evaluation batches; no first-layer head attends to the previous position more than
chance), two of the five table models (s1, s2: 1.32-1.33 nats on all 20 evaluation batches, above ln 4 on
their Latin half; no head on the right cell, largest Q paths 0.07 and 0.05 nats) sit on the
plateau their curriculum did not take them off, the one-layer table control cannot solve the table (it has
no second layer to bring the colour to the shape cue: ``test_the_table_needs_two_layers``), and the
character-level text models (1.89-1.93 nats on those batches, about 3 under step 0)
formed no K path over 0.012 nats. The word-level text models formed no induction mechanism (their
largest K paths 0.05-0.15 nats; decision 0004); they count as circuit-less where their largest K path
stays under 0.1 nats. The circuit test (``benchmark.circuit_present``) asks for a path of at least
``benchmark.CIRCUIT_EFFECT`` = 0.1 nats (mean ablation, circuit positions, 20 batches) in the task's
own mode. These are strict expected failures (they fail as soon as a retrained zoo passes them, so the
marks come off).
"""

import csv
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from headspace import benchmark, cli, pair_scores, store
from headspace.composition import MODES
from headspace.ground_truth import GROUND_TRUTHS
from headspace.pair_scores import SCORES
from headspace.tasks import CORPUS_TASKS, MODE_OF_TASK

ZOO = Path(__file__).resolve().parents[2] / "zoo"
MODELS = list(benchmark.zoo_models(ZOO))
LEARNED = 0.3
#: models or families that do not reach *solved* (module docstring)
NOT_SOLVED = {"recall-none-attn-1l", "induction-ln-mlp-2l-s2", "table-none-attn-1l", "table-none-attn-2l-s1",
              "table-none-attn-2l-s2"}
#: models or families without a path of their task's mode of 0.1 nats (module docstring)
NO_CIRCUIT = {"reverse-rms-attn-2l-s0", "recall-none-attn-1l", "words-none-attn-2l-s1", "words-none-attn-2l-s2",
              "words-none-attn-2l-s3",
              "induction-ln-mlp-2l-s2", "text-ln-mlp-2l", "reptext-none-attn-2l-s1", "reptext-none-attn-2l-s3",
              "table-none-attn-1l", "table-none-attn-2l-s1", "table-none-attn-2l-s2"}

def family(name):
    return benchmark.zoo_models(ZOO)[name]["family"]


def marked(names, which, reason):
    """``names``, those in ``which`` (model or family names) marked as strict expected failures."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=reason))
            if n in which or family(n) in which else n for n in names]


def heldout_loss(name):
    e = benchmark.zoo_models(ZOO)[name]
    model = benchmark.load_zoo_model(ZOO, name)
    tokens, mask = benchmark.eval_batches(ZOO, e["task"])
    toks, m = tokens[:4].reshape(-1, tokens.shape[-1]), mask[:4].reshape(-1, mask.shape[-1])
    return e, float(model.loss_per_token(toks)[m].mean())


def test_the_zoo_covers_what_the_issue_asks():
    """Every composition mode forced by some task, without normalisation, with RMSNorm and with LayerNorm
    and MLPs, two and three layers and one as a control, and at least five seeds a configuration."""
    entries = benchmark.zoo_models(ZOO)
    assert {store.read_config(ZOO / n)["normalization_type"] for n in entries} == {None, "RMS", "LN"}
    assert {store.read_config(ZOO / n)["attn_only"] for n in entries} == {True, False}
    assert {store.read_config(ZOO / n)["n_layers"] for n in entries} == {1, 2, 3}
    assert {MODE_OF_TASK[e["task"]] for e in entries.values()} == {"Q", "K", "V"}
    families = list(dict.fromkeys(e["family"] for e in entries.values()))
    assert [f for f in families if f in benchmark.FAMILIES] == list(benchmark.FAMILIES)
    # the one-layer controls: no pair of heads to score
    assert set(families) - set(benchmark.FAMILIES) == {"recall-none-attn-1l", "table-none-attn-1l"}
    for family in families:
        seeds = {e["seed"] for e in entries.values() if e["family"] == family}
        assert len(seeds) >= 5, (family, seeds)


@pytest.mark.parametrize("name", MODELS)
def test_each_models_embedding_has_full_column_rank(name):
    """The token and whitened scores factor W_E.T @ W_E (headspace._metric_inputs.embedding_factor), which
    needs d_vocab >= d_model and W_E of full column rank: checked on the trained weights, since a task
    with a small vocabulary (the 8 x 4 table's 20 tokens) makes the benchmark raise."""
    from headspace._metric_inputs import embedding_factor
    W_E = benchmark.load_zoo_model(ZOO, name).W_E
    d_vocab, d_model = W_E.shape
    sv = np.linalg.svd(W_E.astype(np.float64), compute_uv=False)
    assert d_vocab >= d_model, (d_vocab, d_model)
    embedding_factor(W_E, d_model)                  # raises where W_E.T @ W_E is numerically singular
    assert sv[-1] / sv[0] > 1e-3, sv[-1] / sv[0]


@pytest.mark.parametrize("name", MODELS)
def test_each_model_learned_its_task_on_held_out_sequences(name):
    e, loss = heldout_loss(name)
    if e["task"] in CORPUS_TASKS:
        start = store.read_training_curve(ZOO / name)["heldout_circuit_loss"][0]
        assert loss < start - LEARNED, (loss, start)
    else:
        chance = math.log(store.read_config(ZOO / name)["d_vocab"])
        assert loss < chance - LEARNED, (loss, chance)


@pytest.mark.parametrize("name", marked(MODELS, NOT_SOLVED, "not solved within its training steps (module docstring)"))
def test_each_model_solves_its_task_on_held_out_sequences(name):
    e, loss = heldout_loss(name)
    start = store.read_training_curve(ZOO / name)["heldout_circuit_loss"][0]
    assert benchmark.solves(e["task"], loss, start), (loss, start)


@pytest.mark.parametrize("name", marked(MODELS, NO_CIRCUIT, "no path of the task's mode reaches 0.1 nats (module docstring)"))
def test_the_circuit_the_task_needs_is_present_by_the_ground_truth(name):
    e = benchmark.zoo_models(ZOO)[name]
    gt = benchmark.read_ground_truth(ZOO)[name]                     # [4, batches, 3 modes, L, H, L, H]
    mean_circuit = [g[0] for g in GROUND_TRUTHS].index("mean-circuit")
    effect = gt[mean_circuit].mean(0)
    assert benchmark.circuit_present(e["task"], effect), effect[MODES.index(MODE_OF_TASK[e["task"]])].max()


def test_solved_and_present_are_the_stated_thresholds():
    assert benchmark.solves("lookup", 1.38, 4.6) and not benchmark.solves("lookup", 1.39, 4.6)   # ln 4 = 1.386
    assert benchmark.solves("induction", 0.99, 4.6) and not benchmark.solves("reverse", 1.0, 4.6)
    assert benchmark.solves("text", 2.9, 4.0) and not benchmark.solves("text", 3.1, 4.0)     # a nat under step 0
    assert benchmark.solves("words", 2.9, 4.0) and not benchmark.solves("words", 3.1, 4.0)
    assert benchmark.solves("recall", 0.99, 3.9) and not benchmark.solves("recall", 1.0, 3.9)
    gt = np.zeros((3, 2, 4, 2, 4))
    gt[1, 0, 0, 1, 2] = 0.1                                                                  # a K path of 0.1 nats
    assert benchmark.circuit_present("induction", gt) and benchmark.circuit_present("text", gt)
    assert not benchmark.circuit_present("reverse", gt) and not benchmark.circuit_present("lookup", gt)


def test_ground_truths_on_file_are_what_the_code_computes():
    name = MODELS[0]
    e = benchmark.zoo_models(ZOO)[name]
    tokens, mask = benchmark.eval_batches(ZOO, e["task"])
    fresh = benchmark.model_ground_truth(benchmark.load_zoo_model(ZOO, name), tokens[:2], mask[:2])
    np.testing.assert_allclose(fresh, benchmark.read_ground_truth(ZOO)[name][:, :2], atol=1e-5, rtol=1e-4)


def test_the_shipped_table_holds_the_zoos_scores_and_ground_truths():
    table = benchmark.read_table()
    from headspace_site.demos import score_benchmark as demo
    assert tuple(table["families"]) == benchmark.FAMILIES
    assert tuple(table["scores"]) == demo.SCORES and tuple(table["ground_truths"]) == demo.GROUND_TRUTHS
    assert tuple(table["tasks"]) == demo.GROUPS[1:1 + len(table["tasks"])]
    assert [m["name"] for m in table["models"]] == list(benchmark.scored_models(ZOO))
    gts = benchmark.read_ground_truth(ZOO)
    for m in table["models"][:: max(len(MODELS) // 5, 1)]:
        model = benchmark.load_zoo_model(ZOO, m["name"])
        idx = benchmark.later_pairs(m["n_layers"], m["n_heads"])
        for s in ("frobenius", "token_diagonal", "svd_component"):
            fresh = np.stack([SCORES[s](model, mode).ravel()[idx] for mode in MODES])
            np.testing.assert_allclose(m["scores"][s], fresh, atol=1e-5)
        g = gts[m["name"]].reshape(4, gts[m["name"]].shape[1], 3, -1)[..., idx].mean(1)
        np.testing.assert_allclose(m["ground_truth"]["mean-circuit"], g[1], atol=1e-6)
    fields = table["row_fields"]
    for r in table["rows"]:
        row = dict(zip(fields, r))
        if row["spearman"] is not None:
            assert row["spearman_lo"] <= row["spearman_hi"]


def test_cli_bench_prints_the_table_and_writes_csv(tmp_path, capsys):
    assert cli.main(["bench", "--csv", str(tmp_path / "b.csv")]) == 0
    out = capsys.readouterr().out
    assert "frobenius" in out and "95% interval" in out
    rows = list(csv.reader(open(tmp_path / "b.csv")))
    assert rows[0][:4] == ["group", "mode", "ground_truth", "score"] and len(rows) > 100
    assert cli.main(["bench", "--ground-truth", "nonsense"]) == 2
    assert "--ground-truth must be one of" in capsys.readouterr().err


def test_cli_bench_says_which_scores_are_distinguishable(capsys):
    """The issue: "for each pair of scores, whether they are distinguishable": the table's paired
    comparisons, printed as a count per score and the scores the first cannot be told from. Twins (the
    same ranking by construction) count once: on these K-composition models frobenius and
    frobenius_baseline, subspace and projection_kernel, token and whitened."""
    table = benchmark.read_table()
    assert cli.main(["bench", "--group", "induction-none-attn-2l"]) == 0
    lines = capsys.readouterr().out.split("\n\n")[0].splitlines()
    matrix = next(m for g, mo, gt, m in table["comparisons"] if (g, mo, gt) == ("induction-none-attn-2l", "task",
                                                                               "mean-circuit"))
    twins = [{"frobenius", "frobenius_baseline"}, {"subspace", "projection_kernel"}, {"token", "whitened"}]
    classes = twins + [{s} for s in table["scores"] if not any(s in t for t in twins)]
    assert len(classes) == len(table["scores"]) - 3
    rows = [line.split() for line in lines[2:-2]]
    i = {s: k for k, s in enumerate(table["scores"])}

    def apart(s, c):                      # separated from every member of another class
        return all(matrix[i[s]][i[x]] for x in c)
    want = {s: sum(apart(s, c) for c in classes if s not in c) for s in table["scores"]}
    assert {r[0]: int(r[-1]) for r in rows} == want
    assert f"separated from (of {len(classes) - 1})" in lines[1]
    first = rows[0][0]
    ties = [c for c in classes if first not in c and not apart(first, c)]
    named = lines[-1].split(": ", 1)[1].split(" (and its twin")[0]
    assert set(named.split(", ")) == {"/".join(x for x in table["scores"] if x in c) for c in ties}


def test_twins_rank_alike_in_every_row_and_count_once():
    """benchmark.TWINS: two scores that rank every pair alike have the same Spearman in every row of the
    table where they are twins, so no comparison can separate them; twin_classes groups them."""
    table = benchmark.read_table()
    by = {tuple(r[:4]): r[4] for r in table["rows"]}
    for a, b, where in benchmark.TWINS:
        rows = [k for k in by if k[3] == a and benchmark.modes_read(table, k[0], k[1]) <= set(where)]
        assert rows and all(by[k] == by[k[:3] + (b,)] for k in rows), (a, b)
    assert benchmark.twin_classes(table["scores"], "V") == benchmark.twin_classes(table["scores"], "KV")
    assert ["token", "whitened"] in benchmark.twin_classes(table["scores"], "QK")
    assert ["token"] in benchmark.twin_classes(table["scores"], "V")
    # a leader can be separated from every other class, never from its twin
    twins, ties = benchmark.separation(table, "all", "task", "mean-circuit", "frobenius")
    assert twins == ["frobenius_baseline"] and all("frobenius" not in c for c in ties)


def test_cli_bench_prints_each_models_ground_truth_agreement(capsys):
    """The issue: "for each model, say how well the ground truths agree with each other before scoring
    any weight metric": one line per model of the group, each pair of ground truths, from the table."""
    table = benchmark.read_table()
    assert cli.main(["bench", "--agreement", "--group", "lookup-rms-attn-2l"]) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [m["name"] for m in table["models"] if m["family"] == "lookup-rms-attn-2l"]
    assert [line.split()[0] for line in lines[2:]] == names
    k = [m["name"] for m in table["models"]].index(names[1])
    rho, lo, hi = table["agreement"][k]["Q:mean-circuit|resample-circuit"]
    header = lines[1].split("  ")
    header = [h.strip() for h in header if h.strip()]
    cell = [c.strip() for c in lines[3].split("  ") if c.strip()][header.index("mean-circuit ~ resample-circuit")]
    assert cell == f"{rho:.2f} [{lo:.2f}, {hi:.2f}]", (cell, rho, lo, hi)
    assert len(header) == 2 + 6                       # model, mode, and the six pairs of four ground truths


def test_agreement_medians_are_the_medians_of_each_models_agreement_with_an_interval():
    """The article's agreement medians: draw 0 of the table's agreement_median is the median over the
    zoo's models of each model's own-mode agreement (the per-model table, rounded to 4 places), and its
    interval holds it (the draws resample seeds and batches, so it need not be centred)."""
    table = benchmark.read_table()
    own = [table["mode_of_task"][m["task"]] for m in table["models"]]
    assert set(table["agreement_median"]) == {f"{a}|{b}" for i, a in enumerate(table["ground_truths"])
                                             for b in table["ground_truths"][i + 1:]}
    for key, (est, lo, hi) in table["agreement_median"].items():
        per_model = [agree[f"{mode}:{key}"][0] for agree, mode in zip(table["agreement"], own)]
        assert est == pytest.approx(float(np.nanmedian(np.array(per_model, float))), abs=2e-4), key
        assert lo <= hi, key


def test_cli_bench_scores_a_researchers_function(tmp_path, capsys, monkeypatch):
    (tmp_path / "my_scores.py").write_text(
        "import numpy as np\n"
        "def constant_plus_frobenius(w, mode):\n"
        "    return w.composition_scores(mode) + 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cli.main(["bench", "--zoo", str(ZOO), "--score", "my_scores:constant_plus_frobenius",
                     "--resamples", "20"]) == 0
    out = capsys.readouterr().out.split("\n\n")[0]                 # the table; the scorecard follows
    lines = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    # a shifted Frobenius score ranks exactly as Frobenius: the same Spearman
    assert lines["my_scores:constant_plus_frobenius"][1] == lines["frobenius"][1]
    assert cli.main(["bench", "--score", "no_such_module:f", "--zoo", str(ZOO)]) == 2
    assert "could not be imported" in capsys.readouterr().err


def test_cli_bench_prints_the_scorecard_and_its_held_out_halves(tmp_path, capsys):
    """The issue's "Done means": python -m headspace bench prints the new statistics with intervals, --held-out
    the held-out halves, and the CSV carries them (a .scorecard.csv beside the table's)."""
    assert cli.main(["bench", "--csv", str(tmp_path / "b.csv")]) == 0
    out = capsys.readouterr().out
    assert "scorecard, whole zoo" in out and "partial|norm_product" in out and "Holm:" in out
    rows = list(csv.reader(open(tmp_path / "b.scorecard.csv")))
    assert rows[0] == ["part", "ground_truth", "mode", "models", "statistic", "score", "estimate", "lo", "hi"]
    assert {r[4] for r in rows[1:]} >= {"spearman", "partial_norm_product", "partial_product_norm", "auroc", "top1",
                                         "precision_at_k"}
    assert cli.main(["bench", "--held-out", "--csv", str(tmp_path / "h.csv")]) == 0
    out = capsys.readouterr().out
    assert "scorecard, half A" in out and "scorecard, half B" in out and out.count("rule: the best") == 2
    assert {r[0].split(" (")[0] for r in list(csv.reader(open(tmp_path / "h.scorecard.csv")))[1:]} == {"half A", "half B"}
    assert cli.main(["bench", "--mode", "largest", "--ground-truth", "excess-circuit"]) == 0
    assert "against excess-circuit" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_bench_gives_a_seeded_noise_score_intervals_that_cover_no_effect(tmp_path, capsys, monkeypatch):
    """A researcher's score of seeded noise, through the CLI: its Spearman and partial Spearman intervals
    cover 0 and its AUROC interval covers 1/2, on the whole zoo and on each held-out half, as often as a
    95% interval should. One draw of noise misses in one interval of twelve now and then (the seed-5 zoo:
    a half's AUROC, 0.518 to 0.80), so four draws, and at least 80% of their 48 intervals must cover."""
    covered = []
    for draw in range(4):
        (tmp_path / f"noise_score_{draw}.py").write_text(
            "import numpy as np\n"
            "def noise(w, mode):\n"
            f"    seed = int(abs(w.W_Q).sum() * 1e6) % 2**32 + 'QKV'.index(mode) + 1000 * {draw}\n"
            "    return np.random.default_rng(seed).normal(size=w.W_Q.shape[:2] * 2)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for draw in range(4):
        score = f"noise_score_{draw}:noise"
        for extra in ([], ["--held-out"]):
            assert cli.main(["bench", "--zoo", str(ZOO), "--score", score, "--resamples", "400",
                             "--csv", str(tmp_path / "n.csv"), *extra]) == 0
            capsys.readouterr()
            rows = [r for r in csv.reader(open(tmp_path / "n.scorecard.csv")) if r[5] == score and r[3] == "formed"]
            assert len({r[0] for r in rows}) == (2 if extra else 1)
            for r in rows:
                null = {"spearman": 0.0, "partial_norm_product": 0.0, "partial_product_norm": 0.0, "auroc": 0.5}.get(r[4])
                if null is not None:
                    covered.append(float(r[7]) <= null <= float(r[8]))
    assert len(covered) == 48 and sum(covered) >= 0.8 * len(covered), (sum(covered), len(covered))



def test_built_in_scores_are_computed_once_per_set_of_weights(monkeypatch):
    """score_zoo keeps the built-in scores by the weights' hash (the CLI bench computes them twice a call):
    a second call gives exactly the first's values without calling a built-in score again, and a caller's
    change to what it got does not reach the next call; a function of the caller's under a built-in's
    name is called every time; changed weights hash differently."""
    name, real = "norm_product", SCORES["norm_product"]
    calls = []

    def counted(w, mode):
        calls.append(mode)
        return real(w, mode)
    monkeypatch.setitem(SCORES, name, counted)     # the built-in, as benchmark.SCORES is this dict
    monkeypatch.setattr(benchmark, "_BUILT_IN", {})
    first = benchmark.score_zoo(store.SHIPPED, {name: counted})
    assert len(calls) == 2 * len(MODES) and set(first) == {"attn-only-2l", "attn-only-2l-rms"}
    for model, by in first.items():
        w = pair_scores.weights_of(benchmark.load_zoo_model(store.SHIPPED, model))
        np.testing.assert_array_equal(by[name], np.stack([real(w, m) for m in MODES]))
        by[name][...] = 0.0
    again = benchmark.score_zoo(store.SHIPPED, {name: counted})
    assert len(calls) == 2 * len(MODES)
    for model, by in again.items():
        w = pair_scores.weights_of(benchmark.load_zoo_model(store.SHIPPED, model))
        np.testing.assert_array_equal(by[name], np.stack([real(w, m) for m in MODES]))
    mine = []
    benchmark.score_zoo(store.SHIPPED, {name: lambda w, mode: mine.append(mode) or real(w, mode)})
    assert len(mine) == 2 * len(MODES) and len(calls) == 2 * len(MODES)
    stored = store.read_model("attn-only-2l")
    key = sorted(stored.state)[0]
    nudged = dataclasses.replace(stored, state={**stored.state, key: np.nextafter(stored.state[key], np.inf)})
    assert benchmark.weights_hash(nudged) != benchmark.weights_hash(stored) == benchmark.weights_hash(store.read_model("attn-only-2l"))


# -- the tasks that force a mechanism (docs/decisions/0004-zoo-mechanisms.md) --------------------------------

from headspace import mechanisms  # noqa: E402
from headspace.tasks import RECALL_ASK, RECALL_KEY  # noqa: E402


def family_models(family):
    return [n for n, e in benchmark.zoo_models(ZOO).items() if e["family"] == family]


def unbound_floor(tokens, mask):
    """The loss (nats) of the best guess that knows the context's values and which keys were asked, but
    not which value goes with which key: uniform over the values of the keys not asked yet. A one-layer
    model can know at most that (it cannot bind a value to the key after it: headspace.tasks), so in
    expectation it cannot go below it."""
    losses = []
    for row, m in zip(tokens, mask):
        values, keys, asked = list(row[0:20:2]), list(row[1:20:2]), set()
        for t in np.flatnonzero(m):
            left = [v for v, k in zip(values, keys) if k not in asked]
            losses.append(-math.log(left.count(row[t + 1]) / len(left)))
            asked.add(row[t] - RECALL_ASK + RECALL_KEY)
    return float(np.mean(losses))


def test_recall_needs_two_layers_and_its_models_use_v_composition():
    """One layer cannot bind a value to the key after it: the five one-layer models stay above the
    unbound guess's loss; every two-layer model solves recall, by previous-token V-composition (its
    recorded mechanism, which tests/unit/test_mechanisms.py measures again), with V paths far above
    its Q and K paths and its readers on the key, not on the answer."""
    tokens, mask = benchmark.eval_batches(ZOO, "recall")
    toks, m = tokens[:4].reshape(-1, tokens.shape[-1]), mask[:4].reshape(-1, mask.shape[-1])
    floor = unbound_floor(toks, m)
    assert 1.6 < floor < 1.9, floor
    for name in family_models("recall-none-attn-1l"):
        loss = float(benchmark.load_zoo_model(ZOO, name).loss_per_token(toks)[m].mean())
        assert loss > floor, (name, loss, floor)
    for name in family_models("recall-none-attn-2l"):
        rec = mechanisms.read(ZOO, name)
        assert rec["label"] == "previous-token V-composition" and rec["circuit_loss"] < 0.05, (name, rec["evidence"])
        paths = rec["largest_path"]
        assert paths["V"]["effect"] >= mechanisms.PATH
        assert paths["V"]["effect"] > max(paths["Q"]["effect"], paths["K"]["effect"]), (name, paths)
        assert max(max(row) for row in rec["answer"][1:]) < 0.15, name


def test_lookup_models_solve_it():
    """Trained twice as long as the first zoo's, every lookup model reads both cues (under ln 4 nats, what one cue
    at a time leaves) and has a Q path over the threshold."""
    for name in family_models("lookup-rms-attn-2l"):
        rec = mechanisms.read(ZOO, name)
        assert rec["circuit_loss"] < math.log(4), (name, rec["circuit_loss"])
        assert rec["largest_path"]["Q"]["effect"] >= mechanisms.PATH, name


@pytest.mark.xfail(strict=True, reason="no lookup model attends to the right entry: at most 0.14 of a second-layer "
                                       "head's attention; they answer from what the first layer gathers at the cues "
                                       "(docs/decisions/0004-zoo-mechanisms.md, section 8; the table task forces it: "
                                       "test_table_models_that_solve_it_attend_to_the_right_entry)")
def test_lookup_models_attend_to_the_right_entry():
    names = [n for n, e in benchmark.zoo_models(ZOO).items() if e["task"] == "lookup"]
    assert all(mechanisms.read(ZOO, n)["label"] == "entry lookup" for n in names)


def test_table_models_that_solve_it_attend_to_the_right_entry():
    """The table (``headspace.tasks``' ``table``), measured on all 20 evaluation batches: the three models that
    solve it (s0, s3, s4; circuit loss under 0.01 nats) look the entry up, with one first-layer head on the
    previous token (the colour cue) at the shape cue and one second-layer head on the cell of (colour, shape),
    each at 0.9 or more, and a Q path between them whose 95% interval over batches lies above 1 nat and which is
    at least ten times the model's largest K and V paths (recorded: 3.7-7.7 nats against at most 0.063). The
    other two (s1, s2) stay on the plateau: above the 1 nat of solved, no head on the cell above ATTENTION, and
    no Q path of PATH (docs/decisions/0004-zoo-mechanisms.md, section 8)."""
    names = family_models("table-none-attn-2l")
    assert len(names) == 5
    solved = []
    for name in names:
        rec = mechanisms.read(ZOO, name)
        assert rec["batches"] == 20, name
        paths = rec["largest_path"]
        if rec["circuit_loss"] < 0.01:
            solved.append(name)
            assert rec["label"] == "entry lookup" and rec["mode"] == "Q", (name, rec["evidence"])
            assert rec["writer"].startswith("L0") and rec["reader"].startswith("L1"), name
            assert rec["writer_attention"] >= 0.9 and rec["reader_attention"] >= 0.9, (name, rec["evidence"])
            lo, hi = rec["effect_interval"]
            assert 1.0 < lo <= rec["effect"] <= hi, (name, rec["effect_interval"])
            assert paths["Q"]["effect"] >= 10 * max(paths["K"]["effect"], paths["V"]["effect"]), (name, paths)
        else:
            assert rec["circuit_loss"] > benchmark.SOLVED_LOSS["table"], (name, rec["circuit_loss"])
            assert max(max(row) for row in rec["target"][1:]) < mechanisms.ATTENTION, name
            assert paths["Q"]["effect"] < mechanisms.PATH, (name, paths)
    assert [n[-2:] for n in solved] == ["s0", "s3", "s4"], solved


def test_the_table_needs_two_layers():
    """The one-layer control of the table: a head at the shape cue cannot know the colour one position back, so
    it cannot attend to the cell; with 4 heads for 8 colours it cannot switch on every colour either
    (docs/decisions/0004-zoo-mechanisms.md, section 8). It stays above the 1 nat of solved on the 20 evaluation
    batches (recorded 1.370-1.385 for its five seeds), where three of the five two-layer models are under 0.01."""
    names = family_models("table-none-attn-1l")
    assert names
    for name in names:
        rec = mechanisms.read(ZOO, name)
        assert rec["label"] == "none formed" and rec["batches"] == 20, (name, rec["evidence"])
        assert rec["circuit_loss"] > benchmark.SOLVED_LOSS["table"], (name, rec["circuit_loss"])


@pytest.mark.xfail(strict=True, reason="no induction mechanism formed in the word-level text models within 2500 steps "
                                       "(designed K paths 0.15, 0.08, 0.06, 0.05, 0.15 nats; docs/decisions/0004-zoo-mechanisms.md)")
def test_words_models_use_an_induction_mechanism():
    names = family_models("words-none-attn-2l")
    assert all(mechanisms.read(ZOO, n)["label"].endswith("induction") for n in names)


#: The families whose designed mechanism forms in some seeds only: (family, the label its design names,
#: the seeds it does not form in, why). One test a model, the others strict expected failures.
DESIGNED_LABELS = [
    ("table-none-attn-2l", "entry lookup", {1, 2},
     "on the plateau after the curriculum: no head on the right cell (at most 0.05), circuit loss 1.33 and 1.32 "
     "nats (docs/decisions/0004-zoo-mechanisms.md, section 8)"),
    ("reptext-none-attn-2l", "previous-token induction", {1, 3},
     "the K path stays under 0.1 nats on the 20 evaluation batches (s1 0.070 [0.058, 0.083], s3 0.096 [0.081, "
     "0.111]; docs/decisions/0004-zoo-mechanisms.md, section 7)"),
]


@pytest.mark.parametrize("name, label", [
    pytest.param(f"{fam}-s{i}", label, marks=[pytest.mark.xfail(strict=True, reason=why)] if i in fails else [],
                 id=f"{fam}-s{i}")
    for fam, label, fails, why in DESIGNED_LABELS for i in range(5)])
def test_each_model_of_a_partly_formed_family_has_its_designed_label(name, label):
    rec = mechanisms.read(ZOO, name)
    assert rec["label"] == label, rec["evidence"]


def test_reptext_models_grow_induction_heads_and_three_use_them():
    """Characters of the standard library's source, its most repetitive windows (``reptext``), measured on all
    20 evaluation batches: every model has a first-layer head whose attention to the previous token, over every
    position, reaches ATTENTION, and a second-layer head on the token after the pair's one earlier occurrence;
    in three of the five (s0, s2, s4) the K path between them reaches PATH (0.134, 0.168, 0.184 nats), so their
    recorded mechanism is previous-token induction; in s1 and s3 the same heads are there but their K path stays
    under PATH (0.070 and 0.096 nats; docs/decisions/0004-zoo-mechanisms.md, section 7). The writer is mixed:
    at every key an induction head reads its previous-token share is lower, under ATTENTION in s0 and s2 (and
    s3), recorded as ``writer_attention_at_keys``."""
    names = family_models("reptext-none-attn-2l")
    assert len(names) == 5
    formed = []
    for name in names:
        rec = mechanisms.read(ZOO, name)
        assert rec["batches"] == 20, name
        assert rec["writer_attention"] >= mechanisms.ATTENTION and rec["reader_attention"] >= mechanisms.ATTENTION, \
            (name, rec["evidence"])
        assert rec["mode"] == "K" and rec["writer"].startswith("L0") and rec["reader"].startswith("L1"), name
        lo, hi = rec["effect_interval"]
        assert lo <= rec["effect"] <= hi, name
        if rec["label"] == "previous-token induction":
            formed.append(name)
        else:
            assert rec["label"] == "none formed" and rec["effect"] < mechanisms.PATH, (name, rec["evidence"])
    assert [n[-2:] for n in formed] == ["s0", "s2", "s4"], formed
    below = [n[-2:] for n in names if mechanisms.read(ZOO, n)["writer_attention_at_keys"] < mechanisms.ATTENTION]
    assert below == ["s0", "s2", "s3"], below


def test_the_docs_zoo_table_states_the_recorded_paths_of_reptexts_circuitless_seeds():
    """docs/models.md's table gives the K paths of the two reptext seeds without a circuit: the recorded ones
    (20 batches), not those of the 4-batch measure they replaced (0.057 and 0.069)."""
    import re
    row = next(line for line in (ZOO.parent / "docs" / "models.md").read_text().splitlines()
               if line.startswith("| reptext-none-attn-2l "))
    stated = re.search(r"none formed 2 \(s1, s3: .*K path ([0-9.]+) and ([0-9.]+) nats\)", row).groups()
    assert list(stated) == [f"{mechanisms.read(ZOO, f'reptext-none-attn-2l-s{i}')['effect']:.3f}" for i in (1, 3)]
