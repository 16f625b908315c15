"""headspace.mechanisms: the positions each task names, the attention shares against a loop over every
position, the labels' rules on hand-made numbers, and, per model of the zoo (zoo/), that
its recorded mechanism holds when measured again from its weights and evaluation batches."""

from pathlib import Path

import numpy as np
import pytest

from headspace import benchmark, mechanisms
from headspace.composition import MODES
from headspace.mechanisms import ATTENTION, PATH, label, measure, named_positions
from headspace.model import Model
from headspace.tasks import (PARTNER, RECALL_ASK, RECALL_KEY, TABLE_ANSWER, TABLE_COLOUR, TABLE_SHAPE, TABLE_SHAPES,
                             task_batch)

ROOT = Path(__file__).resolve().parents[2]
ZOOS = [ROOT / "zoo"]
MODELS = [(z, n) for z in ZOOS for n in benchmark.zoo_models(z)]
#: models whose measurement takes about a minute (word-level text: d_vocab 1024, 96 positions): slow
SLOW_TASKS = ("words",)


def fast_tier_model(entry: dict) -> bool:
    """The fast tier measures one seed of each configuration (seed 0), which any change to the
    measurement reaches; the other seeds, and the slow tasks, run in the full run (marked slow)."""
    return entry["task"] not in SLOW_TASKS and entry.get("seed", 0) == 0


@pytest.mark.parametrize("task", ["induction", "reverse", "recall", "lookup", "table", "text", "words", "reptext"])
def test_named_positions_are_the_tasks_own(task):
    rng = np.random.default_rng(3)
    corpus = np.array([0, 1, 2, 3, 0, 1, 4, 5] * 40) if task in ("text", "words", "reptext") else None
    tokens, mask = task_batch(task, rng, 16, corpus)
    pos = next(iter(named_positions(task, tokens, mask).values()))
    assert ((pos >= 0) <= mask).all()                        # named only where the circuit acts
    for b, t in zip(*np.nonzero(pos >= 0)):
        row, j = tokens[b], pos[b, t]
        assert j < t
        if task == "induction":
            assert row[j] == row[t] and row[j + 1] == row[t + 1]
        elif task == "reverse":
            assert row[j] == row[t] - PARTNER and row[j - 1] + PARTNER == row[t + 1]
        elif task == "recall":
            assert row[j] == row[t] - RECALL_ASK + RECALL_KEY and row[j - 1] == row[t + 1]
        elif task in ("text", "words", "reptext"):
            assert (row[j - 1], row[j]) == (row[t - 1], row[t])
            assert ((row[:t - 1] == row[t - 1]) & (row[1:t] == row[t])).sum() == 1      # its only earlier copy
        elif task == "table":
            assert j == (row[t - 1] - TABLE_COLOUR) * TABLE_SHAPES + row[t] - TABLE_SHAPE and row[t + 1] - TABLE_ANSWER == row[j]
        else:
            assert j < 16 and row[j] // 16 == row[t - 1] - 64 and row[j] // 4 % 4 == row[t] - 68
            assert row[t + 1] - 72 == row[j] % 4
    if task in ("text", "words", "reptext"):             # named where the pair occurred exactly once before
        once = np.zeros_like(mask)
        for b, t in zip(*np.nonzero(mask)):
            row = tokens[b]
            once[b, t] = ((row[:t - 1] == row[t - 1]) & (row[1:t] == row[t])).sum() == 1
        assert ((pos >= 0) == once).all() and once.any()
    else:
        assert (pos[mask] >= 0).all()                    # every circuit position has its named position


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="task must be one of"):
        named_positions("nonsense", np.zeros((1, 4), int), np.zeros((1, 3), bool))
    with pytest.raises(ValueError, match=r"mask \[batch, seq-1\]; got tokens \[1, 4\], mask \[1, 4\]"):
        named_positions("induction", np.zeros((1, 4), int), np.zeros((1, 4), bool))
    model = benchmark.load_zoo_model(ZOOS[0], MODELS[0][1])
    with pytest.raises(ValueError, match="mask must mark at least one position"):
        measure(model, "induction", np.zeros((1, 2, 8), int), np.zeros((1, 2, 7), bool))
    with pytest.raises(ValueError, match=r"tokens must be \[n_batches, batch, seq\]"):
        measure(model, "induction", np.zeros((2, 8), int), np.zeros((2, 7), bool))


def test_attention_shares_match_a_loop_over_every_position():
    zoo, name = next((z, n) for z, n in MODELS if benchmark.zoo_models(z)[n]["task"] == "induction")
    model = benchmark.load_zoo_model(zoo, name)
    tokens, mask = benchmark.eval_batches(zoo, "induction")
    tokens, mask = tokens[:1, :4], mask[:1, :4]
    m = measure(model, "induction", tokens, mask)
    pat = model.attention_patterns(tokens[0])
    L, H = model.config["n_layers"], model.config["n_heads"]
    # the induction head's keys: the token after the earlier occurrence, each position once
    keys = {(b, np.flatnonzero(tokens[0, b, :t] == tokens[0, b, t])[-1] + 1)
            for b in range(4) for t in np.flatnonzero(mask[0, b])}
    for l in range(L):
        for h in range(H):
            prev = np.mean([pat[b, l, h, p, p - 1] for b, p in keys])
            assert m["back"][l, h, 0] == pytest.approx(prev, abs=1e-12)
            three = np.mean([pat[b, l, h, p, p - 3] for b, p in keys if p >= 3])
            assert m["back"][l, h, 2] == pytest.approx(three, abs=1e-12)
            target = [pat[b, l, h, t, np.flatnonzero(tokens[0, b, :t] == tokens[0, b, t])[-1] + 1]
                      for b in range(4) for t in np.flatnonzero(mask[0, b])]
            assert m["target"][l, h] == pytest.approx(np.mean(target), abs=1e-12)


def test_text_writers_are_measured_at_every_position_and_recorded_where_the_reader_reads():
    """In natural text the reader's anchors are selected (a pair that occurred once before); the writer is not:
    ``back`` is the mean over every position, ``back_at_keys`` over the successors of every earlier occurrence
    of the current pair, ``back_at_target`` over the selected anchors' successors, each against a loop."""
    zoo, name = next((z, n) for z, n in MODELS if benchmark.zoo_models(z)[n]["task"] == "reptext")
    model = benchmark.load_zoo_model(zoo, name)
    tokens, mask = benchmark.eval_batches(zoo, "reptext")
    tokens, mask = tokens[:1, :4], mask[:1, :4]
    m = measure(model, "reptext", tokens, mask)
    toks, pat = tokens[0], model.attention_patterns(tokens[0])
    every = [(b, p) for b in range(4) for p in range(1, toks.shape[1])]
    keys, targets = set(), set()
    for b in range(4):
        row = toks[b]
        for t in np.flatnonzero(mask[0, b]):
            hits = [j for j in range(1, t) if (row[j - 1], row[j]) == (row[t - 1], row[t])]
            keys |= {(b, j + 1) for j in hits}
            if len(hits) == 1:
                targets.add((b, hits[0] + 1))
    assert keys and targets and targets <= keys
    for where, positions in (("back", every), ("back_at_keys", keys), ("back_at_target", targets)):
        for l, h in ((0, 0), (0, 3), (1, 2)):
            want = np.mean([pat[b, l, h, p, p - 1] for b, p in positions])
            assert m[where][l, h, 0] == pytest.approx(want, abs=1e-12), where


def _numbers(L=2, H=2, prev=0.0, target=0.0, answer=None, window=0.0, shifted=0.0, path=None):
    back = np.zeros((L, H, 8))
    back[0, 0, 0] = prev
    back[0, 1, 4] = window                                   # head L0H1 looks 5 back
    around = np.zeros((L, H, 15))
    around[1, 0, 7 + (1 if answer is None else 0)] = target       # copying: anchor + 1; V tasks: the anchor
    around[1, 1, 7 + 6] = shifted                            # L1H1 looks 6 after the anchor
    out = {"back": back, "around": around, "target": around[..., 8], "path": np.zeros((3, L, H, L, H)),
           "loss": 0.0}
    if answer is not None:
        out["answer"] = np.zeros((L, H))
        out["answer"][1, 1] = answer
        out["target"] = around[..., 7]
    for (mode, w, r), e in (path or {}).items():
        out["path"][MODES.index(mode), 0, w, 1, r] = e
    return out


def test_labels_follow_the_stated_thresholds():
    a, p = ATTENTION, PATH
    got = label("induction", _numbers(prev=a, target=a, path={("K", 0, 0): p}))
    assert got["label"] == "previous-token induction" and (got["writer"], got["reader"]) == ("L0H0", "L1H0")
    assert label("induction", _numbers(prev=a, target=a, path={("K", 0, 0): p - 1e-3}))["label"] == "none formed"
    assert label("induction", _numbers(prev=a - 1e-3, target=a, path={("K", 0, 0): p}))["label"] == "none formed"
    assert label("induction", _numbers(prev=a, target=a, path={("V", 0, 0): 1.0}))["label"] == "none formed"
    got = label("induction", _numbers(window=a, shifted=a, path={("V", 1, 1): p}))
    assert got["label"] == "shifted-window induction" and got["mode"] == "V" and "d = 5" in got["evidence"]
    v = _numbers(prev=a, target=a, answer=0.0, path={("V", 0, 0): p})
    assert label("recall", v)["label"] == "previous-token V-composition"
    q = _numbers(answer=0.9, path={("Q", 1, 1): p})
    assert label("reverse", q)["label"] == "direct attention to the answer"
    assert label("reverse", _numbers(answer=0.9, path={("V", 1, 1): p}))["label"] == "none formed"
    lk = _numbers(prev=a, path={("Q", 0, 0): p})
    lk["target"] = np.zeros((2, 2)); lk["target"][1, 0] = a
    assert label("lookup", lk)["label"] == "entry lookup"
    lk["target"][1, 0] = 0.1
    assert label("lookup", lk)["label"] == "diffuse lookup"
    one = {"back": np.zeros((1, 2, 8)), "around": np.zeros((1, 2, 15)), "target": np.ones((1, 2)),
           "answer": np.ones((1, 2)), "path": np.zeros((3, 1, 2, 1, 2)), "loss": 0.0}
    assert label("recall", one)["label"] == "none formed"             # one layer: nothing to compose with
    with pytest.raises(ValueError, match="task must be one of"):
        label("nonsense", lk)


@pytest.mark.parametrize("zoo,name", [(z, n) if fast_tier_model(benchmark.zoo_models(z)[n])
                                      else pytest.param(z, n, marks=pytest.mark.slow)
                                      for z, n in MODELS], ids=[f"{z.name}/{n}" for z, n in MODELS])
def test_each_models_recorded_mechanism_holds(zoo, name):
    """Measured again from the weights and the evaluation batches, the model gets the label its manifest
    records, for the same reasons (pair, mode, attention shares and path effect), and those reasons meet
    the thresholds: a labelled mechanism's heads attend at least ATTENTION and its path reaches PATH."""
    entry = benchmark.zoo_models(zoo)[name]
    recorded = mechanisms.read(zoo, name)
    assert entry["mechanism"] == recorded["label"]
    tokens, mask = benchmark.eval_batches(zoo, entry["task"])
    fresh = mechanisms.mechanism(benchmark.load_zoo_model(zoo, name), entry["task"], tokens, mask,
                                 recorded.get("batches", 4))
    assert fresh["label"] == recorded["label"], fresh["evidence"]
    for key in ("writer", "reader", "mode"):
        assert fresh[key] == recorded[key], key
    for key in ("effect", "writer_attention", "reader_attention", "circuit_loss"):
        if recorded[key] is not None:
            assert fresh[key] == pytest.approx(recorded[key], abs=2e-4), key
    if fresh["label"] != "none formed":
        assert fresh["effect"] >= PATH
        for key in ("writer_attention", "reader_attention"):
            assert fresh[key] is None or fresh[key] >= ATTENTION


def test_words_are_the_training_texts_most_frequent_and_batches_its_more_repetitive_windows():
    from headspace.tasks import WordVocab, split_words, text_mask
    text = "def f(x):\n    return x + 1\n" * 3 + "class A:\n    pass\n"
    vocab = WordVocab.fit(text, size=6)
    counts = {w: split_words(text).count(w) for w in set(split_words(text))}
    assert [counts[w] for w in vocab.words] == sorted(counts.values(), reverse=True)[:5]
    assert vocab.encode("zzz").tolist() == [5]                       # unknown words: one id
    corpus = np.random.default_rng(0).integers(0, 50, 5000)
    corpus[1000:1100] = np.tile(np.arange(10), 10)                   # one repetitive stretch
    tokens, mask = task_batch("words", np.random.default_rng(1), 8, corpus)
    assert tokens.shape == (8, 96) and (mask == text_mask(tokens)).all()
