"""headspace.layer_pairs: one layer pair's scores from one d_head-sized product, against the library's
dense definitions (``pair_scores.product_norm``, ``norm_product``) and its all-pairs engine."""

import numpy as np
import pytest

from headspace import layer_pairs, pair_scores
from headspace.composition import all_composition_scores, random_baseline
from headspace.layer_pairs import layer_pair_scores, random_baselines, size_scores
from headspace.weights import Weights


def random_weights(dtype, seed=0, L=3, H=3, M=16, D=4):
    rng = np.random.default_rng(seed)
    W_Q, W_K, W_V = (rng.standard_normal((L, H, M, D)).astype(dtype) for _ in range(3))
    W_O = rng.standard_normal((L, H, D, M)).astype(dtype)
    return W_Q, W_K, W_V, W_O


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mode", "QKV")
def test_equal_the_dense_definitions_and_the_engine(dtype, mode):
    W = random_weights(dtype)
    w = Weights(None, None, *W, None)
    rtol = 1e-6 if dtype == np.float32 else 1e-10
    sizes = size_scores(*W, mode)
    np.testing.assert_allclose(sizes["product_norm"], pair_scores.product_norm(w, mode), rtol=rtol, atol=0)
    np.testing.assert_allclose(sizes["norm_product"], pair_scores.norm_product(w, mode), rtol=rtol, atol=0)
    frob = all_composition_scores(*W, mode)
    for l1, l2 in ((0, 1), (0, 2), (1, 2)):
        block = layer_pair_scores(*W, l1, l2, "QKV")
        np.testing.assert_allclose(block["frobenius"]["QKV".index(mode)], frob[l1, :, l2, :], rtol=rtol)


def test_modes_stack_in_the_order_asked():
    W = random_weights(np.float64)
    both = layer_pair_scores(*W, 0, 2, "VQ")
    for i, mode in enumerate("VQ"):
        one = layer_pair_scores(*W, 0, 2, mode)
        for name in both:
            np.testing.assert_array_equal(both[name][i], one[name][0])


@pytest.mark.parametrize("l1, l2", [(1, 1), (2, 1), (0, 3), (-1, 1)])
def test_layers_must_be_earlier_then_later(l1, l2):
    with pytest.raises(ValueError, match=r"l1 and l2 must be layers with 0 <= l1 < l2 < n_layers=3"):
        layer_pair_scores(*random_weights(np.float64), l1, l2)


def test_a_zero_head_is_named():
    W_Q, W_K, W_V, W_O = random_weights(np.float64)
    W_V[0, 1] = 0
    with pytest.raises(ValueError, match=r"writer head L0H1 or reader head L2H0 is zero"):
        layer_pair_scores(W_Q, W_K, W_V, W_O, 0, 2)


def test_random_baselines():
    b = random_baselines(32, 8, samples=32, seed=3)
    assert b["frobenius"] == random_baseline((32, 32), (32, 32), ranks=(8, 8), samples=32, seed=3)
    # the ratio, recomputed densely from the same kind of draws: within a few standard errors
    rng = np.random.default_rng(11)
    dense = []
    for _ in range(400):
        V, X, Y = rng.standard_normal((3, 32, 8))
        O = rng.standard_normal((8, 32))
        A, B = V @ O, X @ Y.T
        dense.append(np.linalg.norm(A @ B, 2) / (np.linalg.norm(A) * np.linalg.norm(B)))
    se = np.hypot(b["size_ratio"][1], np.std(dense) / np.sqrt(len(dense)))
    assert abs(b["size_ratio"][0] - np.mean(dense)) < 5 * se


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-9), (np.float32, 2e-6)])
@pytest.mark.parametrize("metric", ["frobenius", "svd_bound", "subspace"])
def test_every_score_equals_the_all_pairs_engine(dtype, rtol, metric):
    W = random_weights(dtype, seed=4, L=3, H=4, M=48, D=8)
    engine = all_composition_scores(*W, "QKV", metric)
    for l1, l2 in ((0, 1), (0, 2), (1, 2)):
        block = layer_pair_scores(*W, l1, l2, "QKV")
        np.testing.assert_allclose(block[metric], engine[:, l1, :, l2, :], rtol=rtol, atol=0)


def test_a_rank_deficient_head_reads_its_rank():
    """subspace divides by the writer's rank and ignores directions of zero singular value."""
    W_Q, W_K, W_V, W_O = random_weights(np.float64, seed=5)
    W_V[0, 1, :, 2:] = 0                                 # writer L0H1 has rank 2 of 4
    W_K[2, 0, :, 1:] = 0                                 # reader L2H0 (Q: W_Q W_K^T) has rank 1
    engine = all_composition_scores(W_Q, W_K, W_V, W_O, "QV", "subspace")
    block = layer_pair_scores(W_Q, W_K, W_V, W_O, 0, 2, "QV")
    np.testing.assert_allclose(block["subspace"], engine[:, 0, :, 2, :], rtol=1e-9, atol=1e-12)


def test_top_singular_value_is_the_spectral_norm():
    rng = np.random.default_rng(7)
    C = rng.standard_normal((50, 16, 16)) * np.geomspace(1, 1e-3, 16)
    np.testing.assert_allclose(layer_pairs.top_singular_value(C.reshape(5, 10, 16, 16)).ravel(),
                               np.linalg.norm(C, 2, axis=(-2, -1)), rtol=1e-12)


def test_the_route_without_blas_gives_the_same_scores(monkeypatch):
    """Pyodide's numpy has no BLAS, and the product runs as blocked einsums there: same scores."""
    W = random_weights(np.float32, seed=6, L=2, H=3, M=300, D=8)
    native = layer_pair_scores(*W, 0, 1, "QKV")
    monkeypatch.setattr(layer_pairs, "_NO_BLAS", True)
    monkeypatch.setattr(layer_pairs, "_ROWS", 5)                 # several blocks of the 9-row operand
    wasm = layer_pair_scores(*W, 0, 1, "QKV")
    for name in layer_pairs.SCORES:
        np.testing.assert_allclose(wasm[name], native[name], rtol=1e-5)
