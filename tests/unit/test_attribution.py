"""headspace.attribution: the hand-written backward pass against finite differences, and edge
attribution patching against the limit of exact path patching (the patch scaled by a small eps): in this
file's own reference forward, and in the package's exact path patching (ground_truth.path_effects)."""

from pathlib import Path

import numpy as np
import pytest

from headspace import benchmark
from headspace.attribution import edge_attribution, input_gradients
from headspace.model import cross_entropy

ROOT = Path(__file__).resolve().parents[2]
ZOO = ROOT / "zoo"
#: LayerNorm with MLPs: a model of the first zoo kept for these tests (the present zoo has none)
LN_MLP = ROOT / "tests" / "data" / "zoo-ln-mlp"
#: every architecture: no norm, LayerNorm with MLPs, RMSNorm, and a recall model (V-composition)
MODELS = ["induction-none-attn-2l-s0", "induction-ln-mlp-2l-s0", "reverse-rms-attn-2l-s1", "recall-none-attn-2l-s0"]


def run_with(m, toks, l2, h2, mode, push):
    """Mean-free reference forward: the residual stream as head (l2, h2) reads it in ``mode`` moved by ``push``."""
    H = m.config["n_heads"]
    resid = m.embed(toks)
    for l in range(m.config["n_layers"]):
        x = m.layer_input(resid, l)
        xs = [np.repeat(x[:, None], H, 1) for _ in "QKV"]
        if l == l2:
            xs["QKV".index(mode)][:, h2] = m.layer_input(resid + push, l)
        _, out = m.attend(l, *xs)
        resid = m.mlp(resid + out.sum(1) + m.b_O[l], l)
    return cross_entropy(m.unembed(resid), toks)


def batch(name):
    zoo = LN_MLP if name in benchmark.zoo_models(LN_MLP) else ZOO
    task = benchmark.zoo_models(zoo)[name]["task"]
    t, mk = benchmark.eval_batches(zoo, task)
    return benchmark.load_zoo_model(zoo, name), t[0, :4], mk[0, :4]


@pytest.mark.parametrize("name", MODELS)
def test_input_gradients_equal_central_finite_differences(name):
    m, toks, mask = batch(name)
    g, _ = input_gradients(m, toks, mask)
    rng = np.random.default_rng(0)
    for l2 in range(m.config["n_layers"]):
        for mode in "QKV":
            h2 = int(rng.integers(m.config["n_heads"]))
            u = rng.normal(size=(toks.shape[0], toks.shape[1], m.config["d_model"]))
            eps = 1e-5
            fd = (run_with(m, toks, l2, h2, mode, eps * u)[mask].mean()
                  - run_with(m, toks, l2, h2, mode, -eps * u)[mask].mean()) / (2 * eps)
            assert (g[l2, "QKV".index(mode), :, h2] * u).sum() == pytest.approx(fd, rel=1e-5, abs=1e-9), (l2, mode)


@pytest.mark.parametrize("name", MODELS[:3])
@pytest.mark.parametrize("ablation", ["resample", "mean"])
def test_edge_attribution_is_the_limit_of_exact_path_patching(name, ablation):
    """(loss with the patch scaled by eps - clean loss) / eps -> the EAP score as eps -> 0, every pair."""
    m, toks, mask = batch(name)
    eap = edge_attribution(m, toks, "QKV", ablation, mask)
    L, H = m.config["n_layers"], m.config["n_heads"]
    clean = run_with(m, toks, 0, 0, "Q", 0.0)[mask].mean()
    x0 = m.embed(toks)
    outs = []
    resid = x0
    for l in range(L):
        x = m.layer_input(resid, l)
        _, out = m.attend(l, x, x, x)
        outs.append(out)
        resid = m.mlp(resid + out.sum(1) + m.b_O[l], l)
    eps = 1e-4
    for l1 in range(L - 1):
        for h1 in range(H):
            o = outs[l1][:, h1]
            delta = (o.mean(axis=(0, 1)) if ablation == "mean" else np.roll(o, -1, axis=0)) - o
            for l2 in range(l1 + 1, L):
                for h2 in range(H):
                    for i, mode in enumerate("QKV"):
                        plus = run_with(m, toks, l2, h2, mode, eps * delta)[mask].mean()
                        minus = run_with(m, toks, l2, h2, mode, -eps * delta)[mask].mean()
                        assert eap[i, l1, h1, l2, h2] == pytest.approx((plus - minus) / (2 * eps), rel=1e-4, abs=1e-8)
    assert np.all(eap[:, 1:, :, :1] == 0) and np.all(eap[:, -1] == 0)          # no later reader, no score
    del clean


def test_bad_input():
    m, toks, mask = batch(MODELS[0])
    with pytest.raises(ValueError, match="ablation must be"):
        edge_attribution(m, toks, "K", "zero")
    with pytest.raises(ValueError, match=r"mask must be a \[batch, seq-1\]"):
        input_gradients(m, toks, mask[:, :3])
    with pytest.raises(ValueError, match="at least 2 sequences"):
        edge_attribution(m, toks[:1], "K")


#: A two-layer and a three-layer model (paths from layer 0 to 2 included), no norm and RMSNorm.
EXACT_MODELS = ["induction-none-attn-2l-s0", "induction-rms-attn-3l-s0"]
#: The patch's share of the way to its replacement: small enough for the first order to hold.
EPS = 1e-3


@pytest.mark.parametrize("name", EXACT_MODELS)
@pytest.mark.parametrize("ablation", ["resample", "mean"])
def test_edge_attribution_agrees_with_exact_path_patching_to_first_order(name, ablation):
    """EAP against the package's exact path patching (``ground_truth.path_effects``, the function that
    computes the ground truths), with the patch scaled to EPS of the way to its replacement: the exact loss
    change divided by EPS is EAP plus an error of order EPS (measured: 2e-3 to 3.5e-3 of the largest EAP on
    these models, checked at 2e-2); a central difference (EPS and -EPS) cancels that term (measured: 3e-6 to
    1.1e-5 of the largest, checked at 1e-4). At the full patch (scale 1) the same call is the ground
    truth, which the last assertion ties to the shipped file's first batch."""
    from headspace.ground_truth import ground_truth, path_effects
    m, toks, mask = batch(name)
    eap = edge_attribution(m, toks, "QKV", ablation, mask)
    plus = ground_truth(path_effects(m, toks, "QKV", ablation, scale=EPS), mask) / EPS
    minus = ground_truth(path_effects(m, toks, "QKV", ablation, scale=-EPS), mask) / EPS
    top = np.abs(eap).max()
    assert top > 1e-3                                           # a real signal to compare, not zeros
    np.testing.assert_allclose(plus, eap, rtol=2e-2, atol=2e-2 * top)
    np.testing.assert_allclose((plus - minus) / 2, eap, rtol=1e-4, atol=1e-4 * top)


def test_exact_path_patching_at_full_scale_is_the_shipped_ground_truth():
    """The reference the test above uses is the ground truth itself at scale 1: resample-circuit on the first
    evaluation batch of the three-layer model equals the shipped ground truth's first batch (stored float32)."""
    from headspace.ground_truth import ground_truth, path_effects
    name = EXACT_MODELS[1]
    zoo = ZOO
    task = benchmark.zoo_models(zoo)[name]["task"]
    t, mk = benchmark.eval_batches(zoo, task)
    m = benchmark.load_zoo_model(zoo, name)
    exact = ground_truth(path_effects(m, t[0], "QKV", "resample"), mk[0])
    shipped = benchmark.read_ground_truth(zoo)[name][benchmark.GT_NAMES.index("resample-circuit"), 0]
    np.testing.assert_allclose(exact, shipped.reshape(exact.shape), atol=1e-6)
