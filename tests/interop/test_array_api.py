"""all_composition_scores on torch tensors (the array-API path a GPU user takes) equals the numpy path."""

import numpy as np
import pytest
import torch

from headspace.composition import all_composition_scores


def weights(seed, dtype, shape=(3, 4, 24, 6)):
    rng = np.random.default_rng(seed)
    L, H, d, a = shape
    W_Q, W_K, W_V = (rng.normal(size=(L, H, d, a)).astype(dtype) for _ in range(3))
    return W_Q, W_K, W_V, rng.normal(size=(L, H, a, d)).astype(dtype)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize("mode", ["Q", "K", "V", "QKV"])
def test_torch_equals_numpy(dtype, rtol, mode):
    W = weights(0, dtype)
    want = all_composition_scores(*W, mode)
    done = []
    got = all_composition_scores(*(torch.from_numpy(w) for w in W), mode, progress=lambda d, t: done.append((d, t)))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.from_numpy(W[0]).dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol * 1e-3)
    assert done[-1][0] == done[-1][1] and [d for d, _ in done] == sorted(d for d, _ in done)


def test_other_metrics_say_which_accept_torch():
    W = [torch.from_numpy(w) for w in weights(1, np.float64)]
    with pytest.raises(ValueError, match=r"metric 'svd_bound' .* accepts numpy arrays only; arrays from other "
                                         r"libraries work with metric 'frobenius'"):
        all_composition_scores(*W, "K", "svd_bound")
    with pytest.raises(ValueError, match=r"W_O must have shape \[3, 4, 6, 24\] to match W_Q"):
        all_composition_scores(W[0], W[1], W[2], W[3][:, :, :, :5], "K")
