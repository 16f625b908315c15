"""The benchmark's new scores, ground truths and statistics against slow, obvious references."""

import numpy as np
import pytest

from headspace import benchmark, stats
from headspace.causal import path_ablation
from headspace.composition import composition_score
from headspace.ground_truth import ground_truth, path_effects
from headspace.heads import repeated_tokens
from headspace.model import Model, load
from headspace.pair_scores import (SCORES, frobenius_unfolded, norm_product, product_norm, projection_kernel,
                                   projection_kernel_baseline, svd_component, token_diagonal)
from headspace.weights import from_model


def random_model(norm="LN", mlp=True, n_layers=3, seed=0, d_model=12, n_heads=2, d_head=3, d_vocab=17, n_ctx=9):
    rng = np.random.default_rng(seed)
    cfg = {"n_layers": n_layers, "d_model": d_model, "n_heads": n_heads, "d_head": d_head, "d_vocab": d_vocab,
           "n_ctx": n_ctx, "attn_only": not mlp, "normalization_type": norm, "act_fn": "relu" if mlp else None,
           "d_mlp": 20 if mlp else None}
    g = lambda *s: rng.normal(size=s)  # noqa: E731
    st = {"embed.W_E": g(d_vocab, d_model), "pos_embed.W_pos": g(n_ctx, d_model), "unembed.W_U": g(d_model, d_vocab),
          "unembed.b_U": g(d_vocab)}
    for l in range(n_layers):
        for x in "QKV":
            st[f"blocks.{l}.attn.W_{x}"] = g(n_heads, d_model, d_head) / 2
            st[f"blocks.{l}.attn.b_{x}"] = g(n_heads, d_head) / 4
        st[f"blocks.{l}.attn.W_O"] = g(n_heads, d_head, d_model) / 2
        st[f"blocks.{l}.attn.b_O"] = g(d_model) / 4
        lns = ("ln1", "ln2") if mlp else ("ln1",)
        if norm:
            for ln in lns:
                st[f"blocks.{l}.{ln}.w"] = 1 + g(d_model) / 3
                if norm == "LN":
                    st[f"blocks.{l}.{ln}.b"] = g(d_model) / 3
        if mlp:
            st[f"blocks.{l}.mlp.W_in"], st[f"blocks.{l}.mlp.b_in"] = g(d_model, 20) / 3, g(20) / 3
            st[f"blocks.{l}.mlp.W_out"], st[f"blocks.{l}.mlp.b_out"] = g(20, d_model) / 4, g(d_model) / 4
    if norm:
        st["ln_final.w"] = 1 + g(d_model) / 3
        if norm == "LN":
            st["ln_final.b"] = g(d_model) / 3
    return Model(cfg, st, name=f"random-{norm}-{mlp}")


def dense_forward(m: Model, toks):
    """The forward pass written out per sequence and position, for LN/RMS and MLPs."""
    cfg = m.config

    def norm(x, w, b):
        if cfg["normalization_type"] is None:
            return x
        if cfg["normalization_type"] == "LN":
            x = x - x.mean()
        x = x / np.sqrt((x ** 2).mean() + 1e-5)
        return x * w + (0 if b is None else b)
    out = []
    for seq in toks:
        resid = [m.W_E[t] + m.W_pos[i] for i, t in enumerate(seq)]
        for l in range(cfg["n_layers"]):
            w = None if m.ln1_w is None else m.ln1_w[l]
            b = None if m.ln1_b is None else m.ln1_b[l]
            xs = [norm(r, w, b) if w is not None else r for r in resid]
            new = [r + m.b_O[l] for r in resid]
            for h in range(cfg["n_heads"]):
                q = [x @ m.W_Q[l, h] + m.b_Q[l, h] for x in xs]
                k = [x @ m.W_K[l, h] + m.b_K[l, h] for x in xs]
                v = [x @ m.W_V[l, h] + m.b_V[l, h] for x in xs]
                for i in range(len(seq)):
                    s = np.array([q[i] @ k[j] / np.sqrt(cfg["d_head"]) for j in range(i + 1)])
                    p = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
                    new[i] = new[i] + sum(p[j] * v[j] for j in range(i + 1)) @ m.W_O[l, h]
            resid = new
            if m.W_in is not None:
                w2 = None if m.ln2_w is None else m.ln2_w[l]
                b2 = None if m.ln2_b is None else m.ln2_b[l]
                resid = [r + np.maximum((norm(r, w2, b2) if w2 is not None else r) @ m.W_in[l] + m.b_in[l], 0)
                         @ m.W_out[l] + m.b_out[l] for r in resid]
        wf = m.ln_final_w
        out.append([(norm(r, wf, m.ln_final_b) if wf is not None else r) @ m.W_U + m.b_U for r in resid])
    return np.array(out)


@pytest.mark.parametrize("norm, mlp", [("LN", True), ("RMS", True), ("LN", False), (None, True)])
def test_forward_with_layernorm_and_mlps_equals_dense_reference(norm, mlp):
    m = random_model(norm, mlp)
    toks = np.random.default_rng(1).integers(0, 17, (2, 9))
    np.testing.assert_allclose(m.logits(toks), dense_forward(m, toks), atol=1e-10)
    # folding the norm changes no logit
    np.testing.assert_allclose(m.fold_norm().logits(toks), m.logits(toks), atol=1e-10)


def test_svd_component_equals_max_over_explicit_rank_one_components():
    m = random_model("RMS", True, seed=3)
    w = from_model(m)
    for mode in "QKV":
        got = svd_component(m, mode)
        for l1, h1, l2, h2 in [(0, 0, 1, 1), (1, 1, 2, 0), (0, 1, 2, 1)]:
            A = w.W_V[l1, h1] @ w.W_O[l1, h1]
            B = {"Q": w.W_Q[l2, h2] @ w.W_K[l2, h2].T, "K": w.W_K[l2, h2] @ w.W_Q[l2, h2].T,
                 "V": w.W_V[l2, h2] @ w.W_O[l2, h2]}[mode]
            u, s, vt = np.linalg.svd(A)
            comps = [s[i] * np.outer(u[:, i], vt[i]) for i in range(3)]        # rank d_head = 3
            want = max(composition_score(c, B) for c in comps)
            assert got[l1, h1, l2, h2] == pytest.approx(want, rel=1e-9)
        assert np.all(got[2] == 0) and np.all(got[1, :, :2] == 0)


def test_projection_kernel_equals_trace_of_projections_minus_baseline():
    m = random_model("LN", False, seed=4)
    w = from_model(m)
    d = m.config["d_model"]
    for mode in "QKV":
        got = projection_kernel(m, mode)
        for l1, h1, l2, h2 in [(0, 0, 1, 1), (1, 0, 2, 1)]:
            O = w.W_O[l1, h1]                               # writer output space: row space of W_O
            P_a = O.T @ np.linalg.pinv(O @ O.T) @ O
            R = {"Q": w.W_Q, "K": w.W_K, "V": w.W_V}[mode][l2, h2]
            P_b = R @ np.linalg.pinv(R.T @ R) @ R.T        # reader input space: column space
            want = np.trace(P_a @ P_b) - 3 * 3 / d
            assert got[l1, h1, l2, h2] == pytest.approx(want, abs=1e-9)


def test_projection_kernel_baseline_is_the_mean_for_random_subspaces():
    rng = np.random.default_rng(0)
    pk = []
    for _ in range(4000):
        a = np.linalg.qr(rng.normal(size=(12, 3)))[0]
        b = np.linalg.qr(rng.normal(size=(12, 4)))[0]
        pk.append(np.sum((a.T @ b) ** 2))
    assert np.mean(pk) == pytest.approx(projection_kernel_baseline(3, 4, 12), abs=0.02)   # 1.0; s.e. 0.007
    with pytest.raises(ValueError, match="dim_a must be a positive integer; got 0"):
        projection_kernel_baseline(0, 4, 12)


def test_token_diagonal_equals_a_loop_over_tokens():
    m = load("attn-only-2l")
    w = from_model(m)
    for mode in "QKV":
        got = token_diagonal(m, mode)
        for l1, h1, l2, h2 in [(0, 1, 1, 2), (0, 3, 1, 0)]:
            A = w.W_V[l1, h1] @ w.W_O[l1, h1]
            if mode == "V":
                T = w.W_E @ A @ w.W_V[l2, h2] @ w.W_O[l2, h2] @ w.W_U
            elif mode == "Q":
                T = w.W_E @ A @ w.W_Q[l2, h2] @ w.W_K[l2, h2].T @ w.W_E.T
            else:
                T = w.W_E @ A @ w.W_K[l2, h2] @ w.W_Q[l2, h2].T @ w.W_E.T
            hits = 0
            for t in range(T.shape[0]):
                line = T[:, t] if mode == "K" else T[t]     # K: per query token (a column)
                hits += line[t] >= line.max()
            assert got[l1, h1, l2, h2] == pytest.approx(hits / T.shape[0])
    # the previous-token head 0.1 feeds the induction heads' keys: its row tops the K diagonal
    k = token_diagonal(m, "K")
    assert k[0, 1, 1].min() > k[0, [0, 2, 3], 1].max()


def test_magnitude_baselines_equal_dense_references():
    """product_norm: the largest singular value of the path through both heads, by the square root of
    the largest eigenvalue of (A B)^T (A B); norm_product: the heads' Frobenius norms, as sums of
    squares. Both on the folded weights, written out for one pair at a time."""
    m = random_model("LN", True, seed=5)
    w = from_model(m)
    for mode in "QKV":
        got_p, got_n = product_norm(m, mode), norm_product(m, mode)
        for l1, h1, l2, h2 in [(0, 0, 1, 1), (1, 1, 2, 0), (0, 1, 2, 1)]:
            A = w.W_V[l1, h1] @ w.W_O[l1, h1]
            B = {"Q": w.W_Q[l2, h2] @ w.W_K[l2, h2].T, "K": w.W_K[l2, h2] @ w.W_Q[l2, h2].T,
                 "V": w.W_V[l2, h2] @ w.W_O[l2, h2]}[mode]
            P = A @ B
            assert got_p[l1, h1, l2, h2] == pytest.approx(np.sqrt(np.linalg.eigvalsh(P.T @ P).max()), rel=1e-9)
            assert got_n[l1, h1, l2, h2] == pytest.approx(np.sqrt((A ** 2).sum() * (B ** 2).sum()), rel=1e-12)
        later = np.zeros((3, 2, 3, 2), bool)
        later[0, :, 1:], later[1, :, 2:] = True, True
        assert np.all(got_p[~later] == 0) and np.all(got_n[~later] == 0)
        assert np.all(got_p <= got_n + 1e-12)                   # ||AB||_2 <= ||A||_F ||B||_F
    # frobenius is the path's Frobenius norm over norm_product
    P = w.W_V[0, 0] @ w.W_O[0, 0] @ w.W_K[1, 1] @ w.W_Q[1, 1].T
    assert SCORES["frobenius"](m, "K")[0, 0, 1, 1] == pytest.approx(np.linalg.norm(P) / norm_product(m, "K")[0, 0, 1, 1])


def test_path_size_depends_on_the_residual_basis():
    """"size depends on the basis of the residual stream": an invertible change of basis of a model
    without norms leaves its function alone but changes product_norm (frobenius changes too; token does not)."""
    from headspace.symmetry import adversarial_basis, transform_model
    m = load("attn-only-2l")
    changed = transform_model(m, adversarial_basis(m.config["d_model"], condition=100.0, seed=0))
    toks = np.random.default_rng(1).integers(0, m.config["d_vocab"], (2, 12))
    np.testing.assert_allclose(changed.logits(toks), m.logits(toks), atol=1e-8)
    assert not np.allclose(product_norm(changed, "K"), product_norm(m, "K"), rtol=1e-3)


def test_unfolded_frobenius_ignores_the_norm_scale_and_equals_folded_without_norm():
    plain = random_model(None, False, seed=5)
    np.testing.assert_allclose(frobenius_unfolded(plain, "K"), SCORES["frobenius"](plain, "K"), atol=1e-12)
    ln = random_model("LN", False, seed=5)
    assert not np.allclose(frobenius_unfolded(ln, "K"), SCORES["frobenius"](ln, "K"))


def test_path_effects_mean_equals_path_ablation_and_masks_average():
    m = load("attn-only-2l-rms")
    toks = repeated_tokens(128, 32, batch=3, seed=2)
    eff = path_effects(m, toks, "QKV")
    np.testing.assert_allclose(ground_truth(eff), path_ablation(m, toks, "QKV"), atol=1e-12)
    mask = np.zeros((3, 31), bool)
    mask[:, 16:] = True                                     # the repeated half, every sequence
    np.testing.assert_allclose(ground_truth(eff, mask), path_ablation(m, toks, "QKV", positions=slice(16, None)),
                               atol=1e-12)
    with pytest.raises(ValueError, match=r"mask must have shape \[3, 31\]"):
        ground_truth(eff, mask[:, :5])


def test_path_effects_with_mlps_equal_a_dense_rerun():
    m = random_model("LN", True, seed=6)
    toks = np.random.default_rng(2).integers(0, 17, (3, 9))
    for ablation in ("mean", "resample"):
        eff = path_effects(m, toks, "K", ablation)
        # dense: rerun the whole model with one reader's key input patched, by hand
        l1, h1, l2, h2 = 0, 1, 2, 0
        resid = m.embed(toks)
        outs = []
        for l in range(3):
            x = m.layer_input(resid, l)
            _, o = m.attend(l, x, x, x)
            outs.append(o)
            resid = m.mlp(resid + o.sum(1) + m.b_O[l], l)
        o = outs[l1][:, h1]
        repl = o.mean(axis=(0, 1)) if ablation == "mean" else np.roll(o, -1, axis=0)
        resid = m.embed(toks)
        for l in range(3):
            x = m.layer_input(resid, l)
            _, out = m.attend(l, x, x, x)
            if l == l2:
                xk = m.layer_input(resid - o + repl, l)
                _, patched = m.attend(l, x, xk, x)
                out = out.copy()
                out[:, h2] = patched[:, h2]
            resid = m.mlp(resid + out.sum(1) + m.b_O[l], l)
        from headspace.model import cross_entropy
        want = cross_entropy(m.unembed(resid), toks) - m.loss_per_token(toks)
        np.testing.assert_allclose(eff[l1, h1, l2, h2], want, atol=1e-10)


def test_resample_with_identical_sequences_changes_nothing():
    m = load("attn-only-2l")
    toks = np.tile(repeated_tokens(128, 8, batch=1, seed=3), (2, 1))
    assert np.abs(path_effects(m, toks, "QKV", "resample")).max() < 1e-12
    with pytest.raises(ValueError, match="ablation must be one of"):
        path_effects(m, toks, "K", "zero")


def test_ranks_spearman_and_auroc_against_references():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.integers(0, 4, (3, 9)).astype(float)
        b = rng.normal(size=(5, 9))
        got = stats.spearman_along(a[None], b[:, None])
        for i in range(5):
            for j in range(3):
                if np.all(a[j] == a[j, 0]):
                    assert np.isnan(got[i, j])
                else:
                    assert got[i, j] == pytest.approx(stats.spearman(a[j], b[i]))
        pos = b[0] > 0
        s = a[0]
        if pos.any() and not pos.all():
            brute = np.mean([(x > y) + 0.5 * (x == y) for x in s[pos] for y in s[~pos]])
            assert benchmark.auroc(s, pos) == pytest.approx(brute)
    eff = np.array([[0.5, 0.3, 0.01, 0.09, 0.11]])
    assert benchmark.positives(eff).tolist() == [[True, True, False, False, True]]     # >= 0.02 and >= 0.1


def test_every_score_has_a_docstring_with_its_source():
    for name, fn in SCORES.items():
        assert fn.__doc__ and len(fn.__doc__) > 40, name
    for fn in (svd_component, projection_kernel, token_diagonal, frobenius_unfolded, product_norm, norm_product):
        assert "Source" in fn.__doc__ or "source" in fn.__doc__.lower()
