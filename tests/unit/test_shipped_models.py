"""The shipped toy transformers (package data, headspace/models/) contain what we say they contain.

Numpy only, on the files as shipped. Head scores, on sequences of T = n_ctx/2
uniform random tokens followed by the same T tokens again:

* previous-token score of a head: mean attention from position i to i-1;
* induction score: mean attention from position i >= T to i-T+1, the token
  after the earlier occurrence of the current token.

A head with a uniform causal pattern would score about 1/(i+1), under 0.1 for
both on average. The thresholds below (PREV, INDUCTION) sit well above that and
well below the measured values, which docs/models.md lists.
"""

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from headspace import model as hm
from headspace import store
from headspace.composition import all_composition_scores

MODELS = store.SHIPPED
NAMES = store.list_models()
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
MANIFEST = json.loads((MODELS / "manifest.json").read_text())

PREV = 0.4        # previous-token score a layer-0 head must exceed
INDUCTION = 0.4   # induction score a layer-1 head must exceed
UNTRAINED = 0.15  # no head of the step-0 checkpoint reaches this on either score


def repeated(seed, batch=32, n_ctx=64, d_vocab=128):
    half = np.random.default_rng(seed).integers(0, d_vocab, (batch, n_ctx // 2))
    return np.concatenate([half, half], axis=1)


def halves_loss(m, tokens):
    """Mean loss predicting tokens 1..T-1 (random half) and T+1..2T-1 (repeated half)."""
    T = tokens.shape[1] // 2
    loss = m.loss_per_token(tokens)  # position t predicts token t+1
    return loss[:, : T - 1].mean(), loss[:, T:].mean()


def head_scores(m, tokens):
    """Previous-token and induction scores, each [n_layers, n_heads]."""
    T = tokens.shape[1] // 2
    p = m.attention_patterns(tokens).mean(axis=0)  # [n_layers, n_heads, seq, seq]
    prev = np.diagonal(p, offset=-1, axis1=-2, axis2=-1).mean(-1)
    induction = np.diagonal(p, offset=-(T - 1), axis1=-2, axis2=-1)[..., 1:].mean(-1)
    return prev, induction


@pytest.fixture(scope="module", params=NAMES)
def final(request):
    m = hm.load(request.param)
    return m, repeated(seed=123, n_ctx=m.config["n_ctx"], d_vocab=m.config["d_vocab"])


def test_two_variants_are_shipped():
    assert NAMES == ["attn-only-2l", "attn-only-2l-rms"]
    assert [hm.load(n).config["normalization_type"] for n in NAMES] == [None, "RMS"]


def test_manifest_hashes_and_sizes_match_the_files():
    total = 0
    for name, entry in MANIFEST["models"].items():
        listed = set(entry["files"])
        on_disk = {p.name for p in (MODELS / name).iterdir()}
        assert listed == on_disk, f"{name}: manifest lists {sorted(listed)}, directory has {sorted(on_disk)}"
        for filename, meta in entry["files"].items():
            data = (MODELS / name / filename).read_bytes()
            assert hashlib.sha256(data).hexdigest() == meta["sha256"], f"{name}/{filename}"
            assert len(data) == meta["bytes"], f"{name}/{filename}"
            total += len(data)
    assert total < 6_000_000, f"shipped models take {total} bytes; the budget is 6 MB"
    # the size the README and docs/models.md state (it was 5.0 MB long after the files shrank)
    root = Path(__file__).resolve().parents[2]
    for doc, pattern in (("README.md", r"\(([0-9.]+) MB with 18 checkpoints each\)"),
                         ("docs/models.md", r"training curve\. ([0-9.]+) MB in all\.")):
        stated = re.search(pattern, (root / doc).read_text())
        assert stated and stated.group(1) == f"{total / 1e6:.1f}", (doc, total)


def test_config_has_transformerlens_fields(final):
    m, _ = final
    c = m.config
    assert c["n_layers"] == 2 and c["attn_only"] is True and c["act_fn"] is None
    assert c["positional_embedding_type"] == "standard"
    assert c["d_vocab_out"] == c["d_vocab"] and c["n_heads"] * c["d_head"] == c["d_model"]
    raw = np.load(MODELS / m.name / "weights.npz")
    assert raw["blocks.0.attn.W_Q"].dtype == np.float32
    assert raw["embed.W_E"].shape == (c["d_vocab"], c["d_model"])
    assert raw["blocks.1.attn.W_O"].shape == (c["n_heads"], c["d_head"], c["d_model"])
    assert ("blocks.0.ln1.w" in raw and "ln_final.w" in raw) == (c["normalization_type"] == "RMS")


def test_in_context_learning_after_training_not_before(final):
    m, tokens = final
    ln_v = math.log(m.config["d_vocab"])
    first, second = halves_loss(m, tokens)
    assert abs(first - ln_v) < 0.6, f"random half: {first:.3f} nats, ln(d_vocab) = {ln_v:.3f}"
    assert second < 0.2 * first, f"repeated half {second:.3f} not far below random half {first:.3f}"
    first0, second0 = halves_loss(hm.load(m.name, step=0), tokens)
    assert abs(first0 - ln_v) < 1.0 and second0 > 0.9 * first0, (first0, second0)


def test_previous_token_head_in_layer_0_and_induction_head_in_layer_1(final):
    m, tokens = final
    prev, induction = head_scores(m, tokens)
    assert prev[0].max() > PREV, prev
    assert induction[1].max() > INDUCTION, induction
    # neither job is done by the other layer, and nothing like it exists before training
    assert prev[1].max() < UNTRAINED and induction[0].max() < UNTRAINED
    prev0, induction0 = head_scores(hm.load(m.name, step=0), tokens)
    assert prev0.max() < UNTRAINED and induction0.max() < UNTRAINED


def test_k_composition_peaks_between_previous_token_and_induction_head(final):
    m, tokens = final
    prev, induction = head_scores(m, tokens)
    f = m.fold_norm()  # the RMS variant's learned scales belong to the matrices that read the stream
    k = all_composition_scores(f.W_Q, f.W_K, f.W_V, f.W_O, "K")[0, :, 1, :]  # [layer-0 head, layer-1 head]
    h0, h1 = np.unravel_index(np.argmax(k), k.shape)
    assert prev[0, h0] > PREV, f"largest K-composition {k[h0, h1]:.3f} is from L0H{h0}, prev score {prev[0, h0]:.3f}"
    assert induction[1, h1] > INDUCTION, f"... into L1H{h1}, induction score {induction[1, h1]:.3f}"
    # every layer-1 head K-composes most with a previous-token head, and the top pair scores
    # well above the same induction head with any layer-0 head that is not a previous-token head
    assert np.all(prev[0, k.argmax(axis=0)] > PREV), k
    assert k[h0, h1] > 1.25 * k[prev[0] < PREV, h1].max(), k


def test_numpy_forward_matches_torch_reference(final):
    """The numpy forward against the outputs torch stored when the model was trained (a fresh torch
    forward runs in tests/interop/test_trained_models.py, where torch is installed)."""
    m, _ = final
    ref = np.load(REFERENCE / f"{m.name}.npz")
    logits, patterns = m.run(ref["tokens"])
    np.testing.assert_allclose(logits, ref["logits"], rtol=0, atol=1e-5)       # torch in float64
    np.testing.assert_allclose(logits, ref["logits_float32"], rtol=0, atol=1e-4)  # torch in float32
    np.testing.assert_allclose(patterns, ref["attention_patterns"], rtol=0, atol=1e-6)


def test_checkpoints_cover_the_phase_change(final):
    m, tokens = final
    curve = json.loads((MODELS / m.name / "training_curve.json").read_text())
    steps = list(m.steps)
    assert len(steps) >= 12 and steps[0] == 0 and steps[-1] == curve["step"][-1]
    assert steps == MANIFEST["models"][m.name]["checkpoint_steps"] == curve["checkpoint_steps"]
    n = len(curve["step"])
    assert all(len(curve[k]) == n for k in ("train_loss", "first_half_loss", "repeated_half_loss",
                                             "previous_token_score", "induction_score"))
    # at least three checkpoints inside the window where the induction score rises
    t10, t90 = curve["phase_change_steps"]
    assert sum(t10 <= s <= t90 for s in steps) >= 3, (steps, t10, t90)
    # the checkpoints load, and their repeated-half loss goes from ~ln(d_vocab) to far below it
    losses = [halves_loss(hm.load(m.name, step=s), tokens[:8])[1] for s in steps]
    assert losses[0] > 0.9 * math.log(m.config["d_vocab"]) and losses[-1] < 0.2 * losses[0], losses
    # the last checkpoint is the final weights in float16
    np.testing.assert_allclose(hm.load(m.name, step=steps[-1]).W_Q, m.W_Q, atol=2e-3)
