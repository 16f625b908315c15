"""The controlled ground truth (headspace.controlled) against an independent computation with
TransformerLens 3.9 hooks, within 1e-6 nats per position.

For a few pairs of heads and each mode, on zoo models of every architecture (and the kept LayerNorm-and-MLP model): the patched run
replaces the writer's ``hook_result`` by the next sequence's in the reader's own ``hook_{q,k,v}_input``
(``use_split_qkv_input``); the reader's ``hook_q`` (``hook_k``, ``hook_v``) is read in that run and in the
clean one, their difference ``delta`` at each position; the control run sets the reader's
``hook_q`` to the clean one plus ``|delta|`` times a unit direction drawn here, by numpy's generator
seeded with ``[seed, l1, h1, l2, h2, mode index]`` (the definition in the module's docstring), not by
the package's function.
"""

import numpy as np
import pytest
import torch

from headspace.controlled import controlled_effects

from test_ground_truth_tl import nll, some_pairs, zoo_case

MODELS = ["induction-none-attn-2l-s0", "induction-ln-mlp-2l-s0", "reverse-rms-attn-2l-s0", "recall-none-attn-2l-s0"]


def tl_controlled(model, tokens, l1, h1, l2, h2, mode, seed):
    """(patched, control) per-position loss increases [batch, seq-1], by hooks."""
    toks = torch.tensor(tokens)
    u_name = f"blocks.{l2}.attn.hook_{mode.lower()}"
    with torch.no_grad():
        clean_logits, cache = model.run_with_cache(toks, names_filter=lambda n: n.endswith("hook_result") or n == u_name)
        o = cache[f"blocks.{l1}.attn.hook_result"][:, :, h1]
        clean_u = cache[u_name][:, :, h2]                                         # [batch, pos, d_head]
        seen = {}

        def patch(x, hook):
            x = x.clone()
            x[:, :, h2] = x[:, :, h2] - o + torch.roll(o, -1, dims=0)
            return x

        def keep(u, hook):
            seen["u"] = u[:, :, h2].clone()

        patched = model.run_with_hooks(toks, fwd_hooks=[(f"blocks.{l2}.hook_{mode.lower()}_input", patch), (u_name, keep)])
        delta = seen["u"] - clean_u
        g = np.random.default_rng([seed, l1, h1, l2, h2, "QKV".index(mode)]).normal(size=tuple(delta.shape))
        g = torch.tensor(g / np.linalg.norm(g, axis=-1, keepdims=True))
        push = delta.norm(dim=-1, keepdim=True) * g

        def control(u, hook):
            u = u.clone()
            u[:, :, h2] = clean_u + push
            return u
        controlled = model.run_with_hooks(toks, fwd_hooks=[(u_name, control)])
    clean = nll(clean_logits, toks)
    return (nll(patched, toks) - clean).numpy(), (nll(controlled, toks) - clean).numpy()


@pytest.mark.parametrize("name", MODELS)
def test_controlled_ground_truth_equals_transformer_lens_hooks(name):
    model, tokens, mask, tl = zoo_case(name, 1)
    L, H = model.config["n_layers"], model.config["n_heads"]
    rng = np.random.default_rng(1)
    ours = controlled_effects(model, tokens, "QKV", seed=7)
    for mi, mode in enumerate("QKV"):
        for l1, h1, l2, h2 in some_pairs(rng, L, H):
            patched, control = tl_controlled(tl, tokens, l1, h1, l2, h2, mode, 7)
            where = f"{name} {mode} {l1}.{h1}->{l2}.{h2}"
            np.testing.assert_allclose(ours["patched"][mi, l1, h1, l2, h2], patched, atol=1e-6, rtol=0, err_msg=where)
            np.testing.assert_allclose(ours["control"][mi, l1, h1, l2, h2], control, atol=1e-6, rtol=0, err_msg=where)
            excess = (ours["patched"] - ours["control"])[mi, l1, h1, l2, h2][mask].mean()
            assert abs(excess - (patched - control)[mask].mean()) < 1e-6, where
