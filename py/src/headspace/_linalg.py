"""Linear-algebra helpers shared by the dense metrics (``composition``) and the all-pairs engine
(``head_pairs``): stacked matmuls that stay fast on a busy machine, float64-accumulated norms, and
d_head-sized Gram factors that stand in for tall factors.

>>> import numpy as np
>>> X = np.arange(6.0).reshape(3, 2)
>>> F = _factor(_gram(X))          # F.T @ F == X.T @ X, so ||A @ F.T|| == ||A @ X.T||
>>> bool(np.allclose(F.T @ F, X.T @ X))
True
"""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(np.float64).eps
_BLAS_MIN = 1 << 15          # m*n*k above which a loop of 2-D BLAS calls beats np.matmul on stacks
_BLAS_ONE_THREAD = 1 << 17   # m*n*k below which OpenBLAS runs a matmul on one thread
_BLAS_BIG = 1 << 24          # m*n*k above which one (multi-threaded) BLAS call per matrix is efficient
_GRAM_ROWS = 1 << 14         # rows per step when a tall matrix's Gram matrix is accumulated in float64


def _T(x):
    return np.swapaxes(x, -1, -2)


def _mm(a, b):
    """``a @ b`` over stacks of matrices.

    Large stacks go through a loop of 2-D BLAS calls, each split so that it stays below OpenBLAS's
    multi-threading threshold: on a busy machine, hundreds of small multi-threaded calls spend most
    of their time waiting for each other (the measurement: docs/decisions/0002-timings.md).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 2 and b.ndim == 2 or a.shape[-2] * a.shape[-1] * b.shape[-1] < _BLAS_MIN:
        return a @ b
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, lead + a.shape[-2:])
    b = np.broadcast_to(b, lead + b.shape[-2:])
    (m, k), n = a.shape[-2:], b.shape[-1]
    out = np.empty(lead + (m, n), dtype=np.result_type(a, b))
    for i in np.ndindex(*lead):
        ai, bi, oi = a[i], b[i], out[i]
        if m * n * k >= _BLAS_BIG:
            np.matmul(ai, bi, out=oi)
        elif m >= n:
            step = max(1, _BLAS_ONE_THREAD // (n * k))
            for r in range(0, m, step):
                oi[r:r + step] = ai[r:r + step] @ bi
        else:
            step = max(1, _BLAS_ONE_THREAD // (m * k))
            for c in range(0, n, step):
                oi[:, c:c + step] = ai @ bi[:, c:c + step]
    return out


def _sq_norm(x):
    """Squared Frobenius norm over the last two axes, accumulated in float64."""
    x = np.asarray(x)
    if x.dtype == np.float32 and x.size > _BLAS_MIN:
        # squares rounded once each (relative 6e-8, no drift), then a pairwise float64 sum
        return np.square(x).reshape(x.shape[:-2] + (-1,)).sum(-1, dtype=np.float64)
    x = x.astype(np.float64, copy=False)
    return np.einsum("...ij,...ij->...", x, x)


def _factor(G):
    """F with ``F.T @ F == G`` for stacked symmetric PSD G (Cholesky, or eigh if G is singular).

    Then ``||X @ F.T||_F^2 == tr(X G X^T)``: a d_head x d_head stand-in for a tall factor.
    """
    G = np.asarray(G, dtype=np.float64)
    try:
        return _T(np.linalg.cholesky(G))
    except np.linalg.LinAlgError:
        lam, U = np.linalg.eigh(G)
        return np.sqrt(np.clip(lam, 0.0, None))[..., :, None] * _T(U)


def _gram(X):
    """``X.T @ X`` over stacks, float64."""
    X = np.asarray(X)
    if X.dtype == np.float32 and X.ndim > 2:
        out = np.empty(X.shape[:-2] + (X.shape[-1], X.shape[-1]))
        for i in np.ndindex(*X.shape[:-2]):
            out[i] = X[i].T @ X[i]  # BLAS syrk in float32; the rounding is far below 1e-6 relative
        return out
    X = X.astype(np.float64, copy=False)
    return _mm(_T(X), X)


def _gram_rows(X):
    """``X.T @ X`` [..., n, n] in float64 for a tall X [..., rows, n] (an embedding, d_vocab rows),
    accumulated over blocks of rows so that no float64 copy of X is made."""
    X = np.asarray(X)
    if X.ndim > 2 or X.shape[0] <= _GRAM_ROWS:
        X = X.astype(np.float64, copy=False)
        return _T(X) @ X
    G = np.zeros((X.shape[1], X.shape[1]))
    for start in range(0, X.shape[0], _GRAM_ROWS):
        part = X[start:start + _GRAM_ROWS].astype(np.float64)
        G += part.T @ part
    return G


def _sv(x):
    return np.linalg.svd(x, compute_uv=False)


def _sv2(x):
    """Squared singular values, descending, as eigenvalues of the smaller Gram matrix (cheaper than
    an SVD; the small ones lose relative accuracy, which a sum dominated by the large ones ignores)."""
    g = x @ _T(x) if x.shape[-2] <= x.shape[-1] else _T(x) @ x
    return np.clip(np.linalg.eigvalsh(g)[..., ::-1], 0.0, None)


def _pad(a, k):
    """Zero-pad the last axis of a to length k."""
    if a.shape[-1] >= k:
        return a[..., :k]
    return np.concatenate([a, np.zeros(a.shape[:-1] + (k - a.shape[-1],))], axis=-1)


def _rank_mask(s, n_max, rtol):
    """Which singular values count as nonzero: ``s > rtol * s_max``; default
    ``rtol = max(shape) * eps`` (as numpy's matrix_rank)."""
    tol = (n_max * _EPS if rtol is None else rtol) * s[..., :1]
    return s > tol
