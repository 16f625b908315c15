"""The all-pairs engine: composition scores of every earlier head against every later head.

``headspace.composition`` defines each metric on one pair of dense matrices; this module computes
a whole model's ``[n_layers, n_heads, n_layers, n_heads]`` table of them without forming any
d_model x d_model matrix: each score needs only d_head x d_head blocks, and all the blocks of one
earlier layer against many later heads are one BLAS matmul. Large models are done in blocks of
later layers within a working-memory budget, with progress reports.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> W_Q, W_K, W_V = rng.normal(size=(3, 3, 2, 8, 4))
>>> W_O = rng.normal(size=(3, 2, 4, 8))
>>> a = all_composition_scores(W_Q, W_K, W_V, W_O, "K")
>>> b = all_composition_scores(W_Q, W_K, W_V, W_O, "K", work_bytes=1)   # one later layer at a time
>>> bool(np.allclose(a, b)), a.shape
(True, (3, 2, 3, 2))
"""

from __future__ import annotations

import numpy as np

from headspace._linalg import _T, _factor, _gram, _mm, _rank_mask, _sq_norm, _sv
from headspace.composition import (
    _OPTIONS, MODES, _embedding_gram, composition_score,  # noqa: F401 (composition_score: doctests)
    _float_array, _metric_name, _mode_name, _options, _unembedding_factor,
    _whitening, random_baseline,
)

__all__ = ["all_composition_scores", "WORK_BYTES"]


def _heads(W_Q, W_K, W_V, W_O):
    Q = _float_array("W_Q", W_Q, ndim=4)
    n_layers, n_heads, d_model, d_head = Q.shape
    want = {"W_K": (n_layers, n_heads, d_model, d_head), "W_V": (n_layers, n_heads, d_model, d_head),
            "W_O": (n_layers, n_heads, d_head, d_model)}
    out = [Q]
    for name, value in zip(("W_K", "W_V", "W_O"), (W_K, W_V, W_O)):
        arr = _float_array(name, value, ndim=4)
        if arr.shape != want[name]:
            axes = "[n_layers, n_heads, d_head, d_model]" if name == "W_O" else \
                "[n_layers, n_heads, d_model, d_head]"
            raise ValueError(f"{name} must have shape {axes} = {list(want[name])} to match W_Q "
                             f"{list(Q.shape)}; got {list(arr.shape)}")
        out.append(arr)
    dtype = np.float32 if all(a.dtype == np.float32 for a in out) else np.float64
    return [a.astype(dtype, copy=False) for a in out]


def _check_heads(sq_norm, what, layers):
    bad = np.argwhere(sq_norm[layers] <= 0)
    if len(bad):
        l, h = int(bad[0][0]) + layers.start, int(bad[0][1])
        raise ValueError(f"{what} of layer {l}, head {h} is zero (norm 0), so its scores are 0/0; "
                         f"expected a nonzero matrix")


#: Working memory the engine may use beyond its inputs (bytes), unless ``work_bytes`` says otherwise.
WORK_BYTES = 512 * 2**20


def _cross_sq_norms(Lt_of, Rt_of, n_layers, M, work_bytes=WORK_BYTES, progress=None):
    """``out[m, l1, h1, l2, h2] = ||Lt_of(l1)[h1] @ Rt_of(m, l2)[h2]||_F^2`` for ``l2 > l1``, else 0.

    ``Lt_of(l)`` gives layer l's [n_heads, a, d_model] and ``Rt_of(m, l)`` mode m's [n_heads, d_model,
    b], computed when needed, so only a block of later layers is held at once: each block's readers
    are stacked side by side, and every earlier layer meets them in one BLAS matmul. Blocks hold as
    many later layers as ``work_bytes`` allows. Squares are summed over a in the working dtype (a <=
    d_head terms), then over b in float64. ``progress(done, total)`` after each (earlier layer,
    block) matmul.
    """
    L0 = Lt_of(0)
    R0 = Rt_of(0, n_layers - 1)
    n_heads, a, d = L0.shape
    b = R0.shape[-1]
    dtype = np.result_type(L0, R0)
    col = M * n_heads * b                                       # columns per later layer
    per_layer = (d + n_heads * a) * col * dtype.itemsize       # its readers + its share of the product
    fixed = n_heads * a * d * dtype.itemsize                   # one earlier layer's writers
    per_block = max(1, min(n_layers - 1, (work_bytes - fixed) // per_layer))
    blocks = [(lo, min(lo + per_block, n_layers)) for lo in range(1, n_layers, per_block)]
    total, done = sum(hi - 1 for _, hi in blocks), 0
    out = np.zeros((M, n_layers, n_heads, n_layers, n_heads))
    # one buffer for every product: fresh 10-100 MB arrays cost page faults each time
    buf = np.empty(n_heads * a * per_block * col, dtype=dtype)
    for lo, hi in blocks:
        right = np.empty((d, hi - lo, M, n_heads, b), dtype=dtype)
        for l2 in range(lo, hi):
            for m in range(M):
                right[:, l2 - lo, m] = np.moveaxis(Rt_of(m, l2), 1, 0)
        right = right.reshape(d, (hi - lo) * col)
        for l1 in range(hi - 1):
            start = max(lo, l1 + 1)
            n = hi - start
            Z = buf[:n_heads * a * n * col].reshape(n_heads * a, n * col)
            np.matmul(np.ascontiguousarray(Lt_of(l1)).reshape(n_heads * a, d), right[:, (start - lo) * col:], out=Z)
            Z = Z.reshape(n_heads, a, n * col)
            cols = np.einsum("hab,hab->hb", Z, Z)                   # sum over a, no temporary
            sq = cols.reshape(n_heads, n, M, n_heads, b).sum(-1, dtype=np.float64)
            out[:, l1, :, start:hi] = sq.transpose(2, 0, 1, 3)
            done += 1
            if progress is not None:
                progress(done, total)
    return out


def _is_plain(x) -> bool:
    """Nested lists, tuples and numbers go through numpy; anything else that is not an ndarray but
    has an array namespace (torch, CuPy, ...) takes the array-API path."""
    return isinstance(x, (list, tuple, int, float)) or not (hasattr(x, "__array_namespace__") or
                                                            type(x).__module__.split(".")[0] in ("torch", "cupy", "jax"))


def _array_api_scores(W_Q, W_K, W_V, W_O, mode, metric, kw, progress):
    """Frobenius scores for torch, CuPy or any array-API arrays, computed where they live (a GPU).

    The same algebra as the numpy path without its BLAS tuning: with Gram matrices ``G_P = P^T P``
    and ``G_Y = Y^T Y`` (d_head x d_head) and ``M = Z^T X`` for each (earlier, later) pair, the
    numerator ``||P Z^T X Y^T||_F^2 = sum((G_P M) * (M G_Y))``, one matmul per earlier layer
    against every later head. Returns an array of the inputs' namespace.
    """
    if metric != "frobenius" or kw:
        raise ValueError(f"metric {metric!r} (with keywords {sorted(kw)}) accepts numpy arrays only; arrays "
                         f"from other libraries work with metric 'frobenius' and no keywords (got "
                         f"{type(W_Q).__module__}.{type(W_Q).__name__})")
    try:
        from array_api_compat import array_namespace
    except ImportError:
        raise ValueError(f"W_Q is a {type(W_Q).__module__}.{type(W_Q).__name__}; scoring non-numpy arrays "
                         f"needs the array-api-compat package (pip install array-api-compat)") from None
    xp = array_namespace(W_Q, W_K, W_V, W_O)
    single = isinstance(mode, str) and mode in MODES
    modes = (mode,) if single else tuple(_mode_name(m) for m in mode)
    n_layers, n_heads, d_model, d_head = W_Q.shape
    for name, w, want in (("W_K", W_K, W_Q.shape), ("W_V", W_V, W_Q.shape),
                          ("W_O", W_O, (n_layers, n_heads, d_head, d_model))):
        if tuple(w.shape) != tuple(want):
            raise ValueError(f"{name} must have shape {list(want)} to match W_Q {list(W_Q.shape)}; got {list(w.shape)}")
    T = lambda x: xp.matrix_transpose(x)  # noqa: E731
    G_P = T(W_V) @ W_V                                   # [L, H, a, a]
    Z = T(W_O)                                           # [L, H, d, a]
    nl = xp.sum(G_P * (T(Z) @ Z), axis=(-2, -1))         # ||P Z^T||^2 = tr(G_P G_Z)
    outs, total = [], len(modes) * (n_layers - 1)
    for i, m in enumerate(modes):
        X, Y = {"Q": (W_Q, W_K), "K": (W_K, W_Q), "V": (W_V, Z)}[m]
        G_Y = T(Y) @ Y                                   # [L, H, b, b]
        nr = xp.sum((T(X) @ X) * G_Y, axis=(-2, -1))     # ||X Y^T||^2
        b = X.shape[-1]
        out = xp.zeros((n_layers, n_heads, n_layers, n_heads), dtype=xp.float64 if W_Q.dtype == xp.float64
                       else W_Q.dtype, device=getattr(W_Q, "device", None))
        rows = []
        for l1 in range(n_layers - 1):
            n = n_layers - 1 - l1
            later = xp.reshape(xp.permute_dims(X[l1 + 1:], (2, 0, 1, 3)), (d_model, n * n_heads * b))
            M = xp.reshape(T(Z[l1]) @ later, (n_heads, d_head, n, n_heads, b))       # [h1, a, l2, h2, b]
            left = xp.reshape(G_P[l1] @ xp.reshape(M, (n_heads, d_head, -1)), M.shape)
            right = xp.permute_dims(M, (2, 3, 0, 1, 4)) @ G_Y[l1 + 1:][:, :, None]    # [l2, h2, h1, a, b]
            num = xp.sum(xp.permute_dims(left, (2, 3, 0, 1, 4)) * right, axis=(-2, -1))  # [l2, h2, h1]
            den = nl[l1][None, None, :] * nr[l1 + 1:][:, :, None]
            rows.append((l1, xp.permute_dims(xp.sqrt(num / den), (2, 0, 1))))        # [h1, l2, h2]
            if progress is not None:
                progress(i * (n_layers - 1) + l1 + 1, total)
        for l1, r in rows:
            out[l1, :, l1 + 1:, :] = xp.astype(r, out.dtype)
        outs.append(out)
    return outs[0] if single else xp.stack(outs)


def _per_layer(make, n_layers, work_bytes):
    """``(layer -> array, squared norms [n_layers, n_heads])`` for per-layer factors ``make(l)``:
    all computed at once and kept if they fit a quarter of ``work_bytes``, else recomputed on use."""
    first = make(0)
    if first.nbytes * n_layers <= work_bytes // 4:
        every = [first] + [make(l) for l in range(1, n_layers)]
        return every.__getitem__, np.stack([_sq_norm(x) for x in every])
    return make, np.stack([_sq_norm(first)] + [_sq_norm(make(l)) for l in range(1, n_layers)])


def _factored(W_Q, W_K, W_V, W_O, mode):
    """Each head as two factors: left ``A = P @ Z.T`` (= W_V W_O), right ``B = X @ Y.T``."""
    P, Z = W_V, _T(W_O)
    X, Y = {"Q": (W_Q, W_K), "K": (W_K, W_Q), "V": (W_V, _T(W_O))}[mode]
    return P, Z, X, Y


def all_composition_scores(W_Q, W_K, W_V, W_O, mode, metric="frobenius", **kw):
    r"""Scores of every earlier head against every later head: ``[n_layers, n_heads, n_layers, n_heads]``.

    ``out[l1, h1, l2, h2]`` scores the earlier head's OV (``W_V @ W_O`` of layer l1, head h1) against
    the later head's ``W_Q @ W_K.T`` (mode "Q"), ``W_K @ W_Q.T`` ("K") or ``W_V @ W_O`` ("V"); it is
    0 unless ``l2 > l1``. With ``metric="frobenius"`` this equals TransformerLens's
    ``HookedTransformer.all_composition_scores(mode)``. Weights in TransformerLens layout:
    ``W_Q, W_K, W_V [n_layers, n_heads, d_model, d_head]``, ``W_O [n_layers, n_heads, d_head, d_model]``.
    Keywords as ``composition_score``; ``token`` takes ``W_E`` and, for V, ``W_U``; ``whitened``
    takes ``W_E`` or ``gram`` (their mode is ``mode``); both are ``frobenius`` of the model moved to
    the basis where the reference Gram matrix is the identity, so they cost what it costs; and
    ``frobenius_baseline`` draws Gaussian factors of the heads' shapes. ``mode`` may also be a
    sequence such as ``"QKV"`` or ``("Q", "V")``: the result is then stacked,
    ``[len(mode), n_layers, n_heads, n_layers, n_heads]``, and shares the work on the earlier heads.

    Nothing of size d_model x d_model is formed per head: each score needs the d_head x d_head
    blocks ``F_V W_O X F_Y^T`` (F: d_head-sized Gram factors), one matmul per earlier layer against
    all later heads. float32 weights are multiplied in float32 and summed in float64.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> W_Q, W_K, W_V = rng.normal(size=(3, 2, 1, 4, 2))
    >>> W_O = rng.normal(size=(2, 1, 2, 4))
    >>> s = all_composition_scores(W_Q, W_K, W_V, W_O, "Q")
    >>> s.shape, float(s[1, 0, 0, 0]), bool(np.isclose(s[0, 0, 1, 0],
    ...     composition_score(W_V[0, 0] @ W_O[0, 0], W_Q[1, 0] @ W_K[1, 0].T)))
    ((2, 1, 2, 1), 0.0, True)
    """
    work_bytes = kw.pop("work_bytes", WORK_BYTES)
    progress = kw.pop("progress", None)
    if isinstance(work_bytes, bool) or not isinstance(work_bytes, (int, np.integer)) or work_bytes < 1:
        raise ValueError(f"work_bytes must be a positive integer number of bytes; got {work_bytes!r}")
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable progress(done, total) or None; got {type(progress).__name__}")
    if not all(isinstance(w, np.ndarray) or _is_plain(w) for w in (W_Q, W_K, W_V, W_O)):
        return _array_api_scores(W_Q, W_K, W_V, W_O, mode, metric, kw, progress)
    W_Q, W_K, W_V, W_O = _heads(W_Q, W_K, W_V, W_O)
    single = isinstance(mode, str) and mode in MODES
    if single:
        modes = (mode,)
    elif isinstance(mode, (str, list, tuple)) and len(mode) > 0:
        modes = tuple(_mode_name(m) for m in mode)
    else:
        raise ValueError(f"mode must be one of 'Q', 'K', 'V' or a sequence of them; got {mode!r}")
    metric = _metric_name(metric)
    # token's and whitened's mode is the positional mode; the baseline's factor ranks are the heads' d_head
    allowed = {"token": ("W_E", "W_U", "mode"), "whitened": ("W_E", "gram", "mode"),
               "frobenius_baseline": ("samples", "seed")}.get(metric, _OPTIONS[metric])
    kw = _options(metric, dict(kw, mode=modes[0]) if metric in ("token", "whitened") else kw, allowed)
    if metric == "subspace":
        out = np.stack([_one_mode(W_Q, W_K, W_V, W_O, m, metric, kw) for m in modes])
    elif metric in ("token", "whitened"):
        out = _basis_free(W_Q, W_K, W_V, W_O, modes, metric, kw, work_bytes, progress)
    else:
        out = _frobenius_family(W_Q, W_K, W_V, W_O, modes, metric, kw, None, work_bytes, progress)
    return out[0] if single else out


def _one_mode(W_Q, W_K, W_V, W_O, mode, metric, kw):
    n_layers = W_Q.shape[0]
    P, Z, X, Y = _factored(W_Q, W_K, W_V, W_O, mode)
    return _all_subspace(P, Z, X, Y, kw.get("rtol"), slice(0, n_layers - 1), slice(1, n_layers))


def _basis_free(W_Q, W_K, W_V, W_O, modes, metric, kw, work_bytes=WORK_BYTES, progress=None):
    """token and whitened: frobenius of the whole model moved to the basis where the reference Gram
    matrix is I (readers ``F W``, writers ``W F^-1``); token's V readers end in ``W_U`` instead."""
    d_model = W_Q.shape[2]
    if metric == "whitened":
        F = _whitening("gram", kw.get("gram"), kw.get("W_E"), d_model)
    else:
        F = _embedding_gram(kw["W_E"], d_model)
    Fi = np.linalg.inv(F)
    v_read = None
    if metric == "token" and "V" in modes:
        if kw.get("W_U") is None:
            raise ValueError("metric 'token' with mode 'V' needs W_U [d_model, d_vocab]; got none")
        v_read = W_O @ _T(_unembedding_factor(kw["W_U"], d_model))   # ||A B W_U|| = ||A B FU^T||
    return _frobenius_family(F @ W_Q, F @ W_K, F @ W_V, W_O @ Fi, modes, "frobenius", {}, v_read, work_bytes,
                             progress)


_READS = {"Q": "W_Q @ W_K.T", "K": "W_K @ W_Q.T", "V": "W_V @ W_O"}


def _frobenius_family(W_Q, W_K, W_V, W_O, modes, metric, kw, v_read=None, work_bytes=WORK_BYTES, progress=None):
    """frobenius, frobenius_baseline and svd_bound for several modes: the earlier heads' whitened
    OV factors are computed once and meet every mode's later heads in one matmul per layer.
    ``v_read`` [n_layers, n_heads, d_head, p] replaces the V readers' output side ``W_O``.
    The d_head x d_model factors are input-sized; when they do not fit a quarter of ``work_bytes``
    they are computed per layer, when a block needs them, instead of all at once."""
    n_layers, n_heads, d_model, d_head = W_Q.shape
    early, late = slice(0, n_layers - 1), slice(1, n_layers)
    P, Z = W_V, _T(W_O)
    FP = _factor(_gram(P)).astype(P.dtype)
    # F_P Z^T [d_head, d_model] per head: ||Lt|| = ||P Z^T||
    Lt_of, nl = _per_layer(lambda l: _mm(FP[l], _T(Z[l])), n_layers, work_bytes)
    _check_heads(nl, "W_V @ W_O", early)
    Rt_ofs, nrs, FYs = [], [], []
    for mode in modes:
        _, _, X, Y = _factored(W_Q, W_K, W_V, W_O, mode)
        if mode == "V" and v_read is not None:
            Y = _T(v_read)
        FY = _factor(_gram(Y))
        FYt = _T(FY).astype(X.dtype)
        # X F_Y^T [d_model, d_head] per head: ||Rt|| = ||X Y^T||
        Rt_of, nr = _per_layer(lambda l, X=X, FYt=FYt: _mm(X[l], FYt[l]), n_layers, work_bytes)
        _check_heads(nr, _READS[mode], late)
        Rt_ofs.append(Rt_of)
        nrs.append(nr)
        FYs.append(FY)
    nums = _cross_sq_norms(Lt_of, lambda m, l: Rt_ofs[m](l), n_layers, len(modes), work_bytes, progress)
    outs = []
    for mode, num, nr, FY in zip(modes, nums, nrs, FYs):
        if metric == "svd_bound":
            _, _, X, _ = _factored(W_Q, W_K, W_V, W_O, mode)
            sl = _sv(FP @ _T(_factor(_gram(Z))))   # sigma(P Z^T) = sigma(F_P F_Z^T)
            sr = _sv(_factor(_gram(X)) @ _T(FY))
            den = np.einsum("ak,bk->ab", sl.reshape(-1, d_head) ** 2, sr.reshape(-1, d_head) ** 2)
            den = den.reshape(n_layers, n_heads, n_layers, n_heads)
            out = np.zeros_like(num)
            mask = _later(num.shape)
            out[mask] = np.minimum(np.sqrt(num[mask] / den[mask]), 1.0)
        else:
            out = _finish(num, nl, nr)
            if metric == "frobenius_baseline":
                mean, _ = random_baseline((d_model, d_model), (d_model, d_model), ranks=(d_head, d_head),
                                          samples=kw.get("samples", 64), seed=kw.get("seed", 0))
                out[_later(out.shape)] -= mean
        outs.append(out)
    return np.stack(outs)


def _later(shape):
    """Boolean mask [n_layers, n_heads, n_layers, n_heads]: True where the second layer is after the first."""
    idx = np.arange(shape[0])
    return np.broadcast_to((idx[:, None] < idx[None, :])[:, None, :, None], shape)


def _finish(num, nl, nr):
    mask = _later(num.shape)
    den = nl[:, :, None, None] * nr[None, None]
    out = np.zeros_like(num)
    out[mask] = np.sqrt(num[mask] / den[mask])
    return out


def _all_subspace(P, Z, X, Y, rtol, early, late):
    """Subspace scores through thin QR factors: ranks need singular values accurate to eps."""
    n_layers, n_heads, d_model, d_head = X.shape
    qp, rp = np.linalg.qr(P.astype(np.float64))
    qz, rz = np.linalg.qr(Z.astype(np.float64))
    qx, rx = np.linalg.qr(X.astype(np.float64))
    qy, ry = np.linalg.qr(Y.astype(np.float64))
    _, sl, vlh = np.linalg.svd(rp @ _T(rz))    # A = qp (rp rz^T) qz^T
    ur, sr, _ = np.linalg.svd(rx @ _T(ry))     # B = qx (rx ry^T) qy^T
    wl = _rank_mask(sl, d_model, rtol)
    wr = _rank_mask(sr, d_model, rtol)
    rank_l = wl.sum(-1)
    _check_heads(rank_l.astype(float), "W_V @ W_O", early)
    _check_heads(wr.sum(-1).astype(float), "the reading matrix", late)
    Lt = _mm(vlh * wl[..., :, None], _T(qz))    # orthonormal rows spanning W (zero rows past the rank)
    Rt = _mm(qx, ur * wr[..., None, :])         # orthonormal columns spanning R
    num = _cross_sq_norms(Lt.__getitem__, lambda m, l: Rt[l], n_layers, 1)[0]
    out = num / np.where(rank_l > 0, rank_l, 1)[:, :, None, None]
    return np.clip(out, 0.0, 1.0)
