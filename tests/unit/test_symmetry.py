"""Changes of basis leave the model's function unchanged; which scores notice them."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headspace import composition as C
from headspace import symmetry as S

FAST = settings(derandomize=True, max_examples=25, deadline=None)
seeds = st.integers(0, 2**32 - 1)


# --------------------------------------------------------------------------- a tiny attention-only model

def model(seed, n_layers=2, n_heads=2, d_model=6, d_head=3, d_vocab=11, n_ctx=7, state_dict=False):
    rng = np.random.default_rng(seed)
    n = lambda *s: rng.standard_normal(s) / np.sqrt(s[-2] if len(s) > 1 else 1)
    w = {"W_E": n(d_vocab, d_model), "W_pos": n(n_ctx, d_model), "W_U": n(d_model, d_vocab),
         "b_U": n(d_vocab)}
    for l in range(n_layers):
        for name, shape in (("W_Q", (n_heads, d_model, d_head)), ("W_K", (n_heads, d_model, d_head)),
                            ("W_V", (n_heads, d_model, d_head)), ("W_O", (n_heads, d_head, d_model)),
                            ("b_Q", (n_heads, d_head)), ("b_K", (n_heads, d_head)),
                            ("b_V", (n_heads, d_head)), ("b_O", (d_model,))):
            w[f"blocks.{l}.attn.{name}"] = n(*shape)
    if not state_dict:
        return w
    return {("embed." if k == "W_E" else "pos_embed." if k == "W_pos" else
             "unembed." if k in ("W_U", "b_U") else "") + k: v for k, v in w.items()}


def forward(w, tokens):
    """Logits and attention patterns of an attention-only transformer without normalisation."""
    get = lambda suffix: next(v for k, v in w.items() if k == suffix or k.endswith("." + suffix))
    resid = get("W_E")[tokens] + get("W_pos")[: len(tokens)]
    patterns = []
    n_layers = 1 + max(int(k.split(".")[1]) for k in w if k.startswith("blocks."))
    for l in range(n_layers):
        a = lambda name: w[f"blocks.{l}.attn.{name}"]
        q = np.einsum("pd,hde->hpe", resid, a("W_Q")) + a("b_Q")[:, None]
        k = np.einsum("pd,hde->hpe", resid, a("W_K")) + a("b_K")[:, None]
        v = np.einsum("pd,hde->hpe", resid, a("W_V")) + a("b_V")[:, None]
        scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
        scores = np.where(np.tril(np.ones(scores.shape[-2:], bool)), scores, -np.inf)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        patterns.append(p)
        resid = resid + np.einsum("hpe,hed->pd", p @ v, a("W_O")) + a("b_O")
    return resid @ get("W_U") + get("b_U"), patterns


@given(seeds, st.booleans(), st.booleans())
@FAST
def test_change_of_residual_basis_leaves_logits_and_attention_unchanged(seed, adversarial, state_dict):
    w = model(seed, state_dict=state_dict)
    d = w["embed.W_E" if state_dict else "W_E"].shape[1]
    rng = np.random.default_rng(seed)
    T = S.adversarial_basis(d, condition=30.0, seed=seed) if adversarial else rng.standard_normal((d, d))
    new = S.change_residual_basis(w, T)
    tokens = rng.integers(0, 11, size=7)
    logits, patterns = forward(w, tokens)
    logits2, patterns2 = forward(new, tokens)
    np.testing.assert_allclose(logits2, logits, rtol=1e-8, atol=1e-8)
    for p, p2 in zip(patterns, patterns2):
        np.testing.assert_allclose(p2, p, rtol=1e-8, atol=1e-10)
    # the exact placement: writers right-multiplied by T, readers left-multiplied by T^-1
    key = "blocks.1.attn."
    np.testing.assert_allclose(new[key + "W_O"], w[key + "W_O"] @ T)
    np.testing.assert_allclose(T @ new[key + "W_Q"], w[key + "W_Q"], atol=1e-10)
    np.testing.assert_array_equal(new[key + "b_Q"], w[key + "b_Q"])


@given(seeds)
@FAST
def test_circuits_transform_as_seed_000_says(seed):
    rng = np.random.default_rng(seed)
    d, h = 5, 2
    V, O, Q, K = rng.standard_normal((d, h)), rng.standard_normal((h, d)), *rng.standard_normal((2, d, h))
    T = rng.standard_normal((d, d))
    new = S.change_residual_basis({"W_V": V, "W_O": O, "W_Q": Q, "W_K": K}, T)
    np.testing.assert_allclose(new["W_V"] @ new["W_O"], S.transform_ov(V @ O, T), atol=1e-9)
    np.testing.assert_allclose(new["W_Q"] @ new["W_K"].T, S.transform_qk(Q @ K.T, T), atol=1e-9)
    # paper convention, S = T^T: W_OV = (W_V W_O)^T -> S W_OV S^-1, W_QK -> S^-T W_QK S^-1
    M = T.T
    np.testing.assert_allclose((new["W_V"] @ new["W_O"]).T, M @ (V @ O).T @ np.linalg.inv(M), atol=1e-9)
    Mi = np.linalg.inv(M)
    np.testing.assert_allclose(new["W_Q"] @ new["W_K"].T, Mi.T @ (Q @ K.T) @ Mi, atol=1e-9)


@given(seeds)
@FAST
def test_hidden_layer_symmetries(seed):
    rng = np.random.default_rng(seed)
    V, O, Q, K = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 4, 5)), *rng.standard_normal((2, 3, 5, 4))
    A = rng.standard_normal((4, 4))
    V2, O2 = S.ov_hidden_basis(V, O, A)
    np.testing.assert_allclose(V2 @ O2, V @ O, atol=1e-9)
    Q2, K2 = S.qk_hidden_basis(Q, K, A)
    np.testing.assert_allclose(Q2 @ np.swapaxes(K2, -1, -2), Q @ np.swapaxes(K, -1, -2), atol=1e-9)
    R = S.random_orthogonal(4, seed=seed)
    Q3, K3 = S.qk_hidden_basis(Q, K, R)
    np.testing.assert_allclose(K3, K @ R, atol=1e-12)      # orthogonal: the same map on both sides
    # every score depends only on the products, so hidden-basis changes never move a score
    W = [rng.standard_normal((2, 2, 5, 3)) for _ in range(3)]
    W_O = rng.standard_normal((2, 2, 3, 5))
    A3 = rng.standard_normal((3, 3))
    W_V2, W_O2 = S.ov_hidden_basis(W[2], W_O, A3)
    W_Q2, W_K2 = S.qk_hidden_basis(W[0], W[1], A3)
    for metric in ("frobenius", "svd_bound", "subspace"):
        for mode in C.MODES:
            np.testing.assert_allclose(C.all_composition_scores(W_Q2, W_K2, W_V2, W_O2, mode, metric),
                                       C.all_composition_scores(W[0], W[1], W[2], W_O, mode, metric),
                                       rtol=1e-7, atol=1e-9)


def _transform_heads(W_Q, W_K, W_V, W_O, T):
    new = S.change_residual_basis({"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}, T)
    return new["W_Q"], new["W_K"], new["W_V"], new["W_O"]


@given(seeds, st.sampled_from(C.MODES))
@FAST
def test_every_metric_is_invariant_under_rotations(seed, mode):
    rng = np.random.default_rng(seed)
    W = [rng.standard_normal((2, 2, 6, 2)) for _ in range(3)] + [rng.standard_normal((2, 2, 2, 6))]
    E, U = rng.standard_normal((13, 6)), rng.standard_normal((6, 13))
    R = S.random_orthogonal(6, seed=rng)
    W2 = _transform_heads(*W, R)
    for metric in C.METRICS:
        kw = {"token": {"W_E": E, "W_U": U}, "whitened": {"W_E": E}}.get(metric, {})
        kw2 = {"token": {"W_E": E @ R, "W_U": R.T @ U}, "whitened": {"W_E": E @ R}}.get(metric, {})
        np.testing.assert_allclose(C.all_composition_scores(*W2, mode, metric, **kw2),
                                   C.all_composition_scores(*W, mode, metric, **kw), rtol=1e-8, atol=1e-10)
    # and the dense scores of one pair
    A, B = W[2][0, 0] @ W[3][0, 0], W[0][1, 1] @ W[1][1, 1].T
    for metric in ("frobenius", "frobenius_baseline", "svd_bound", "subspace"):
        assert C.composition_score(S.transform_ov(A, R), S.transform_qk(B, R), metric) == \
            pytest.approx(C.composition_score(A, B, metric), rel=1e-9, abs=1e-12)


@given(seeds, st.sampled_from(C.MODES), st.booleans())
@FAST
def test_token_and_whitened_are_invariant_under_any_invertible_basis_change(seed, mode, adversarial):
    rng = np.random.default_rng(seed)
    W = [rng.standard_normal((3, 2, 5, 2)) for _ in range(3)] + [rng.standard_normal((3, 2, 2, 5))]
    E, U = rng.standard_normal((17, 5)), rng.standard_normal((5, 17))
    T = S.adversarial_basis(5, condition=1e3, seed=seed) if adversarial else rng.standard_normal((5, 5))
    new = S.change_residual_basis({"W_E": E, "W_U": U}, T)
    before = C.all_composition_scores(*W, mode, "token", W_E=E, W_U=U)
    after = C.all_composition_scores(*_transform_heads(*W, T), mode, "token", **new)
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-12)
    before = C.all_composition_scores(*W, mode, "whitened", W_E=E)
    after = C.all_composition_scores(*_transform_heads(*W, T), mode, "whitened", W_E=new["W_E"])
    np.testing.assert_allclose(after, before, rtol=1e-6, atol=1e-12)
    # while frobenius moves
    f0 = C.all_composition_scores(*W, mode)
    f1 = C.all_composition_scores(*_transform_heads(*W, T), mode)
    assert np.max(np.abs(f1 - f0)) > 1e-6


# --------------------------------------------------------------------------- builders

@given(seeds, st.integers(2, 7))
@FAST
def test_builders(seed, d):
    rng = np.random.default_rng(seed)
    R = S.random_orthogonal(d, seed=seed)
    np.testing.assert_allclose(R @ R.T, np.eye(d), atol=1e-12)
    u = rng.standard_normal(d)
    T = S.scale_directions(d, [u], [7.0])
    x = rng.standard_normal(d)
    along = (x @ u) / (u @ u) * u
    np.testing.assert_allclose(x @ T, x + 6.0 * along, atol=1e-10)
    s, t = np.eye(d)[0], np.eye(d)[1]
    np.testing.assert_allclose(x @ S.shear(d, s, t, 2.5), x + 2.5 * x[0] * t)
    A = S.adversarial_basis(d, condition=40.0, seed=seed, batch=(3,))
    np.testing.assert_allclose(np.linalg.cond(A), 40.0, rtol=1e-9)


@pytest.mark.parametrize("call, message", [
    (lambda: S.change_residual_basis({"W_E": np.ones((3, 2))}, np.ones((2, 2))),
     r"T must be invertible; got a singular \[2, 2\] matrix"),
    (lambda: S.change_residual_basis({"W_E": np.ones((3, 2))}, np.ones((2, 3))),
     r"T must be a square \[d_model, d_model\] matrix; got shape \[2, 3\]"),
    (lambda: S.change_residual_basis({"W_E": np.ones((3, 2))}, [[1, 0], [0, np.nan]]),
     r"T must be finite; got nan at index \(1, 1\)"),
    (lambda: S.change_residual_basis({"blocks.0.ln1.w": np.ones(2)}, np.eye(2)),
     r"weights\['blocks.0.ln1.w'\] is a normalisation parameter"),
    (lambda: S.change_residual_basis({"W_mystery": np.ones(2)}, np.eye(2)),
     r"weights\['W_mystery'\]: unknown weight name 'W_mystery'"),
    (lambda: S.change_residual_basis({"W_U": np.ones((3, 5))}, np.eye(2)),
     r"weights\['W_U'\] must have d_model = 2 on axis -2 \(reader\); got shape \[3, 5\]"),
    (lambda: S.change_residual_basis([np.eye(2)], np.eye(2)), r"weights must be a mapping"),
    (lambda: S.ov_hidden_basis(np.ones((4, 2)), np.ones((2, 4)), np.eye(3)), r"A must be \[d_head, d_head\]"),
    (lambda: S.qk_hidden_basis(np.ones((4, 2)), np.ones((4, 2)), np.zeros((2, 2))), r"A must be invertible"),
    (lambda: S.scale_directions(3, [[1.0, 0.0, 0.0]], [0.0]), r"factors must be nonzero"),
    (lambda: S.scale_directions(3, [[1.0, 0.0]], [2.0]), r"directions must have shape \[\*, 3\]; got \[1, 2\]"),
    (lambda: S.shear(2, [1.0, 0.0], [1.0, 0.0], -1.0), r"T must be invertible"),
    (lambda: S.shear(2, [0.0, 0.0], [1.0, 0.0], 1.0), r"source must be a nonzero direction"),
    (lambda: S.transform_ov(np.eye(2), np.zeros((2, 2))), r"T must be invertible"),
])
def test_bad_input_is_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_random_orthogonal_with_an_int_seed_is_drawn_once_and_copied_out():
    """The int-seed cache gives the matrix a Generator with that seed draws, to the last bit, and a
    fresh writable copy each time (changing one leaves the next alone)."""
    a = S.random_orthogonal(5, seed=11)
    assert np.array_equal(a, S.random_orthogonal(5, seed=np.random.default_rng(11)))
    a[0, 0] = 99.0
    b = S.random_orthogonal(5, seed=11)
    assert b[0, 0] != 99.0 and b.flags.writeable
    assert np.array_equal(b, S.random_orthogonal(5, seed=np.random.default_rng(11)))


def test_layernorm_keeps_rotations_that_fix_or_flip_the_ones_direction():
    """Composition and Subspaces: of the rotations, LayerNorm's centring lets through those that map
    the all-ones direction to itself, sending 1 to 1 or to -1; a rotation that tilts it does not."""
    rng = np.random.default_rng(0)
    d = 6
    ones = np.ones(d) / np.sqrt(d)

    def layernorm(x):
        c = x - x.mean(axis=-1, keepdims=True)
        return c / np.sqrt((c ** 2).mean(axis=-1, keepdims=True))

    # an orthogonal map of the complement of 1, extended by +1 or -1 along 1
    basis = np.linalg.qr(np.column_stack([ones, rng.standard_normal((d, d - 1))]))[0]
    Q = np.linalg.qr(rng.standard_normal((d - 1, d - 1)))[0]
    x = rng.standard_normal((10, d))
    for sign in (1.0, -1.0):
        O = basis @ np.block([[np.array([[sign]]), np.zeros((1, d - 1))], [np.zeros((d - 1, 1)), Q]]) @ basis.T
        np.testing.assert_allclose(O @ ones, sign * ones, atol=1e-12)
        np.testing.assert_allclose(layernorm(x @ O), layernorm(x) @ O, atol=1e-12)
    tilt = np.linalg.qr(rng.standard_normal((d, d)))[0]
    assert not np.allclose(layernorm(x @ tilt), layernorm(x) @ tilt, atol=1e-6)
