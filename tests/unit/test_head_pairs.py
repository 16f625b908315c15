"""The all-pairs engine in blocks: any working-memory budget gives the same scores, with progress."""

import numpy as np
import pytest

from headspace.head_pairs import all_composition_scores


def weights(shape, dtype, seed=0):
    L, H, d, a = shape
    rng = np.random.default_rng(seed)
    W_Q, W_K, W_V = (rng.normal(size=(L, H, d, a)).astype(dtype) for _ in range(3))
    return W_Q, W_K, W_V, rng.normal(size=(L, H, a, d)).astype(dtype)


@pytest.mark.parametrize("shape", [(2, 1, 8, 3), (5, 3, 20, 7), (4, 2, 16, 5)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("metric", ["frobenius", "frobenius_baseline", "svd_bound", "whitened", "token"])
@pytest.mark.parametrize("mode", ["K", "QKV"])
def test_blocked_equals_unblocked(shape, dtype, metric, mode):
    W = weights(shape, dtype)
    kw = {}
    if metric in ("token", "whitened"):
        rng = np.random.default_rng(1)
        kw = {"W_E": rng.normal(size=(3 * shape[2], shape[2])), "W_U": rng.normal(size=(shape[2], 3 * shape[2]))}
        if metric == "whitened":
            kw.pop("W_U")
    whole = all_composition_scores(*W, mode, metric, **kw)
    for budget in (1, 2_000, 50_000):          # one later layer per block, a few, and the cached factors
        calls = []
        blocked = all_composition_scores(*W, mode, metric, work_bytes=budget,
                                         progress=lambda d, t: calls.append((d, t)), **kw)
        tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=2e-6, atol=1e-7)  # BLAS blocking
        np.testing.assert_allclose(blocked, whole, **tol)
        done = [d for d, _ in calls]
        assert done == list(range(1, len(calls) + 1)) and calls[-1][1] == len(calls) >= shape[0] - 1


def test_one_block_is_one_step_per_earlier_layer():
    calls = []
    all_composition_scores(*weights((4, 2, 8, 2), np.float64), "K", progress=lambda d, t: calls.append((d, t)))
    assert calls == [(1, 3), (2, 3), (3, 3)]


@pytest.mark.parametrize("kw, message", [
    ({"work_bytes": 0}, r"work_bytes must be a positive integer number of bytes; got 0"),
    ({"work_bytes": 1.5}, r"work_bytes must be a positive integer number of bytes; got 1.5"),
    ({"progress": 3}, r"progress must be a callable progress\(done, total\) or None; got int"),
])
def test_bad_keywords(kw, message):
    with pytest.raises(ValueError, match=message):
        all_composition_scores(*weights((2, 1, 4, 2), np.float64), "K", **kw)


def test_nan_found_in_a_large_input_chunk():
    W = list(weights((2, 2, 64, 8), np.float32))
    W[2] = np.repeat(W[2], 1, axis=0).copy()
    W[2][1, 1, 63, 7] = np.inf
    with pytest.raises(ValueError, match=r"W_V must be finite; got inf at index \(1, 1, 63, 7\)"):
        all_composition_scores(*W, "K")
