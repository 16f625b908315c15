"""The all-pairs engine (headspace.head_pairs) in blocks: any working-memory budget gives the scores of
the dense per-pair reference, progress counts head pairs up to the total, memory does not grow with
the model, and bad keywords are clear errors."""

import tracemalloc

import numpy as np
import pytest

from headspace import composition as C
from headspace import _random_baseline as RB
from headspace import head_pairs as HP
from headspace.validate import _first_nonfinite, as_array
from headspace.composition import all_composition_scores, composition_score

METRICS = ("frobenius", "frobenius_baseline", "svd_bound", "subspace", "token", "whitened")
# (n_layers, n_heads, d_model, d_head): d_head 7 and 5 divide nothing; one layer pair; more heads than d_head
SHAPES = [(2, 1, 8, 3), (5, 3, 20, 7), (4, 2, 16, 5), (3, 5, 12, 2)]
# 1 byte: one writer head and one reader head per block; 3000: a few heads; 60_000: a few layers
BUDGETS = (1, 3000, 60_000)


def weights(shape, dtype, seed=0):
    L, H, d, a = shape
    rng = np.random.default_rng(seed)
    W_Q, W_K, W_V = (rng.normal(size=(L, H, d, a)).astype(dtype) for _ in range(3))
    return W_Q, W_K, W_V, rng.normal(size=(L, H, a, d)).astype(dtype)


def metric_kw(metric, d_model, seed=1):
    rng = np.random.default_rng(seed)
    if metric == "token":
        return {"W_E": rng.normal(size=(3 * d_model, d_model)), "W_U": rng.normal(size=(d_model, 3 * d_model))}
    if metric == "whitened":
        return {"W_E": rng.normal(size=(3 * d_model, d_model))}
    return {}


def dense_reference(W, mode, metric, kw):
    """Slow and obvious: every pair's d_model x d_model product through composition_score."""
    W_Q, W_K, W_V, W_O = (w.astype(np.float64) for w in W)
    L, H = W_Q.shape[:2]
    out = np.zeros((L, H, L, H))
    read = {"Q": lambda l, h: W_Q[l, h] @ W_K[l, h].T, "K": lambda l, h: W_K[l, h] @ W_Q[l, h].T,
            "V": lambda l, h: W_V[l, h] @ W_O[l, h]}[mode]
    extra = dict(kw, mode=mode) if metric in ("token", "whitened") else {}
    if metric == "frobenius_baseline":
        extra = {"ranks": (W_Q.shape[-1],) * 2}
    for l1 in range(L):
        for h1 in range(H):
            for l2 in range(l1 + 1, L):
                for h2 in range(H):
                    out[l1, h1, l2, h2] = composition_score(W_V[l1, h1] @ W_O[l1, h1], read(l2, h2), metric, **extra)
    return out


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("metric", METRICS)
def test_blocked_equals_unblocked_and_the_dense_reference(shape, dtype, metric):
    W = weights(shape, dtype)
    kw = metric_kw(metric, shape[2])
    whole = all_composition_scores(*W, "QKV", metric, **kw)
    for i, mode in enumerate("QKV"):
        ref = dense_reference(W, mode, metric, kw)
        tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(whole[i], ref, **tol, err_msg=mode)
    for budget in BUDGETS:
        tol = dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=1e-6, atol=1e-7)  # BLAS blocking
        blocked = all_composition_scores(*W, "QKV", metric, work_bytes=budget, **kw)
        np.testing.assert_allclose(blocked, whole, **tol, err_msg=f"work_bytes={budget}")
        single = all_composition_scores(*W, "V", metric, work_bytes=budget, **kw)
        np.testing.assert_allclose(single, whole[2], **tol, err_msg=f"mode V, work_bytes={budget}")


@pytest.mark.parametrize("budget", (1, 3000, HP.WORK_BYTES))
@pytest.mark.parametrize("mode", ["K", "QKV", ("V", "Q")])
def test_progress_counts_head_pairs_up_to_the_total(budget, mode):
    L, H = 5, 3
    W = weights((L, H, 20, 7), np.float32)
    calls = []
    all_composition_scores(*W, mode, work_bytes=budget, progress=lambda d, t: calls.append((d, t)))
    total = len(mode) * H * H * L * (L - 1) // 2
    done = [d for d, _ in calls]
    assert {t for _, t in calls} == {total}
    assert done[0] > 0 and done[-1] == total
    assert all(a < b for a, b in zip(done, done[1:]))               # strictly increasing: one call per block
    if budget == 1:
        assert len(calls) == len(mode) * H * H * L * (L - 1) // 2    # one writer head x one reader head
    if budget == HP.WORK_BYTES:
        assert len(calls) == L - 1                                   # one block: one call per earlier layer


def test_one_layer_has_no_blocks_to_report():
    calls = []
    out = all_composition_scores(*weights((1, 2, 4, 2), np.float64), "Q", progress=lambda d, t: calls.append((d, t)))
    assert calls == [] and not out.any()


def traced_peak(call, repeats=3):
    """The smallest traced peak of ``repeats`` calls.

    A call's own peak is deterministic, but now and then CPython rebuilds a large string-keyed table of
    its own (one 1.9 MB block in the test process, every few tens of thousands of small numpy calls,
    whichever calls filled it) while a call is traced. It lands in at most one of a few consecutive
    calls, so the smallest peak is the engine's.
    """
    peaks = []
    for _ in range(repeats):
        tracemalloc.start()
        call()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    return min(peaks)


@pytest.mark.slow  # the full run only (scripts/test --fast leaves it out)
def test_working_memory_does_not_grow_with_the_model():
    """At a fixed small budget the traced peak stays put while the weights grow eightfold."""
    peaks = {}
    for L in (2, 16):
        W = weights((L, 4, 256, 24), np.float32)
        peaks[L] = traced_peak(lambda W=W: all_composition_scores(*W, "K", work_bytes=200_000))
        inputs = sum(w.nbytes for w in W)
    # what grows: the d_head x d_head factors of every head (float32, writers and readers: 2 x 14 x 4 x
    # 24^2 x 4 B = 258 kB more, inside the 30%) and the result, as (L H)^2
    assert peaks[16] < 1.3 * peaks[2] + 4 * (16 * 4) ** 2 * 8
    assert peaks[16] < 0.2 * inputs


@pytest.mark.slow  # the full run only (scripts/test --fast leaves it out)
@pytest.mark.parametrize("metric", ["token", "whitened", "subspace"])
def test_every_metric_works_in_memory_that_does_not_grow_with_the_model(metric):
    """token and whitened never move the whole weights to the new basis, subspace never holds QR
    factors of every head: at a fixed budget the peak stays put while the weights grow eightfold."""
    peaks = {}
    kw = metric_kw(metric, 192)
    for L in (2, 16):
        W = weights((L, 4, 192, 16), np.float32)
        peaks[L] = traced_peak(lambda W=W: all_composition_scores(*W, "V", metric, work_bytes=100_000, **kw))
    # what may grow: the d_head x d_head factors of every head (float64, writers and readers) and the result
    assert peaks[16] < 1.3 * peaks[2] + 2 * 16 * 4 * 16 ** 2 * 8 + 4 * (16 * 4) ** 2 * 8
    assert peaks[16] < 0.5 * sum(w.nbytes for w in W) * 2       # a float64 copy of the weights is 4x this


@pytest.mark.parametrize("bad", [0, -5, 1.5, "1GB", True, None, float("nan")])
def test_work_bytes_must_be_a_positive_integer(bad):
    with pytest.raises(ValueError, match=r"work_bytes must be a positive integer number of bytes; got "):
        all_composition_scores(*weights((2, 1, 4, 2), np.float64), "K", work_bytes=bad)


def test_work_bytes_takes_integral_floats_and_numpy_integers():
    W = weights((3, 2, 8, 3), np.float64)
    want = all_composition_scores(*W, "K")
    for budget in (2e3, np.int64(2000)):
        np.testing.assert_allclose(all_composition_scores(*W, "K", work_bytes=budget), want, rtol=1e-12)


def test_progress_must_be_callable():
    with pytest.raises(ValueError, match=r"progress must be a callable progress\(done, total\) or None; got int"):
        all_composition_scores(*weights((2, 1, 4, 2), np.float64), "K", progress=3)


def test_numpy_path_unchanged_at_the_default_budget():
    """One block: the products are those of the unblocked engine, so float32 scores are bit-identical
    to a fresh computation with a budget far above the model, and match float64 to 1e-5."""
    W = weights((4, 3, 96, 24), np.float32)
    got = all_composition_scores(*W, "QKV")
    np.testing.assert_array_equal(got, all_composition_scores(*W, "QKV", work_bytes=2**40))
    want = all_composition_scores(*(w.astype(np.float64) for w in W), "QKV")
    mask = want > 0
    assert np.max(np.abs(got[mask] / want[mask] - 1)) < 1e-5


def test_memmap_inputs_are_read_in_place(tmp_path):
    W = weights((3, 2, 16, 4), np.float32)
    maps = []
    for i, w in enumerate(W):
        m = np.lib.format.open_memmap(tmp_path / f"w{i}.npy", mode="w+", dtype=w.dtype, shape=w.shape)
        m[...] = w
        maps.append(m)
    np.testing.assert_array_equal(all_composition_scores(*maps, "K", work_bytes=1),
                                  all_composition_scores(*W, "K", work_bytes=1))


def test_the_import_named_in_the_contract_is_the_engine():
    from headspace.composition import all_composition_scores as f
    assert f is HP.all_composition_scores and C.all_composition_scores is f
    assert "all_composition_scores" in C.__all__
    with pytest.raises(AttributeError):
        C.no_such_name  # noqa: B018


def test_other_libraries_take_the_array_api_path():
    class Fake:
        def __array_namespace__(self):
            raise AssertionError("not reached")
    assert HP._is_numpy(np.ones(2)) and HP._is_numpy([[1.0]]) and not HP._is_numpy(Fake())


def test_finiteness_is_checked_in_chunks_with_the_full_index(monkeypatch):
    import headspace.validate as V
    monkeypatch.setattr(V, "_CHUNK", 7)
    x = np.zeros((3, 4, 5))
    x[2, 1, 3] = np.nan
    assert _first_nonfinite(x) == (2, 1, 3)                      # contiguous: flat slices
    assert _first_nonfinite(np.transpose(x, (2, 0, 1))) == (3, 2, 1)     # strided: slabs of axis 0
    assert _first_nonfinite(x[:, ::2]) is None                  # every other row misses it
    assert _first_nonfinite(np.asfortranarray(x)[::-1]) == (0, 1, 3)
    y = np.zeros(40)[::2]
    y[19] = np.inf
    assert _first_nonfinite(y) == (19,)
    with pytest.raises(ValueError, match=r"W must be finite; got nan at index \(2, 1, 3\)"):
        as_array("W", x)


def test_nan_reported_with_its_index_in_a_large_input():
    W = list(weights((2, 2, 512, 8), np.float32))
    W[2] = np.ascontiguousarray(np.swapaxes(np.swapaxes(W[2], 2, 3).copy(), 2, 3))  # same values, strided copy
    W[2][1, 1, 511, 7] = np.inf
    with pytest.raises(ValueError, match=r"W_V must be finite; got inf at index \(1, 1, 511, 7\)"):
        all_composition_scores(*W, "K")


def test_streamed_random_baseline_draws_the_same_numbers(monkeypatch):
    for args in (((40, 30), (30, 20), None), ((60, 50), (50, 40), (7, 9))):
        RB._random_baseline.cache_clear()
        want = C.random_baseline(*args[:2], ranks=args[2], samples=8, seed=3)
        monkeypatch.setattr(RB, "_DRAW_BYTES", 0)
        RB._random_baseline.cache_clear()
        got = C.random_baseline(*args[:2], ranks=args[2], samples=8, seed=3)
        monkeypatch.undo()
        RB._random_baseline.cache_clear()
        assert got[0] == pytest.approx(want[0], rel=1e-13) and got[1] == pytest.approx(want[1], rel=1e-10)
