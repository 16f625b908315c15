"""The benchmark's ground truths against an independent computation with TransformerLens 3.9 hooks.

For zoo models of every architecture (no norm and RMSNorm, every task; and LayerNorm with MLPs, a model
of the first zoo kept in tests/data/zoo-ln-mlp, since the present zoo has none:
docs/decisions/0004-zoo-mechanisms.md), loaded into a float64 ``HookedTransformer``: the logits must equal our numpy
forward pass, and for a few pairs of heads in each mode, the per-position loss increase when the
writer's output (``hook_result``) is replaced, in the reader's own Q, K or V input only
(``hook_q_input`` etc. with ``use_split_qkv_input``, before the reader's norm), by its mean over
batch and positions or by the same head's output on the next sequence of the batch, must equal
``headspace.ground_truth.path_effects`` within 1e-6 nats; so must each of the four averaged
ground truths.
"""

import os
from pathlib import Path

import numpy as np
import pytest
import torch
from transformer_lens import HookedTransformer, HookedTransformerConfig

from headspace import benchmark, store
from headspace.ground_truth import GROUND_TRUTHS, ground_truth, path_effects

ZOO = Path(os.environ.get("HEADSPACE_ZOO") or Path(__file__).resolve().parents[2] / "zoo")
LN_MLP = Path(__file__).resolve().parents[2] / "tests" / "data" / "zoo-ln-mlp"
MODELS = ["induction-none-attn-2l-s0", "induction-ln-mlp-2l-s0", "reverse-rms-attn-2l-s0", "recall-none-attn-2l-s0",
          "lookup-rms-attn-2l-s0", "words-none-attn-2l-s0", "table-none-attn-2l-s0"]


def zoo_of(name: str) -> Path:
    """The folder that holds ``name``: the zoo, or the kept LayerNorm-and-MLP model's."""
    return LN_MLP if name in benchmark.zoo_models(LN_MLP) else ZOO


def hooked(name: str) -> HookedTransformer:
    cfg = store.read_config(zoo_of(name) / name)
    keep = {k: v for k, v in cfg.items() if k not in ("seed", "init_weights")}
    model = HookedTransformer(HookedTransformerConfig(**keep, use_split_qkv_input=True, use_attn_result=True,
                                                      dtype=torch.float64))
    state = {k: torch.tensor(v, dtype=torch.float64) for k, v in np.load(zoo_of(name) / name / "weights.npz").items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert not unexpected and not [k for k in missing if not k.endswith((".mask", ".IGNORE"))], (missing, unexpected)
    return model.eval()


def zoo_case(name: str, batch: int):
    """A zoo model, 6 sequences of its task's evaluation batch ``batch`` and their mask, and the same model
    in TransformerLens."""
    zoo = zoo_of(name)
    model = benchmark.load_zoo_model(zoo, name)
    task = store.read_manifest(zoo)["models"][name]["task"]
    tokens, mask = benchmark.eval_batches(zoo, task)
    return model, tokens[batch, :6], mask[batch, :6], hooked(name)


def some_pairs(rng, L: int, H: int) -> list:
    """Two pairs of a writer and a reader in the last layer: one from the first layer, one from the layer before."""
    return [(0, rng.integers(H), L - 1, rng.integers(H)), (L - 2, rng.integers(H), L - 1, rng.integers(H))]


def nll(logits, toks):
    """Per-position loss [batch, seq-1] of the next token."""
    lp = torch.log_softmax(logits[:, :-1], -1)
    return -lp.gather(-1, toks[:, 1:, None])[..., 0]


def tl_effect(model, tokens, l1, h1, l2, h2, mode, ablation):
    """Per-position loss increase [batch, seq-1] by hooks: the path l1.h1 -> l2.h2 (mode) ablated."""
    toks = torch.tensor(tokens)
    with torch.no_grad():
        clean_logits, cache = model.run_with_cache(toks, names_filter=lambda n: n.endswith("hook_result"))
        o = cache[f"blocks.{l1}.attn.hook_result"][:, :, h1]                      # [batch, pos, d_model]
        replacement = o.mean(dim=(0, 1), keepdim=True) if ablation == "mean" else torch.roll(o, -1, dims=0)

        def patch(x, hook):
            x = x.clone()
            x[:, :, h2] = x[:, :, h2] - o + replacement
            return x

        hook = f"blocks.{l2}.hook_{mode.lower()}_input"
        logits = model.run_with_hooks(toks, fwd_hooks=[(hook, patch)])
    return (nll(logits, toks) - nll(clean_logits, toks)).numpy()


@pytest.mark.parametrize("name", MODELS)
def test_ground_truths_equal_transformer_lens_hooks(name):
    model, tokens, mask, tl = zoo_case(name, 0)
    with torch.no_grad():
        theirs = tl(torch.tensor(tokens)).numpy()
    np.testing.assert_allclose(model.logits(tokens), theirs, atol=1e-9, rtol=0)
    L, H = model.config["n_layers"], model.config["n_heads"]
    rng = np.random.default_rng(0)
    for ablation in ("mean", "resample"):
        ours = path_effects(model, tokens, "QKV", ablation)
        for mi, mode in enumerate("QKV"):
            for l1, h1, l2, h2 in some_pairs(rng, L, H):
                ref = tl_effect(tl, tokens, l1, h1, l2, h2, mode, ablation)
                np.testing.assert_allclose(ours[mi, l1, h1, l2, h2], ref, atol=1e-6, rtol=0,
                                           err_msg=f"{name} {ablation} {mode} {l1}.{h1}->{l2}.{h2}")
                for g, (gname, abl, where) in enumerate(GROUND_TRUTHS):
                    if abl == ablation:
                        m = None if where == "all" else mask
                        want = ref.mean() if m is None else ref[m].mean()
                        got = ground_truth(ours, m)[mi, l1, h1, l2, h2]
                        assert abs(got - want) < 1e-6, (gname, got, want)


@pytest.mark.parametrize("name", ["induction-ln-mlp-2l-s0", "lookup-rms-attn-2l-s1", "induction-none-attn-2l-s0"])
def test_frobenius_unfolded_is_transformer_lens_on_the_stored_weights(name):
    """The benchmark's ``frobenius_unfolded`` is TransformerLens's ``all_composition_scores`` as it
    computes them on a model loaded without ``fold_ln`` (LayerNorm, RMSNorm, and none, where it
    equals ``frobenius``); ``frobenius`` is the folded one (tests/interop/test_transformer_lens.py)."""
    from headspace.pair_scores import SCORES
    model = benchmark.load_zoo_model(zoo_of(name), name)
    tl = hooked(name)
    for mode in "QKV":
        with torch.no_grad():
            theirs = tl.all_composition_scores(mode).numpy()
        np.testing.assert_allclose(SCORES["frobenius_unfolded"](model, mode), theirs, atol=1e-6, rtol=1e-5,
                                   err_msg=f"{name} {mode}")
        if name.startswith("induction-none"):
            np.testing.assert_allclose(SCORES["frobenius"](model, mode), theirs, atol=1e-6, rtol=1e-5)
