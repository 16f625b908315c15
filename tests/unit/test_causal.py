"""Path ablation against a slow reference that recomputes the whole forward pass per pair."""

import numpy as np
import pytest

from headspace.causal import path_ablation, rank_correlation
from headspace.heads import repeated_tokens
from headspace.model import load
from headspace.store import list_models


def slow_forward(m, toks, intervene=None):
    """Logits of a plain forward pass; ``intervene(l, h, x)`` returns the (q, k, v) inputs of head h."""
    seq = toks.shape[1]
    resid = m.W_E[toks] + m.W_pos[:seq]
    for l in range(m.config["n_layers"]):
        new = resid.copy() + m.b_O[l]
        for h in range(m.config["n_heads"]):
            x = norm(m, resid, l)
            xq, xk, xv = intervene(l, h, resid) if intervene else (x, x, x)
            q = xq @ m.W_Q[l, h] + m.b_Q[l, h]
            k = xk @ m.W_K[l, h] + m.b_K[l, h]
            v = xv @ m.W_V[l, h] + m.b_V[l, h]
            s = q @ k.transpose(0, 2, 1) / np.sqrt(m.config["d_head"])
            s = np.where(np.tril(np.ones((seq, seq))) > 0, s, -np.inf)
            p = np.exp(s - s.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            new += p @ v @ m.W_O[l, h]
        resid = new
    return norm(m, resid, None) @ m.W_U + m.b_U


def norm(m, x, l):
    if m.config["normalization_type"] is None:
        return x
    w = (m.ln1_w[l] if l is not None else m.ln_final_w) if m.ln1_w is not None else 1.0
    return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + m.eps) * w


def loss(logits, toks):
    lp = logits - logits.max(-1, keepdims=True)
    lp = lp - np.log(np.exp(lp).sum(-1, keepdims=True))
    return -np.mean(np.take_along_axis(lp[:, :-1], toks[:, 1:, None], -1))


def head_output(m, toks, l1, h1):
    """The writer's output pattern @ v @ W_O in the clean run, recomputed from scratch."""
    seq = toks.shape[1]
    resid = m.W_E[toks] + m.W_pos[:seq]
    for l in range(l1 + 1):
        x = norm(m, resid, l)
        outs = []
        for h in range(m.config["n_heads"]):
            q, k, v = (x @ W[l, h] + b[l, h] for W, b in ((m.W_Q, m.b_Q), (m.W_K, m.b_K), (m.W_V, m.b_V)))
            s = q @ k.transpose(0, 2, 1) / np.sqrt(m.config["d_head"])
            s = np.where(np.tril(np.ones((seq, seq))) > 0, s, -np.inf)
            p = np.exp(s - s.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            outs.append(p @ v @ m.W_O[l, h])
        if l == l1:
            return outs[h1], resid
        resid = resid + sum(outs) + m.b_O[l]


def slow_path_ablation(m, toks, mode):
    L, H = m.config["n_layers"], m.config["n_heads"]
    clean = loss(slow_forward(m, toks), toks)
    out = np.zeros((L, H, L, H))
    for l1 in range(L):
        for h1 in range(H):
            o, _ = head_output(m, toks, l1, h1)
            for l2 in range(l1 + 1, L):
                for h2 in range(H):
                    def intervene(l, h, resid):
                        x = norm(m, resid, l)
                        if (l, h) != (l2, h2):
                            return x, x, x
                        ablated = norm(m, resid - o + o.mean(axis=(0, 1)), l)
                        return tuple(ablated if mode == s else x for s in "QKV")
                    out[l1, h1, l2, h2] = loss(slow_forward(m, toks, intervene), toks) - clean
    return out


@pytest.mark.parametrize("name", list_models())
@pytest.mark.parametrize("folded", [False, True])
def test_matches_the_slow_reference(name, folded):
    m = load(name)
    m = m.fold_norm() if folded else m
    toks = repeated_tokens(m.config["d_vocab"], 16, batch=3, seed=2)
    fast = path_ablation(m, toks, "QKV")
    for i, mode in enumerate("QKV"):
        np.testing.assert_allclose(fast[i], slow_path_ablation(m, toks, mode), rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(path_ablation(m, toks, mode), fast[i])


def test_zero_below_the_diagonal_and_the_induction_path_matters():
    m = load("attn-only-2l")
    e = path_ablation(m, repeated_tokens(128, 64, batch=8, seed=1), "K")
    assert np.all(e[1] == 0) and np.all(e[:, :, 0] == 0)
    assert e[0, 1, 1].min() > 0.1 > np.abs(e[0, [0, 2, 3], 1]).max()   # only the previous-token head's keys


def test_a_constant_writer_output_ablates_to_nothing():
    """A writer whose output is the same at every position loses nothing when replaced by its mean."""
    m = load("attn-only-2l")
    m.W_V[0, 2] = 0.0                   # output is b_V @ W_O at every position
    m.b_V[0, 2] = 1.0
    e = path_ablation(m, repeated_tokens(128, 16, batch=2, seed=0), "QKV")
    np.testing.assert_allclose(e[:, 0, 2], 0.0, atol=1e-12)


def test_bad_input():
    m = load("attn-only-2l")
    toks = repeated_tokens(128, 8, batch=2)
    with pytest.raises(ValueError, match=r"mode must be one of 'Q', 'K', 'V' or a sequence of them; got 'O'"):
        path_ablation(m, toks, "O")
    with pytest.raises(ValueError, match=r"tokens must have shape \[batch, seq\] with seq >= 2"):
        path_ablation(m, toks[0], "K")
    with pytest.raises(ValueError, match=r"tokens must have shape \[batch, seq\] with seq >= 2"):
        path_ablation(m, toks[:, :1], "K")
    with pytest.raises(ValueError, match=r"tokens must be in \[0, d_vocab=128\); got 236 at index \(0, 0\)"):
        path_ablation(m, toks + 128, "K")


def test_rank_correlation():
    assert rank_correlation([1, 2, 3], [2, 4, 9]) == 1.0
    assert rank_correlation([1, 1, 2], [5, 5, 9]) == pytest.approx(1.0)
    assert rank_correlation([1, 1, 1], [1, 2, 3]) == 0.0
    # against the textbook formula 1 - 6 sum d^2 / (n (n^2 - 1)) for distinct values
    rng = np.random.default_rng(0)
    x, y = rng.permutation(10), rng.permutation(10)
    assert rank_correlation(x, y) == pytest.approx(1 - 6 * np.sum((x - y) ** 2) / (10 * 99))
    with pytest.raises(ValueError, match="same length"):
        rank_correlation([1, 2], [1, 2, 3])
