"""all_composition_scores on torch tensors (the array-API path a GPU user takes) equals the numpy path.

Runs in the benchmark venv (torch, array-api-compat):
    ~/.cache/headspace/venv-bench/bin/python -m pytest tests/interop/test_array_api.py -p no:cacheprovider
"""

import numpy as np
import pytest
import torch

from headspace.composition import all_composition_scores


def weights(seed, dtype, shape=(4, 3, 40, 7)):
    rng = np.random.default_rng(seed)
    L, H, d, a = shape
    W_Q, W_K, W_V = (rng.normal(size=(L, H, d, a)).astype(dtype) for _ in range(3))
    return W_Q, W_K, W_V, rng.normal(size=(L, H, a, d)).astype(dtype)


def relative(got, want):
    mask = want != 0
    assert np.array_equal(mask, got != 0), "zero pattern differs"
    return float(np.max(np.abs(got[mask] / want[mask] - 1)))


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("mode", ["Q", "K", "V", "QKV"])
@pytest.mark.parametrize("work_bytes", [1, 5_000, 2**29])      # one head per block, a few, one block
def test_torch_equals_numpy(dtype, rtol, mode, work_bytes):
    W = weights(0, dtype)
    want = all_composition_scores(*W, mode)
    calls = []
    got = all_composition_scores(*(torch.from_numpy(w) for w in W), mode, work_bytes=work_bytes,
                                 progress=lambda d, t: calls.append((d, t)))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float64 and got.shape == want.shape
    assert relative(got.numpy(), want) < rtol
    done = [d for d, _ in calls]
    assert done[0] > 0 and done[-1] == calls[-1][1] == len(mode) * 3 * 3 * 4 * 3 // 2
    assert all(a < b for a, b in zip(done, done[1:]))


def test_parameters_that_require_grad_are_detached():
    W = weights(2, np.float32)
    T = [torch.nn.Parameter(torch.from_numpy(w)) for w in W]
    got = all_composition_scores(*T, "K")
    assert not got.requires_grad
    assert relative(got.numpy(), all_composition_scores(*W, "K")) < 1e-5


def test_mixed_dtypes_are_scored_in_float64_and_bfloat16_in_float32():
    W = weights(3, np.float64)
    T = [torch.from_numpy(w) for w in W]
    T[1] = T[1].to(torch.float16)
    want = all_composition_scores(W[0], W[1].astype(np.float16), W[2], W[3], "Q")
    assert relative(all_composition_scores(*T, "Q").numpy(), want) < 1e-10
    B = [torch.from_numpy(w).to(torch.bfloat16) for w in W]
    rounded = [b.to(torch.float32).numpy() for b in B]                 # the values bfloat16 holds, exactly
    assert relative(all_composition_scores(*B, "QKV").numpy(), all_composition_scores(*rounded, "QKV")) < 1e-5


def test_other_metrics_say_which_accept_other_libraries():
    W = [torch.from_numpy(w) for w in weights(1, np.float64)]
    for metric in ("svd_bound", "subspace", "token", "whitened", "frobenius_baseline"):
        with pytest.raises(ValueError, match=rf"metric '{metric}' accepts numpy arrays only; arrays from other "
                                             r"libraries \(got torch.Tensor\) work with metric 'frobenius' only"):
            all_composition_scores(*W, "K", metric)
    with pytest.raises(ValueError, match=r"metric must be one of 'frobenius', .*; got 'frob'"):
        all_composition_scores(*W, "K", "frob")


def test_bad_tensors_are_clear_value_errors():
    W = [torch.from_numpy(w) for w in weights(1, np.float64)]
    with pytest.raises(ValueError, match=r"W_O must have shape \[n_layers, n_heads, d_head, d_model\] = "
                                         r"\[4, 3, 7, 40\] to match W_Q \[4, 3, 40, 7\]; got \[4, 3, 7, 5\]"):
        all_composition_scores(W[0], W[1], W[2], W[3][..., :5], "K")
    with pytest.raises(ValueError, match=r"W_K must have 4 dimensions; got shape \[3, 40, 7\]"):
        all_composition_scores(W[0], W[1][0], W[2], W[3], "K")
    nan = W[2].clone()
    nan[2, 1, 5, 3] = float("nan")
    with pytest.raises(ValueError, match=r"W_V must be finite; got nan at index \(2, 1, 5, 3\)"):
        all_composition_scores(W[0], W[1], nan, W[3], "V")
    zero = W[2].clone()
    zero[1, 2] = 0
    with pytest.raises(ValueError, match=r"W_V @ W_O of layer 1, head 2 is zero \(norm 0\)"):
        all_composition_scores(W[0], W[1], zero, W[3], "Q")
    with pytest.raises(ValueError, match=r"W_Q, W_K, W_V and W_O must be arrays of one library; got W_Q "
                                         r"torch.Tensor, W_K numpy.ndarray"):
        all_composition_scores(W[0], W[1].numpy(), W[2], W[3], "K")
    with pytest.raises(ValueError, match=r"mode must be one of 'Q', 'K', 'V'; got 'X'"):
        all_composition_scores(*W, "QX")
    with pytest.raises(ValueError, match=r"unknown keyword 'W_E' for metric 'frobenius'"):
        all_composition_scores(*W, "Q", W_E=torch.eye(40))
