"""What every composition metric takes, checked once: the metric and mode names, each metric's
keywords, the weight arrays, and the reference basis that ``token`` and ``whitened`` score in.

Both the metrics on one pair of heads (``headspace.composition``) and the all-pairs engine
(``headspace.head_pairs``) read their arguments through here, so a bad argument gets the same
message from either, and the two modules import this one rather than each other.

>>> metric_name("frobenius"), mode_name("K")
('frobenius', 'K')
>>> check_options("token", {"mode": "Q"})
Traceback (most recent call last):
...
ValueError: metric 'token' needs W_E [d_vocab, d_model]; got none
"""

from __future__ import annotations

import numpy as np

from headspace._linalg import _EPS, _T, _factor, _gram_rows
from headspace.validate import as_array

#: Metric names, in the order demos list them.
METRICS = ("frobenius", "frobenius_baseline", "svd_bound", "subspace", "token", "whitened")
#: Composition modes: which input of the later head reads the earlier head's output.
MODES = ("Q", "K", "V")


def float_array(name, value, ndim=None, min_ndim=None):
    """``value`` as a finite float32 (if it is one) or float64 array, its dimensions checked."""
    arr = as_array(name, value, dtype=None)
    if arr.dtype != np.float32:
        arr = arr.astype(np.float64, copy=False)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions; got shape {list(arr.shape)}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions [..., rows, cols]; "
                         f"got shape {list(arr.shape)}")
    return arr


def metric_name(metric):
    """``metric``, if it is one of ``METRICS``."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(repr(m) for m in METRICS)}; got {metric!r}")
    return metric


def mode_name(mode):
    """``mode``, if it is one of ``MODES``."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of 'Q', 'K', 'V'; got {mode!r}")
    return mode


#: The keywords each metric accepts.
OPTIONS = {"frobenius": (), "frobenius_baseline": ("samples", "seed", "ranks"), "svd_bound": (),
           "subspace": ("rtol",), "token": ("W_E", "W_U", "mode"), "whitened": ("W_E", "gram", "mode")}


def check_options(metric, kw, allowed=None):
    """``kw``, if ``metric`` accepts each keyword (``allowed``, default ``OPTIONS[metric]``) and has those it needs."""
    allowed = OPTIONS[metric] if allowed is None else allowed
    for key in kw:
        if key not in allowed:
            raise ValueError(f"unknown keyword {key!r} for metric {metric!r}; expected one of "
                             f"{list(allowed) or 'none'}")
    if metric in ("token", "whitened") and "mode" not in kw:
        raise ValueError(f"metric {metric!r} needs mode ('Q', 'K' or 'V': how the reader reads); got none")
    if metric == "token" and "W_E" not in kw:
        raise ValueError("metric 'token' needs W_E [d_vocab, d_model]; got none")
    return kw


# --------------------------------------------------------------------------- the reference basis

def basis_factor(name, gram, d_model):
    """F [..., d_model, d_model] with ``F.T @ F == gram``: the change of basis that whitens ``gram``.

    ``gram`` must be symmetric positive definite; a singular or indefinite one raises, naming
    ``name`` and the ratio of its smallest to largest eigenvalue.
    """
    G = float_array(name, gram, min_ndim=2).astype(np.float64, copy=False)
    if G.shape[-2:] != (d_model, d_model):
        raise ValueError(f"{name} must have shape [d_model={d_model}, d_model={d_model}]; got {list(G.shape)}")
    scale = np.abs(G).max(axis=(-2, -1), keepdims=True)
    if np.any(np.abs(G - _T(G)) > 1e-10 * scale):
        raise ValueError(f"{name} must be symmetric; it differs from its transpose by "
                         f"{float(np.abs(G - _T(G)).max()):.3g}")
    lam = np.linalg.eigvalsh(G)
    ratio = lam[..., 0] / np.maximum(lam[..., -1], np.finfo(np.float64).tiny)
    if np.any(ratio <= d_model * _EPS * 16):
        raise ValueError(f"{name} must be positive definite (full rank d_model={d_model}); its smallest/largest "
                         f"eigenvalue is {float(np.min(ratio)):.3g}")
    return _T(np.linalg.cholesky(G))


def embedding_factor(W_E, d_model):
    """F [..., d_model, d_model] with ``F.T @ F == W_E.T @ W_E``; W_E must have full column rank."""
    E = float_array("W_E", W_E, min_ndim=2)
    if E.shape[-1] != d_model:
        raise ValueError(f"W_E must have shape [d_vocab, d_model={d_model}]; got {list(E.shape)}")
    if E.shape[-2] < d_model:
        raise ValueError(f"W_E must have full column rank d_model={d_model} for token space to be defined, "
                         f"so at least d_model rows; got shape {list(E.shape)}")
    try:
        return basis_factor("W_E.T @ W_E", _gram_rows(E), d_model)
    except ValueError as exc:
        raise ValueError(f"W_E must have full column rank d_model={d_model}: {exc}") from None


def unembedding_factor(W_U, d_model):
    """FU [..., d_model, d_model] with ``FU.T @ FU == W_U @ W_U.T`` (any rank)."""
    U = float_array("W_U", W_U, min_ndim=2)
    if U.shape[-2] != d_model:
        raise ValueError(f"W_U must have shape [d_model={d_model}, d_vocab]; got {list(U.shape)}")
    return _factor(_gram_rows(_T(U)))


def reference_factor(name_gram, gram, W_E, d_model):
    """F for ``whitened``: from ``gram`` if given, else from ``W_E.T @ W_E``."""
    if gram is not None and W_E is not None:
        raise ValueError("whitened takes gram or W_E, not both; got both")
    if gram is not None:
        return basis_factor(name_gram, gram, d_model)
    if W_E is None:
        raise ValueError("whitened needs a reference: W_E (its Gram matrix W_E.T @ W_E) or gram; got neither")
    return embedding_factor(W_E, d_model)
