"""Every composition metric against a slow, obvious dense reference, plus its claimed properties."""

from decimal import Decimal, getcontext

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from headspace import composition as C

FAST = settings(derandomize=True, max_examples=40, deadline=None)


# --------------------------------------------------------------------------- slow, obvious references

def ref_frobenius(L, R):
    return np.linalg.norm(L @ R) / (np.linalg.norm(L) * np.linalg.norm(R))


def ref_svd_bound(L, R):
    sl = sorted(np.linalg.svd(L, compute_uv=False), reverse=True)
    sr = sorted(np.linalg.svd(R, compute_uv=False), reverse=True)
    k = min(len(sl), len(sr))
    return np.linalg.norm(L @ R) / np.sqrt(sum((sl[i] * sr[i]) ** 2 for i in range(k)))


def orth(M):
    """Orthonormal basis of the column space of M, numerical rank as numpy's matrix_rank."""
    u, s, _ = np.linalg.svd(M)
    return u[:, :np.linalg.matrix_rank(M)]


def ref_subspace(L, R):
    W, Rd = orth(L.T), orth(R)          # row space of L (what x @ L can be), column space of R
    cos = np.linalg.svd(W.T @ Rd, compute_uv=False)   # cosines of the principal angles
    return float(np.sum(cos ** 2)) / W.shape[1]       # mean over dim W angles (missing ones: 90 deg)


def ref_token(L, R, E, U, mode):
    """Materialised token space: the path E L R X (X = E^T for Q and K, U for V) over the writer's
    token-to-token map E L E^+ and the reader's token circuit E R X."""
    X = U if mode == "V" else E.T
    path = E @ L @ R @ X
    return np.linalg.norm(path) / (np.linalg.norm(E @ L @ np.linalg.pinv(E)) * np.linalg.norm(E @ R @ X))


def ref_whitened(L, R, G, mode):
    """frobenius after the symmetric square root S = G^(1/2) (not the Cholesky factor the library uses)."""
    lam, V = np.linalg.eigh(G)
    S, Si = (V * np.sqrt(lam)) @ V.T, (V / np.sqrt(lam)) @ V.T
    return ref_frobenius(S @ L @ Si, S @ R @ (Si if mode == "V" else S))


def ref_baseline_mean(shape_l, shape_r, samples=64, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((samples,) + tuple(shape_l))
    B = rng.standard_normal((samples,) + tuple(shape_r))
    return np.mean([ref_frobenius(A[s], B[s]) for s in range(samples)])


def ref_all(W_Q, W_K, W_V, W_O, mode, score):
    """TransformerLens's definition, spelt out: OV = W_V W_O; right = QK = W_Q W_K^T for Q, QK^T for K,
    OV for V; left = OV of the earlier head; [layer1, head1, layer2, head2], 0 unless layer2 > layer1."""
    n_layers, n_heads = W_Q.shape[:2]
    out = np.zeros((n_layers, n_heads, n_layers, n_heads))
    for l1 in range(n_layers):
        for h1 in range(n_heads):
            for l2 in range(n_layers):
                for h2 in range(n_heads):
                    if l2 <= l1:
                        continue
                    OV1 = W_V[l1, h1] @ W_O[l1, h1]
                    QK2 = W_Q[l2, h2] @ W_K[l2, h2].T
                    right = {"Q": QK2, "K": QK2.T, "V": W_V[l2, h2] @ W_O[l2, h2]}[mode]
                    out[l1, h1, l2, h2] = score(OV1, right)
    return out


# --------------------------------------------------------------------------- strategies

def low_rank(rng, n, m, r):
    return rng.standard_normal((n, r)) @ rng.standard_normal((r, m))


@st.composite
def pairs(draw):
    """Random (left, right) of shapes [n, m] x [m, p], non-square and rank-deficient ones included."""
    n, m, p = (draw(st.integers(1, 6)) for _ in range(3))
    rl, rr = draw(st.integers(1, min(n, m))), draw(st.integers(1, min(m, p)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    return low_rank(rng, n, m, rl), low_rank(rng, m, p, rr)


@st.composite
def heads(draw, square=False):
    n_layers, n_heads = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_model = draw(st.integers(2, 7))
    d_head = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    W = [rng.standard_normal((n_layers, n_heads, d_model, d_head)) for _ in range(3)]
    W_O = rng.standard_normal((n_layers, n_heads, d_head, d_model))
    if draw(st.booleans()) and d_head > 1:      # rank-deficient heads: repeated columns
        for w in W:
            w[..., -1] = w[..., 0]
        W_O[..., -1, :] = 2 * W_O[..., 0, :]
    return (*W, W_O)


# --------------------------------------------------------------------------- dense metrics vs reference

@given(pairs())
@FAST
def test_frobenius_svd_bound_subspace_match_reference(pair):
    L, R = pair
    f = C.frobenius(L, R)
    assert f == pytest.approx(ref_frobenius(L, R), rel=1e-10)
    assert C.svd_bound(L, R) == pytest.approx(ref_svd_bound(L, R), rel=1e-10)
    assert C.subspace(L, R) == pytest.approx(ref_subspace(L, R), abs=1e-9)
    for m in ("frobenius", "svd_bound", "subspace"):
        assert 0.0 <= C.composition_score(L, R, m) <= 1.0
    assert C.svd_bound(L, R) >= f - 1e-12            # the tighter denominator


@given(pairs())
@FAST
def test_baseline_is_frobenius_minus_monte_carlo_mean(pair):
    L, R = pair
    mean = ref_baseline_mean(L.shape, R.shape)
    assert C.frobenius_baseline(L, R) == pytest.approx(ref_frobenius(L, R) - mean, abs=1e-12)
    m, se = C.random_baseline(L.shape, R.shape)
    assert m == pytest.approx(mean, abs=1e-12) and 0 < se < 0.1


def test_baseline_standard_error_covers_independent_estimates():
    # the stated estimator: 32 independent seeds of the 64-sample mean spread like the stated stderr
    means = [C.random_baseline((6, 6), (6, 6), seed=s)[0] for s in range(32)]
    _, se = C.random_baseline((6, 6), (6, 6))
    assert np.std(means, ddof=1) == pytest.approx(se, rel=0.5)


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from(C.MODES))
@FAST
def test_token_matches_materialised_token_space(d, seed, mode):
    rng = np.random.default_rng(seed)
    L, R = low_rank(rng, d, d, rng.integers(1, d + 1)), low_rank(rng, d, d, rng.integers(1, d + 1))
    E, U = rng.standard_normal((3 * d, d)), rng.standard_normal((d, 3 * d))
    got = C.composition_score(L, R, "token", W_E=E, W_U=U, mode=mode)
    assert got == pytest.approx(ref_token(L, R, E, U, mode), rel=1e-9)
    path = C.token_path(L, R, W_E=E, W_U=U, mode=mode)
    np.testing.assert_allclose(path, E @ L @ R @ (U if mode == "V" else E.T), rtol=1e-12, atol=1e-12)


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from(C.MODES))
@FAST
def test_whitened_matches_symmetric_square_root_reference(d, seed, mode):
    rng = np.random.default_rng(seed)
    L, R = low_rank(rng, d, d, rng.integers(1, d + 1)), low_rank(rng, d, d, rng.integers(1, d + 1))
    M = rng.standard_normal((2 * d, d))
    got = C.composition_score(L, R, "whitened", gram=M.T @ M, mode=mode)
    assert got == pytest.approx(ref_whitened(L, R, M.T @ M, mode), rel=1e-9)
    assert C.composition_score(L, R, "whitened", W_E=M, mode=mode) == pytest.approx(got, rel=1e-12)


def _random_basis(rng, d):
    """An invertible T of condition number up to about 100 (a random rotation times random stretches)."""
    q1, q2 = np.linalg.qr(rng.standard_normal((2, d, d)))[0]
    return (q1 * np.exp(rng.uniform(-2.3, 2.3, d))) @ q2


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from(C.MODES))
@FAST
def test_token_and_whitened_are_invariant_under_every_change_of_basis(d, seed, mode):
    rng = np.random.default_rng(seed)
    L, R = low_rank(rng, d, d, rng.integers(1, d + 1)), low_rank(rng, d, d, rng.integers(1, d + 1))
    E, U = rng.standard_normal((3 * d, d)), rng.standard_normal((d, 3 * d))
    T = _random_basis(rng, d)
    Ti = np.linalg.inv(T)
    L2 = Ti @ L @ T                                            # OV: T^-1 A T
    R2 = Ti @ R @ (T if mode == "V" else Ti.T)                 # OV reads: T^-1 B T; QK: T^-1 B T^-T
    for metric, kw, kw2 in [("token", {"W_E": E, "W_U": U}, {"W_E": E @ T, "W_U": Ti @ U}),
                            ("whitened", {"W_E": E}, {"W_E": E @ T}),
                            ("whitened", {"gram": E.T @ E}, {"gram": T.T @ E.T @ E @ T})]:
        before = C.composition_score(L, R, metric, mode=mode, **kw)
        after = C.composition_score(L2, R2, metric, mode=mode, **kw2)
        assert after == pytest.approx(before, rel=1e-9), metric


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from(C.MODES))
@FAST
def test_token_and_whitened_are_exactly_zero_when_the_product_is(d, seed, mode):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, d))                          # A writes only the first k axes, B reads the rest
    L = rng.standard_normal((d, d)) * (np.arange(d) < k)
    R = rng.standard_normal((d, d)) * (np.arange(d) >= k)[:, None]
    assert np.all(L @ R == 0)
    E, U = rng.standard_normal((3 * d, d)), rng.standard_normal((d, 3 * d))
    assert C.composition_score(L, R, "token", W_E=E, W_U=U, mode=mode) == 0.0
    assert C.composition_score(L, R, "whitened", W_E=E, mode=mode) == 0.0


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from(C.MODES))
@FAST
def test_whitened_with_identity_gram_is_frobenius(d, seed, mode):
    rng = np.random.default_rng(seed)
    L, R = rng.standard_normal((2, d, d))
    got = C.composition_score(L, R, "whitened", gram=np.eye(d), mode=mode)
    assert got == pytest.approx(C.frobenius(L, R), rel=1e-12)


@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from("QK"))
@FAST
def test_token_is_whitened_by_the_embedding_for_q_and_k(d, seed, mode):
    """Proved: W_E F^-1 has orthonormal columns, so ||W_E M W_E^T|| = ||F M F^T|| and the token
    factors are the whitened ones. This checks the identity."""
    rng = np.random.default_rng(seed)
    L, R = rng.standard_normal((2, d, d))
    E = rng.standard_normal((2 * d, d))
    assert C.composition_score(L, R, "token", W_E=E, mode=mode) == pytest.approx(
        C.composition_score(L, R, "whitened", W_E=E, mode=mode), rel=1e-10)


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1))
@FAST
def test_von_neumann_bound_on_the_numerator(n, m, p, seed):
    """||AB||_F^2 = tr(A^T A B B^T) <= sum_i sigma_i^2 tau_i^2 (von Neumann's trace inequality), so
    svd_bound <= 1; equality when A^T A and B B^T share an eigenbasis in the same order (Theobald 1975)."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, m)), rng.standard_normal((m, p))
    sa, sb = np.linalg.svd(A, compute_uv=False), np.linalg.svd(B, compute_uv=False)
    k = min(len(sa), len(sb))
    bound = np.sum(sa[:k] ** 2 * sb[:k] ** 2)
    assert np.linalg.norm(A @ B) ** 2 == pytest.approx(np.trace(A.T @ A @ B @ B.T), rel=1e-10)
    assert np.linalg.norm(A @ B) ** 2 <= bound * (1 + 1e-12)
    # equality: B's left singular vectors are A's right ones, in the same order of singular values
    ua, _, vat = np.linalg.svd(A)
    _, _, vbt = np.linalg.svd(B)
    r = min(m, len(sa), len(sb))
    B_eq = vat.T[:, :r] @ np.diag(sb[:r]) @ vbt[:r]
    assert np.linalg.norm(A @ B_eq) ** 2 == pytest.approx(np.sum(sa[:r] ** 2 * sb[:r] ** 2), rel=1e-9)
    assert C.svd_bound(A, B_eq) == pytest.approx(1.0, rel=1e-9)


def test_theobald_equality_needs_the_same_order():
    """Shared eigenbasis but opposite order, with distinct eigenvalues: strictly below the bound."""
    A, B = np.diag([2.0, 1.0]), np.diag([1.0, 2.0])
    assert np.linalg.norm(A @ B) ** 2 == pytest.approx(8.0) and 8.0 < 2.0 ** 2 * 2.0 ** 2 + 1.0 ** 2   # 8 < 17
    rot = np.array([[np.cos(0.3), -np.sin(0.3)], [np.sin(0.3), np.cos(0.3)]])
    assert np.linalg.norm(A @ rot @ np.diag([2.0, 1.0])) ** 2 < 17 - 1e-6    # same order, other basis


def test_batches_broadcast():
    rng = np.random.default_rng(0)
    L, R = rng.standard_normal((5, 3, 4)), rng.standard_normal((4, 2))
    for m in ("frobenius", "svd_bound", "subspace"):
        got = C.composition_score(L, R, m)
        assert got.shape == (5,)
        one = [C.composition_score(L[i], R, m) for i in range(5)]
        np.testing.assert_allclose(got, one, rtol=1e-12)


# --------------------------------------------------------------------------- the identity paradox, exactly

def exact_inv_sqrt(d):
    getcontext().prec = 50
    return float(Decimal(1) / Decimal(d).sqrt())


@pytest.mark.parametrize("d", [1, 2, 3, 5, 7, 10, 64, 99])
def test_identity_paradox(d):
    I = np.eye(d)
    got = C.frobenius(I, I)
    # d**-1/2 to the last bit: within one unit in the last place of the correctly rounded value
    assert abs(got - exact_inv_sqrt(d)) <= np.spacing(exact_inv_sqrt(d))
    assert C.svd_bound(I, I) == 1.0
    assert C.subspace(I, I) == 1.0


def test_frobenius_is_one_only_for_constant_rank_one():
    rows, cols = np.ones((4, 1)) * [[1.0, 1.0, 1.0]], np.ones((3, 1)) * [[2.0, 2.0]]
    assert C.frobenius(rows, cols) == pytest.approx(1.0, abs=1e-15)
    assert C.frobenius(np.diag([1.0, 1e-3]), np.diag([1.0, 1e-3])) < 1.0


# --------------------------------------------------------------------------- all pairs vs the TL definition

SCORES = {
    "frobenius": ref_frobenius,
    "svd_bound": ref_svd_bound,
    "subspace": ref_subspace,
}


@given(heads(), st.sampled_from(C.MODES), st.sampled_from(sorted(SCORES)))
@FAST
def test_all_pairs_match_transformerlens_definition(w, mode, metric):
    got = C.all_composition_scores(*w, mode, metric)
    want = ref_all(*w, mode, SCORES[metric])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert got.shape == (w[0].shape[0], w[0].shape[1]) * 2


@given(heads(), st.sampled_from(C.MODES))
@FAST
def test_all_pairs_token_and_whitened(w, mode):
    rng = np.random.default_rng(1)
    d = w[0].shape[2]
    E, U = rng.standard_normal((2 * d + 1, d)), rng.standard_normal((d, 2 * d + 1))
    got = C.all_composition_scores(*w, mode, "token", W_E=E, W_U=U)
    want = ref_all(*w, mode, lambda L, R: ref_token(L, R, E, U, mode))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    got = C.all_composition_scores(*w, mode, "whitened", gram=E.T @ E)
    want = ref_all(*w, mode, lambda L, R: ref_whitened(L, R, E.T @ E, mode))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


@given(heads(), st.sampled_from(C.MODES))
@FAST
def test_all_pairs_baseline_uses_gaussian_factors_of_the_heads_shapes(w, mode):
    n_layers, _, d_model, d_head = w[0].shape
    got = C.all_composition_scores(*w, mode, "frobenius_baseline", samples=16, seed=3)
    mean, _ = C.random_baseline((d_model, d_model), (d_model, d_model), ranks=(d_head, d_head),
                                samples=16, seed=3)
    want = ref_all(*w, mode, lambda L, R: ref_frobenius(L, R) - mean)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    one = w[2][0, 0] @ w[3][0, 0]
    if n_layers > 1:
        right = {"Q": w[0][1, 0] @ w[1][1, 0].T, "K": w[1][1, 0] @ w[0][1, 0].T,
                 "V": w[2][1, 0] @ w[3][1, 0]}[mode]
        dense = C.composition_score(one, right, "frobenius_baseline", samples=16, seed=3,
                                    ranks=(d_head, d_head))
        assert got[0, 0, 1, 0] == pytest.approx(dense, abs=1e-12)


@given(heads(), st.sampled_from(C.METRICS))
@settings(derandomize=True, max_examples=15, deadline=None)
def test_several_modes_at_once_stack_the_single_modes(w, metric):
    d = w[0].shape[2]
    E = np.ones((d + 2, d)) + np.eye(d + 2, d)
    kw = {"token": {"W_E": E, "W_U": np.ones((d, 3)) + np.eye(d, 3)}, "whitened": {"W_E": E}}.get(metric, {})
    both = C.all_composition_scores(*w, "KQV", metric, **kw)
    assert both.shape == (3,) + (w[0].shape[0], w[0].shape[1]) * 2
    for i, mode in enumerate("KQV"):
        np.testing.assert_allclose(both[i], C.all_composition_scores(*w, mode, metric, **kw), rtol=1e-12,
                                   atol=1e-15)
    np.testing.assert_array_equal(C.all_composition_scores(*w, ["V"], metric, **kw)[0],
                                  C.all_composition_scores(*w, "V", metric, **kw))


def test_random_baseline_factored_matches_dense_product():
    rng = np.random.default_rng(0)
    mean, se = C.random_baseline((6, 5), (5, 4), ranks=(2, 3), samples=8, seed=9)
    rng = np.random.default_rng(9)
    P, Zt = rng.standard_normal((8, 6, 2)), rng.standard_normal((8, 2, 5))
    X, Yt = rng.standard_normal((8, 5, 3)), rng.standard_normal((8, 3, 4))
    want = np.mean([ref_frobenius(P[s] @ Zt[s], X[s] @ Yt[s]) for s in range(8)])
    assert mean == pytest.approx(want, rel=1e-12)


def test_float32_weights_agree_with_float64_to_1e_5():
    rng = np.random.default_rng(0)
    shape = (3, 4, 96, 24)
    W = [rng.standard_normal(shape).astype(np.float32) / 10 for _ in range(3)]
    W_O = rng.standard_normal((3, 4, 24, 96)).astype(np.float32) / 10
    for mode in C.MODES:
        got = C.all_composition_scores(*W, W_O, mode)
        want = C.all_composition_scores(*[w.astype(np.float64) for w in (*W, W_O)], mode)
        mask = want > 0
        assert np.max(np.abs(got[mask] / want[mask] - 1)) < 1e-5


def test_token_never_forms_vocab_squared():
    import tracemalloc
    rng = np.random.default_rng(0)
    d_vocab, d_model = 50257, 8
    W = [rng.standard_normal((2, 2, d_model, 2)) for _ in range(3)]
    W_O = rng.standard_normal((2, 2, 2, d_model))
    E, U = rng.standard_normal((d_vocab, d_model)), rng.standard_normal((d_model, d_vocab))
    tracemalloc.start()
    s = C.all_composition_scores(*W, W_O, "K", "token", W_E=E, W_U=U)
    d = C.composition_score(W[2][0, 0] @ W_O[0, 0], W[1][1, 1] @ W[0][1, 1].T, "token",
                            W_E=E, W_U=U, mode="K")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 30e6          # a d_vocab^2 float64 matrix would be 20 GB
    assert s[0, 0, 1, 1] == pytest.approx(d, rel=1e-9)


def test_one_layer_scores_are_all_zero():
    rng = np.random.default_rng(0)
    W = [rng.standard_normal((1, 2, 4, 2)) for _ in range(3)]
    np.testing.assert_array_equal(C.all_composition_scores(*W, rng.standard_normal((1, 2, 2, 4)), "V"), 0)


# --------------------------------------------------------------------------- bad input

GOOD = np.eye(3)


@pytest.mark.parametrize("args, kw, message", [
    ((np.ones(3), GOOD), {}, r"left must have at least 2 dimensions \[..., rows, cols\]; got shape \[3\]"),
    ((GOOD, np.ones((4, 2))), {}, r"right must have shape \[..., 3, \*\] .*; got \[4, 2\]"),
    ((np.ones((2, 3, 3)), np.ones((4, 3, 3))), {}, r"batch dimensions must broadcast; got left \[2, 3, 3\]"),
    ((np.full((3, 3), np.nan), GOOD), {}, r"left must be finite; got nan at index \(0, 0\)"),
    ((GOOD, np.full((3, 3), np.inf)), {}, r"right must be finite; got inf"),
    ((np.zeros((3, 3)), GOOD), {}, r"left is a zero matrix \(norm 0\), so the score is 0/0"),
    ((GOOD, np.zeros((3, 3))), {"metric": "svd_bound"}, r"right is a zero matrix"),
    ((GOOD, np.zeros((3, 3))), {"metric": "subspace"}, r"right is a zero matrix"),
    ((GOOD, GOOD), {"metric": "cosine"}, r"metric must be one of 'frobenius', .*; got 'cosine'"),
    ((GOOD, GOOD), {"metric": "token"}, r"metric 'token' needs mode \('Q', 'K' or 'V'"),
    ((GOOD, GOOD), {"metric": "token", "mode": "Q"}, r"metric 'token' needs W_E \[d_vocab, d_model\]; got none"),
    ((GOOD, GOOD), {"metric": "token", "W_E": np.eye(5, 3), "mode": "V"}, r"token for mode 'V' needs W_U"),
    ((GOOD, GOOD), {"metric": "token", "W_E": np.ones((2, 3)), "mode": "Q"},
     r"W_E must have full column rank d_model=3 .* at least d_model rows; got shape \[2, 3\]"),
    ((GOOD, GOOD), {"metric": "whitened", "mode": "Q"}, r"whitened needs a reference: W_E .* or gram; got neither"),
    ((GOOD, GOOD), {"metric": "whitened", "mode": "Q", "gram": GOOD, "W_E": np.ones((5, 3))},
     r"whitened takes gram or W_E, not both"),
    ((GOOD, GOOD), {"metric": "whitened", "mode": "Q", "gram": np.triu(np.ones((3, 3)))},
     r"gram must be symmetric; it differs from its transpose by 1"),
    ((GOOD, GOOD), {"metric": "whitened", "mode": "Q", "gram": np.diag([1.0, 1.0, -1.0])},
     r"gram must be positive definite \(full rank d_model=3\); its smallest/largest eigenvalue is -1"),
    ((GOOD, GOOD), {"metric": "whitened", "mode": "Q", "gram": np.eye(2)},
     r"gram must have shape \[d_model=3, d_model=3\]; got \[2, 2\]"),
    ((GOOD, GOOD), {"metric": "frobenius", "seed": 1}, r"unknown keyword 'seed' for metric 'frobenius'"),
    ((GOOD, GOOD), {"metric": "token", "W_E": np.ones((5, 2)), "W_U": np.ones((3, 5)), "mode": "Q"},
     r"W_E must have shape \[d_vocab, d_model=3\]; got \[5, 2\]"),
    ((GOOD, GOOD), {"metric": "token", "W_E": np.eye(5, 3), "W_U": np.ones((4, 5)), "mode": "V"},
     r"W_U must have shape \[d_model=3, d_vocab\]; got \[4, 5\]"),
    ((GOOD, GOOD), {"metric": "token", "W_E": np.ones((5, 3)), "W_U": np.ones((3, 5)), "mode": "X"},
     r"mode must be one of 'Q', 'K', 'V'; got 'X'"),
    ((GOOD, GOOD), {"metric": "token", "W_E": np.ones((5, 3)), "mode": "Q"},
     r"W_E must have full column rank d_model=3: W_E.T @ W_E must be positive definite"),
    (("abc", GOOD), {}, r"left must be a numeric array; got a string 'abc'"),
])
def test_bad_input_is_a_clear_value_error(args, kw, message):
    with pytest.raises(ValueError, match=message):
        C.composition_score(*args, **kw)


def _w(n_layers=2, n_heads=2, d_model=4, d_head=2, seed=0):
    rng = np.random.default_rng(seed)
    W = [rng.standard_normal((n_layers, n_heads, d_model, d_head)) for _ in range(3)]
    return (*W, rng.standard_normal((n_layers, n_heads, d_head, d_model)))


def test_all_pairs_bad_input():
    W_Q, W_K, W_V, W_O = _w()
    with pytest.raises(ValueError, match=r"W_Q must have 4 dimensions; got shape \[2, 4, 2\]"):
        C.all_composition_scores(W_Q[0], W_K, W_V, W_O, "Q")
    with pytest.raises(ValueError, match=r"W_K must have shape \[n_layers, n_heads, d_model, d_head\] = "
                                         r"\[2, 2, 4, 2\] to match W_Q \[2, 2, 4, 2\]; got \[2, 2, 4, 3\]"):
        C.all_composition_scores(W_Q, np.ones((2, 2, 4, 3)), W_V, W_O, "Q")
    with pytest.raises(ValueError, match=r"W_O must have shape \[n_layers, n_heads, d_head, d_model\]"):
        C.all_composition_scores(W_Q, W_K, W_V, np.swapaxes(W_O, -1, -2).copy()[..., :1], "Q")
    with pytest.raises(ValueError, match=r"mode must be one of 'Q', 'K', 'V'; got 'q'"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "q")
    with pytest.raises(ValueError, match=r"mode must be one of 'Q', 'K', 'V'; got 'X'"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "QX")
    for bad in (None, "", ()):
        with pytest.raises(ValueError, match=r"mode must be one of 'Q', 'K', 'V' or a sequence of them"):
            C.all_composition_scores(W_Q, W_K, W_V, W_O, bad)
    with pytest.raises(ValueError, match=r"metric must be one of"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "Q", "frob")
    bad = W_V.copy()
    bad[0, 1] = 0
    for metric in ("frobenius", "svd_bound", "subspace"):
        with pytest.raises(ValueError, match=r"W_V @ W_O of layer 0, head 1 is zero \(norm 0\), so its "
                                             r"scores are 0/0"):
            C.all_composition_scores(W_Q, W_K, bad, W_O, "Q", metric)
    bad = W_K.copy()
    bad[1, 0] = 0
    with pytest.raises(ValueError, match=r"W_Q @ W_K.T of layer 1, head 0 is zero"):
        C.all_composition_scores(W_Q, bad, W_V, W_O, "Q")
    nan = W_O.copy()
    nan[1, 1, 0, 2] = np.nan
    with pytest.raises(ValueError, match=r"W_O must be finite; got nan at index \(1, 1, 0, 2\)"):
        C.all_composition_scores(W_Q, W_K, W_V, nan, "V")
    with pytest.raises(ValueError, match=r"metric 'token' with mode 'V' needs W_U \[d_model, d_vocab\]"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "V", "token", W_E=np.eye(5, 4))
    with pytest.raises(ValueError, match=r"W_E must have full column rank d_model=4"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "Q", "whitened", W_E=np.ones((5, 4)))
    with pytest.raises(ValueError, match=r"unknown keyword 'rtol' for metric 'svd_bound'"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "V", "svd_bound", rtol=1e-3)
    with pytest.raises(ValueError, match=r"unknown keyword 'ranks' for metric 'frobenius_baseline'; "
                                         r"expected one of \['samples', 'seed'\]"):
        C.all_composition_scores(W_Q, W_K, W_V, W_O, "V", "frobenius_baseline", ranks=(1, 1))


@pytest.mark.parametrize("bad, message", [
    ({"shape_left": (3, 4), "shape_right": (5, 2)}, r"shape_right must start with 4"),
    ({"shape_left": (3, 0), "shape_right": (0, 2)}, r"shape_left\[1\] must be at least 1; got 0$"),
    ({"shape_left": (3, 3), "shape_right": (3, 3), "samples": 1}, r"samples must be at least 2; got 1$"),
])
def test_random_baseline_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        C.random_baseline(**bad)
