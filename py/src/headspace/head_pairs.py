"""Head pairs: the composition score of every earlier head against every later head of a model.

``headspace.composition`` defines each metric on one pair of dense matrices. This module computes a
whole model's ``[n_layers, n_heads, n_layers, n_heads]`` table of them, the all-pairs engine behind
``headspace.composition.all_composition_scores`` (re-exported there, where docs/contracts.md names it).

The linear-algebra reason it is cheap: each score needs ``||A B||_F`` for a writer ``A = W_V W_O``
and a reader ``B = X Y^T``, both rank d_head. With d_head x d_head Gram factors (``F_P^T F_P = W_V^T
W_V``, ``F_Y^T F_Y = Y^T Y``), ``||A B||_F = ||Lt Rt||_F`` where ``Lt = F_P W_O`` [d_head, d_model]
and ``Rt = X F_Y^T`` [d_model, d_head]: a d_head x d_head block, never a d_model x d_model matrix.
Stacked, the blocks of many writer heads against many reader heads are one BLAS matmul, the same
size as the bare Gram matrix between their output and input directions.

Memory is bounded: the later heads are taken in blocks whose reader factors and products fit
``work_bytes`` (default ``WORK_BYTES``, 512 MiB), and each earlier layer's factors are recomputed
per block from its d_head-sized Gram factor instead of being held for the whole model (which at
Llama-2-7B shapes would be as large as the weights). ``progress(done, total)`` follows the blocks.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> W_Q, W_K, W_V = rng.normal(size=(3, 3, 2, 8, 4))
>>> W_O = rng.normal(size=(3, 2, 4, 8))
>>> a = all_composition_scores(W_Q, W_K, W_V, W_O, "K")
>>> b = all_composition_scores(W_Q, W_K, W_V, W_O, "K", work_bytes=1)  # one head at a time: same scores
>>> bool(np.allclose(a, b)), a.shape
(True, (3, 2, 3, 2))
"""

from __future__ import annotations

import numbers

import numpy as np

from headspace._linalg import _T, _factor, _gram, _mm, _rank_mask, _sq_norm, _sv
from headspace._metric_inputs import (
    MODES, OPTIONS, check_options, embedding_factor, float_array, metric_name, mode_name, reference_factor,
    unembedding_factor,
)
from headspace._random_baseline import random_baseline

__all__ = ["all_composition_scores", "later_mask", "WORK_BYTES"]

#: Working memory (bytes) the blocks of the all-pairs engine may use, unless ``work_bytes`` says otherwise.
WORK_BYTES = 512 * 2**20

_READS = {"Q": "W_Q @ W_K.T", "K": "W_K @ W_Q.T", "V": "W_V @ W_O"}


def all_composition_scores(W_Q, W_K, W_V, W_O, mode, metric="frobenius", *, work_bytes=WORK_BYTES,
                           progress=None, **kw):
    r"""Scores of every earlier head against every later head: ``[n_layers, n_heads, n_layers, n_heads]``.

    ``out[l1, h1, l2, h2]`` scores the earlier head's OV (``W_V @ W_O`` of layer l1, head h1) against
    the later head's ``W_Q @ W_K.T`` (mode "Q"), ``W_K @ W_Q.T`` ("K") or ``W_V @ W_O`` ("V"); it is
    0 unless ``l2 > l1``. With ``metric="frobenius"`` this equals TransformerLens's
    ``HookedTransformer.all_composition_scores(mode)``. Weights in TransformerLens layout:
    ``W_Q, W_K, W_V [n_layers, n_heads, d_model, d_head]``, ``W_O [n_layers, n_heads, d_head, d_model]``.
    Keywords as ``composition_score``; ``token`` takes ``W_E`` and, for V, ``W_U``; ``whitened``
    takes ``W_E`` or ``gram`` (their mode is ``mode``); both are ``frobenius`` in the basis where the
    reference Gram matrix is the identity, and the basis cancels between writer and reader, so only
    the d_head factors and the norms see it; ``frobenius_baseline`` draws Gaussian factors of the
    heads' shapes. ``mode`` may also be a sequence such as ``"QKV"`` or ``("Q", "V")``: the result
    is then stacked, ``[len(mode), n_layers, n_heads, n_layers, n_heads]``, and shares the work on
    the earlier heads. float32 weights are multiplied in float32 and summed in float64; the result
    is float64.

    Memory. Every metric is computed in blocks: ``work_bytes`` (default 512 MiB) bounds the
    reader factors and products of one block and the writer factors in flight. On top of it come
    the d_head x d_head factors of every head (``n_layers n_heads d_head^2`` numbers per side and
    mode: 64 MiB at Llama-2-7B shapes in float32), the result, one layer's temporaries while the
    norms are taken, and for ``token`` and ``whitened`` three d_model x d_model float64 matrices
    (the reference factor, its inverse, ``W_U``'s factor). ``subspace`` works in float64. Inputs are
    read in place (a ``np.memmap`` works) and never copied unless their dtypes differ.

    ``progress(done, total)``, if given, is called after each block product (``done`` grows
    strictly up to ``total``; never for a one-layer model). The unit is head pairs: ``total =
    len(modes) n_heads^2 n_layers (n_layers - 1) / 2``, every (earlier head, later head, mode) whose
    score is computed, so ``done / total`` is the fraction of the flops done.

    Arrays of other libraries (torch, CuPy: anything the Python array API standard covers, through
    the ``array-api-compat`` package, imported only then) are scored where they live, for
    ``metric="frobenius"`` in any mode, with the same blocks; the result is a float64 array of their
    library on their device. They are worked on in float32 (float64 if any is float64 or integer);
    narrower inputs such as bfloat16 stay as they are and are cast a layer at a time. Tensors that
    require grad are detached (the scores are not differentiable). Other metrics need numpy arrays.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> W_Q, W_K, W_V = rng.normal(size=(3, 2, 1, 4, 2))
    >>> W_O = rng.normal(size=(2, 1, 2, 4))
    >>> from headspace.composition import composition_score
    >>> s = all_composition_scores(W_Q, W_K, W_V, W_O, "Q")
    >>> s.shape, float(s[1, 0, 0, 0]), bool(np.isclose(s[0, 0, 1, 0],
    ...     composition_score(W_V[0, 0] @ W_O[0, 0], W_Q[1, 0] @ W_K[1, 0].T)))
    ((2, 1, 2, 1), 0.0, True)
    >>> seen = []                            # progress: head pairs done of the total
    >>> _ = all_composition_scores(W_Q, W_K, W_V, W_O, "QK", progress=lambda d, t: seen.append((d, t)))
    >>> seen
    [(2, 2)]
    """
    work_bytes = _budget(work_bytes)
    if progress is not None and not callable(progress):
        raise ValueError(f"progress must be a callable progress(done, total) or None; got {type(progress).__name__}")
    arrays = (W_Q, W_K, W_V, W_O)
    if not all(_is_numpy(w) for w in arrays):
        return _array_api_scores(arrays, mode, metric, kw, work_bytes, progress)
    W = _heads(*arrays)
    modes, single = _modes(mode)
    metric = metric_name(metric)
    # token's and whitened's mode is the positional mode; the baseline's factor ranks are the heads' d_head
    allowed = {"token": ("W_E", "W_U", "mode"), "whitened": ("W_E", "gram", "mode"),
               "frobenius_baseline": ("samples", "seed")}.get(metric, OPTIONS[metric])
    kw = check_options(metric, dict(kw, mode=modes[0]) if metric in ("token", "whitened") else kw, allowed)
    if metric == "subspace":
        out = _subspace_scores(W, modes, kw.get("rtol"), work_bytes, progress)
    else:
        out = _frobenius_scores(W, modes, metric, kw, work_bytes, progress)
    return out[0] if single else out


# --------------------------------------------------------------------------- input

def _budget(work_bytes):
    if (isinstance(work_bytes, numbers.Real) and not isinstance(work_bytes, bool)
            and float(work_bytes).is_integer() and work_bytes >= 1):
        return int(work_bytes)
    raise ValueError(f"work_bytes must be a positive integer number of bytes; got {work_bytes!r}")


def _is_numpy(x) -> bool:
    """ndarrays, nested lists and numbers take the numpy path; arrays of another library (anything
    with ``__array_namespace__``, or a torch, CuPy or JAX array) take the array-API path."""
    if isinstance(x, np.ndarray):
        return True
    return not (hasattr(x, "__array_namespace__")
                or type(x).__module__.split(".")[0] in ("torch", "cupy", "jax", "jaxlib", "mlx", "dask"))


_AXES = {"W_Q": "[n_layers, n_heads, d_model, d_head]", "W_K": "[n_layers, n_heads, d_model, d_head]",
         "W_V": "[n_layers, n_heads, d_model, d_head]", "W_O": "[n_layers, n_heads, d_head, d_model]"}


def _want(shape_q):
    L, H, d, a = shape_q
    return {"W_K": (L, H, d, a), "W_V": (L, H, d, a), "W_O": (L, H, a, d)}


def _shape_error(name, want, shape_q, shape):
    return ValueError(f"{name} must have shape {_AXES[name]} = {list(want)} to match W_Q {list(shape_q)}; "
                      f"got {list(shape)}")


def _heads(W_Q, W_K, W_V, W_O):
    """The four weight tensors as arrays of one float dtype (float32 if all are, else float64),
    validated; no copy unless a dtype changes."""
    Q = float_array("W_Q", W_Q, ndim=4)
    want = _want(Q.shape)
    out = [Q]
    for name, value in zip(("W_K", "W_V", "W_O"), (W_K, W_V, W_O)):
        arr = float_array(name, value, ndim=4)
        if arr.shape != want[name]:
            raise _shape_error(name, want[name], Q.shape, arr.shape)
        out.append(arr)
    dtype = np.float32 if all(a.dtype == np.float32 for a in out) else np.float64
    return [a.astype(dtype, copy=False) for a in out]


def _modes(mode):
    if isinstance(mode, str) and mode in MODES:
        return (mode,), True
    if isinstance(mode, (str, list, tuple)) and len(mode) > 0:
        return tuple(mode_name(m) for m in mode), False
    raise ValueError(f"mode must be one of 'Q', 'K', 'V' or a sequence of them; got {mode!r}")


# --------------------------------------------------------------------------- the blocked engine

def _plan(n_layers, n_heads, d_model, a, b, n_modes, itemsize, work_bytes, copies=1):
    """How to cut the cross products: ``(keep, heads per writer chunk, reader heads per block)``.

    If everything fits ``work_bytes`` (every writer factor [a, d_model], every reader factor
    [d_model, b] twice (as computed and stacked) and the largest product), it is computed once and
    kept: one block, as small models have. Otherwise writer heads come in chunks of at most a
    quarter of the budget, and each block holds as many reader heads as the rest allows: their
    stacked factors and their columns of the product (``copies`` products where a library cannot
    multiply into a buffer). Never fewer than one head of each.
    """
    units = (n_layers - 1) * n_modes * n_heads
    whole = ((n_layers - 1) * n_heads * a * d_model + 2 * units * d_model * b
             + copies * n_heads * a * units * b) * itemsize
    if whole <= work_bytes:
        return True, n_heads, max(units, 1)
    nh = int(min(n_heads, max(1, work_bytes // 4 // (a * d_model * itemsize))))
    in_flight = (nh * a * d_model + min(n_heads, units) * d_model * b) * itemsize
    per_unit = (d_model + copies * nh * a) * b * itemsize
    return False, nh, int(min(units, max(1, (work_bytes - in_flight) // per_unit)))


def _cross_sq_norms(sides, plan, ops, progress):
    """``out[l1, h1, (l2, m, h2)] = ||sides.lt(l1)[h1] @ sides.rt(m, l2)[h2]||_F^2`` for ``l2 > l1``, else 0.

    Reader heads are numbered in (later layer, mode, head) order from layer 1 on; a block is a run
    of ``plan[2]`` of them, their factors stacked side by side as the columns of one matrix. Every
    earlier layer with a later layer in the block meets it in one matmul per chunk of ``plan[1]``
    writer heads, restricted to the columns of later layers. Squares are summed over a in the
    working dtype (a <= d_head terms), then over b in float64.
    """
    keep, nh, nu = plan
    L, H, d, a, b, M = sides.shape
    MH = M * H
    out = ops.zeros((L, H, L * MH))
    total, done = M * H * H * L * (L - 1) // 2, 0
    if L < 2:
        return out
    right = ops.empty((d, nu * b))
    buf = ops.buffer(nh * a * nu * b)      # one buffer for every product: fresh 100 MB arrays cost page faults
    for u0 in range(MH, L * MH, nu):
        u1 = min(u0 + nu, L * MH)
        u = u0
        while u < u1:                          # runs of heads of one (later layer, mode)
            l2, m, h = u // MH, u // H % M, u % H
            h_end = min(H, h + u1 - u)
            ops.put(right, nu, u - u0, sides.rt(m, l2, h, h_end))
            u += h_end - h
        for l1 in range((u1 - 1) // MH):      # earlier layers with a later layer in this block
            start = max(u0, (l1 + 1) * MH)
            cols = right[:, (start - u0) * b:(u1 - u0) * b]
            for h0 in range(0, H, nh):
                h1 = min(H, h0 + nh)
                out[l1, h0:h1, start:u1] = ops.block(sides.lt(l1, h0, h1), cols, b, buf)
                done += (h1 - h0) * (u1 - start)
                if progress is not None:
                    progress(done, total)
    return out


class _Numpy:
    """The engine's array operations on numpy, tuned for OpenBLAS (see ``_linalg._mm``)."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def factor(self, X):
        """F [..., c, c] float64 with ``F.T @ F == X.T @ X`` for X [..., r, c]."""
        return _factor(_gram(X))

    def cast(self, x):
        return x.astype(self.dtype, copy=False)

    T, mm, sq_norm = staticmethod(_T), staticmethod(_mm), staticmethod(_sq_norm)

    def zeros(self, shape):
        return np.zeros(shape)

    def ones(self, shape):
        return np.ones(shape)

    def empty(self, shape):
        return np.empty(shape, dtype=self.dtype)

    def buffer(self, n):
        return np.empty(n, dtype=self.dtype)

    def put(self, right, nu, j, R):
        """Stack reader factors R [n, d_model, b] as columns j.. of right [d_model, nu * b]."""
        n, d, b = R.shape
        right.reshape(d, nu, b)[:, j:j + n] = np.moveaxis(R, 1, 0)

    def block(self, Lt, cols, b, buf):
        """float64 [n, cols / b]: squared norms of the d_head x b blocks of ``Lt[h] @ cols``."""
        n, a, d = Lt.shape
        Z = buf[:n * a * cols.shape[1]].reshape(n * a, cols.shape[1])
        np.matmul(np.ascontiguousarray(Lt).reshape(n * a, d), cols, out=Z)
        Z = Z.reshape(n, a, -1)
        sq = np.einsum("hab,hab->hb", Z, Z)                          # sum over a, no temporary
        return sq.reshape(n, -1, b).sum(-1, dtype=np.float64)

    def first_bad(self, sq_norm):
        bad = np.argwhere(sq_norm <= 0)
        return (int(bad[0][0]), int(bad[0][1])) if len(bad) else None


def _check_heads(ops, sq_norm, what, layers):
    bad = ops.first_bad(sq_norm[layers])
    if bad is not None:
        raise ValueError(f"{what} of layer {bad[0] + layers.start}, head {bad[1]} is zero (norm 0), so its "
                         f"scores are 0/0; expected a nonzero matrix")


# --------------------------------------------------------------------------- frobenius family

def _times(W, M):
    """``W @ M`` for a layer's W [n_heads, r, d_model] and M [d_model, c], as one BLAS call."""
    return (W.reshape(-1, W.shape[-1]) @ M).reshape(W.shape[:-1] + (M.shape[-1],))


class _FrobeniusFactors:
    """Per-layer factors of the frobenius family, with every head's norm.

    Writer ``Lt = F_P W_O`` [d_head, d_model] (``F_P^T F_P = W_V^T W_V``), reader ``Rt = X F_Y^T``
    [d_model, d_head] (``F_Y^T F_Y = Y^T Y``): ``||A B|| = ||Lt Rt||``, ``||A|| = ||Lt||``, ``||B|| =
    ||Rt||``. The d_head factors ``F_P``, ``F_Y^T`` of every head are kept (small); ``Lt`` and ``Rt``
    are kept only if ``keep``, else recomputed from them when a block needs them.

    In another residual basis (``basis = (F, F^-1, FU)``: token, whitened) the writer is
    ``F W_V W_O F^-1`` and the reader ``F X Y^T F^T`` (Q, K), ``F W_V W_O F^-1`` (whitened V) or
    ``F W_V W_O FU^T`` (token V). ``F^-1 F`` cancels in the product, so the cross term is that of the
    original weights with the basis's d_head factors; only those factors and the norms need the
    d_model x d_model transforms, once per layer.
    """

    def __init__(self, W, modes, ops, keep, basis=None, svd=False):
        W_Q, W_K, W_V, W_O = W
        L, H, d, dh = W_Q.shape
        self.shape = (L, H, d, dh, dh, len(modes))
        self.ops, self.keep, self.W_O = ops, keep, W_O
        self.X = [{"Q": W_Q, "K": W_K, "V": W_V}[m] for m in modes]
        self.SW, self.SR = {}, [{} for _ in modes]
        self.memo_lt, self.memo_rt = {}, {}
        F, Fi, FU = basis if basis is not None else (None, None, None)
        early, late = slice(0, L - 1), slice(1, L)
        self.nl = ops.ones((L, H))
        self.sl2 = np.ones((L, H, dh)) if svd else None
        for l in range(L - 1):
            P = W_V[l] if F is None else np.matmul(F, W_V[l])
            FP = ops.factor(P)                                        # float64 [H, dh, dh]
            self.SW[l] = ops.cast(FP)
            Lt = ops.mm(self.SW[l], ops.cast(W_O[l]))
            self.nl[l] = ops.sq_norm(Lt if F is None else _times(Lt, Fi))
            if keep:
                self.memo_lt[l] = Lt
            if svd:                                                   # sigma(W_V W_O) = sigma(F_P F_O^T)
                self.sl2[l] = _sv(FP @ _T(_factor(_gram(_T(W_O[l]))))) ** 2
        _check_heads(ops, self.nl, "W_V @ W_O", early)
        self.nr, self.sr2 = [], []
        for m, mode in enumerate(modes):
            nr = ops.ones((L, H))
            sr2 = np.ones((L, H, dh)) if svd else None
            for l in range(1, L):
                X = self.X[m][l]
                if F is None:
                    Y = {"Q": W_K, "K": W_Q}[mode][l] if mode != "V" else ops.T(W_O[l])
                elif mode != "V":
                    Y = np.matmul(F, {"Q": W_K, "K": W_Q}[mode][l])
                else:
                    Y = _T(_times(W_O[l], Fi if FU is None else _T(FU)))
                FY = ops.factor(Y)
                self.SR[m][l] = ops.cast(ops.T(FY))
                Rt = ops.mm(ops.cast(X), self.SR[m][l])
                nr[l] = ops.sq_norm(Rt if F is None else np.matmul(F, Rt))
                if keep:
                    self.memo_rt[m, l] = Rt
                if svd:                                               # sigma(X Y^T) = sigma(F_X F_Y^T)
                    sr2[l] = _sv(_factor(_gram(X)) @ _T(FY)) ** 2
            _check_heads(ops, nr, _READS[mode], late)
            self.nr.append(nr)
            self.sr2.append(sr2)

    def lt(self, l, h0, h1):
        if self.keep:
            return self.memo_lt[l][h0:h1]
        return self.ops.mm(self.SW[l][h0:h1], self.ops.cast(self.W_O[l, h0:h1]))

    def rt(self, m, l, h0, h1):
        if self.keep:                       # whole layers, each asked for once: free it as it is stacked
            return self.memo_rt.pop((m, l))[h0:h1]
        return self.ops.mm(self.ops.cast(self.X[m][l, h0:h1]), self.SR[m][l][h0:h1])


def _frobenius_scores(W, modes, metric, kw, work_bytes, progress):
    """frobenius, frobenius_baseline, svd_bound, token and whitened for several modes: the earlier
    heads' factors are shared by every mode's later heads."""
    L, H, d, dh = W[0].shape
    basis = None
    if metric in ("token", "whitened"):
        basis = _basis(metric, kw, modes, d)
    ops = _Numpy(W[0].dtype if basis is None else np.float64)
    plan = _plan(L, H, d, dh, dh, len(modes), ops.dtype.itemsize, work_bytes)
    sides = _FrobeniusFactors(W, modes, ops, plan[0], basis, svd=metric == "svd_bound")
    del basis
    nums = np.moveaxis(_cross_sq_norms(sides, plan, ops, progress).reshape(L, H, L, len(modes), H), 3, 0)
    outs = []
    for m, num in enumerate(nums):
        if metric == "svd_bound":
            den = np.einsum("ak,bk->ab", sides.sl2.reshape(-1, dh), sides.sr2[m].reshape(-1, dh))
            den = den.reshape(L, H, L, H)
            out = np.zeros(num.shape)
            mask = later_mask(num.shape)
            out[mask] = np.minimum(np.sqrt(num[mask] / den[mask]), 1.0)
        else:
            out = _finish(num, sides.nl, sides.nr[m])
            if metric == "frobenius_baseline":
                mean, _ = random_baseline((d, d), (d, d), ranks=(dh, dh), samples=kw.get("samples", 64),
                                          seed=kw.get("seed", 0))
                out[later_mask(out.shape)] -= mean
        outs.append(out)
    return np.stack(outs)


def _basis(metric, kw, modes, d_model):
    """``(F, F^-1, FU)``: the reference factor (``F^T F`` = the Gram matrix that becomes I), its
    inverse, and for token's V readers ``FU`` with ``FU^T FU = W_U W_U^T`` (``||M W_U|| = ||M FU^T||``)."""
    if metric == "whitened":
        F = reference_factor("gram", kw.get("gram"), kw.get("W_E"), d_model)
    else:
        F = embedding_factor(kw["W_E"], d_model)
    FU = None
    if metric == "token" and "V" in modes:
        if kw.get("W_U") is None:
            raise ValueError("metric 'token' with mode 'V' needs W_U [d_model, d_vocab]; got none")
        FU = unembedding_factor(kw["W_U"], d_model)
    return F, np.linalg.inv(F), FU


def later_mask(shape) -> np.ndarray:
    """[n_layers, n_heads, n_layers, n_heads] booleans: True where the reader's layer is after the
    writer's, the only pairs that can compose (every score is 0 elsewhere)."""
    n = shape[0]
    return np.broadcast_to((np.arange(n)[:, None] < np.arange(n)[None, :])[:, None, :, None], tuple(shape))


def _finish(num, nl, nr):
    mask = later_mask(num.shape)
    den = nl[:, :, None, None] * nr[None, None]
    out = np.zeros(num.shape)
    out[mask] = np.sqrt(num[mask] / den[mask])
    return out


# --------------------------------------------------------------------------- subspace

class _SubspaceFactors:
    """Orthonormal bases per head, from thin QR factors (ranks need singular values accurate to eps).

    Writer: rows spanning W, the row space of ``A = W_V W_O = q_P (r_P r_O^T) q_O^T``: with
    ``r_P r_O^T = U S V^T``, the rows of ``V^T q_O^T`` whose singular value counts (zero rows past
    the rank). Reader: columns spanning R, the column space of ``B = X Y^T``: ``q_X U_B``. Then
    ``||Lt Rt||_F^2`` sums the squared cosines of the principal angles. The d_head x d_head parts
    are kept; the d_model-sized QR factor is recomputed per block (QR is deterministic).
    """

    def __init__(self, W, modes, keep, rtol):
        W_Q, W_K, W_V, W_O = W
        L, H, d, dh = W_Q.shape
        self.shape = (L, H, d, dh, dh, len(modes))
        self.keep, self.W_O = keep, W_O
        self.XY = [{"Q": (W_Q, W_K), "K": (W_K, W_Q), "V": (W_V, None)}[m] for m in modes]
        self.SW, self.SR, self.memo_lt, self.memo_rt = {}, [{} for _ in modes], {}, {}
        ops = _Numpy(np.float64)
        self.rank = np.ones((L, H))
        for l in range(L - 1):
            rp = np.linalg.qr(W_V[l].astype(np.float64), mode="r")
            qo, ro = np.linalg.qr(_T(W_O[l]).astype(np.float64))
            _, s, vh = np.linalg.svd(rp @ _T(ro))
            w = _rank_mask(s, d, rtol)
            self.rank[l] = w.sum(-1)
            self.SW[l] = vh * w[..., :, None]
            if keep:
                self.memo_lt[l] = _mm(self.SW[l], _T(qo))
        _check_heads(ops, self.rank, "W_V @ W_O", slice(0, L - 1))
        for m in range(len(modes)):
            rank_r = np.ones((L, H))
            for l in range(1, L):
                X, Y = self._xy(m, l, 0, H)
                qx, rx = np.linalg.qr(X)
                ry = np.linalg.qr(Y, mode="r")
                u, s, _ = np.linalg.svd(rx @ _T(ry))
                w = _rank_mask(s, d, rtol)
                rank_r[l] = w.sum(-1)
                self.SR[m][l] = u * w[..., None, :]
                if keep:
                    self.memo_rt[m, l] = _mm(qx, self.SR[m][l])
            _check_heads(ops, rank_r, "the reading matrix", slice(1, L))

    def _xy(self, m, l, h0, h1):
        X, Y = self.XY[m]
        X = X[l, h0:h1].astype(np.float64)
        Y = _T(self.W_O[l, h0:h1]).astype(np.float64) if Y is None else Y[l, h0:h1].astype(np.float64)
        return X, Y

    def lt(self, l, h0, h1):
        if self.keep:
            return self.memo_lt[l][h0:h1]
        qo = np.linalg.qr(_T(self.W_O[l, h0:h1]).astype(np.float64))[0]
        return _mm(self.SW[l][h0:h1], _T(qo))

    def rt(self, m, l, h0, h1):
        if self.keep:
            return self.memo_rt.pop((m, l))[h0:h1]
        return _mm(np.linalg.qr(self._xy(m, l, h0, h1)[0])[0], self.SR[m][l][h0:h1])


def _subspace_scores(W, modes, rtol, work_bytes, progress):
    L, H, d, dh = W[0].shape
    plan = _plan(L, H, d, dh, dh, len(modes), 8, work_bytes)
    sides = _SubspaceFactors(W, modes, plan[0], rtol)
    num = np.moveaxis(_cross_sq_norms(sides, plan, _Numpy(np.float64), progress).reshape(L, H, L, len(modes), H),
                      3, 0)
    return np.clip(num / sides.rank[None, :, :, None, None], 0.0, 1.0)


# --------------------------------------------------------------------------- other array libraries

class _ArrayAPI:
    """The engine's array operations in any array-API namespace ``xp`` (torch, CuPy), on ``device``.

    Gram factors come from ``eigh`` (``F = sqrt(Lambda) U^T``), which also takes singular Gram
    matrices, in float64; products in the working dtype; norms summed in float64.
    """

    def __init__(self, xp, dtype, device):
        self.xp, self.dtype, self.device = xp, dtype, device
        self.itemsize = 4 if dtype == xp.float32 else 8

    def factor(self, X):
        xp = self.xp
        X = self.cast(X)
        G = xp.astype(xp.matrix_transpose(X) @ X, xp.float64)
        lam, U = xp.linalg.eigh(G)
        return xp.sqrt(xp.clip(lam, min=0.0))[..., :, None] * xp.matrix_transpose(U)

    def cast(self, x):
        return self.xp.astype(x, self.dtype, copy=False)

    def T(self, x):
        return self.xp.matrix_transpose(x)

    def mm(self, a, b):
        return a @ b

    def sq_norm(self, x):
        xp = self.xp
        return xp.sum(xp.reshape(x * x, (x.shape[0], -1)), axis=1, dtype=xp.float64)

    def zeros(self, shape):
        return self.xp.zeros(shape, dtype=self.xp.float64, device=self.device)

    def ones(self, shape):
        return self.xp.ones(shape, dtype=self.xp.float64, device=self.device)

    def empty(self, shape):
        return self.xp.empty(shape, dtype=self.dtype, device=self.device)

    def buffer(self, n):
        return None

    def put(self, right, nu, j, R):
        xp = self.xp
        n, d, b = R.shape
        right[:, j * b:(j + n) * b] = xp.reshape(xp.permute_dims(R, (1, 0, 2)), (d, n * b))

    def block(self, Lt, cols, b, buf):
        xp = self.xp
        n, a, d = Lt.shape
        Z = xp.reshape(Lt, (n * a, d)) @ cols
        sq = xp.sum(xp.reshape(Z * Z, (n, a, -1)), axis=1)
        return xp.sum(xp.reshape(sq, (n, -1, b)), axis=2, dtype=xp.float64)

    def first_bad(self, sq_norm):
        bad = sq_norm <= 0
        if not bool(self.xp.any(bad)):
            return None
        idx = self.xp.nonzero(bad)
        return int(idx[0][0]), int(idx[1][0])


def _array_api_scores(arrays, mode, metric, kw, work_bytes, progress):
    """``all_composition_scores`` for arrays of another library: frobenius, any mode, the same blocks."""
    names = ("W_Q", "W_K", "W_V", "W_O")
    kinds = [f"{type(w).__module__}.{type(w).__name__}" for w in arrays]
    other = next(k for k, w in zip(kinds, arrays) if not _is_numpy(w))
    metric = metric_name(metric)
    if metric != "frobenius":
        raise ValueError(f"metric {metric!r} accepts numpy arrays only; arrays from other libraries (got "
                         f"{other}) work with metric 'frobenius' only: pass numpy arrays for {metric!r}")
    check_options("frobenius", kw)
    try:
        from array_api_compat import array_namespace, device
    except ImportError:
        raise ImportError(f"scoring {other} arrays needs the array-api-compat package (or pass numpy "
                          f"arrays); it is not installed") from None
    try:
        xp = array_namespace(*arrays)
    except TypeError:
        raise ValueError(f"W_Q, W_K, W_V and W_O must be arrays of one library; got "
                         f"{', '.join(f'{n} {k}' for n, k in zip(names, kinds))}") from None
    W = [w.detach() if getattr(w, "requires_grad", False) else w for w in arrays]
    for name, w in zip(names, W):
        if w.ndim != 4:
            raise ValueError(f"{name} must have 4 dimensions; got shape {list(w.shape)}")
        if not xp.isdtype(w.dtype, ("real floating", "integral")):
            raise ValueError(f"{name} must be a real numeric array; got dtype {w.dtype}")
    want = _want(tuple(W[0].shape))
    for name, w in zip(names[1:], W[1:]):
        if tuple(w.shape) != want[name]:
            raise _shape_error(name, want[name], tuple(W[0].shape), tuple(w.shape))
    modes, single = _modes(mode)
    # float32 unless an input is float64 or integer; narrower floats (bfloat16) are cast a layer at a time
    wide = any(w.dtype == xp.float64 or xp.isdtype(w.dtype, "integral") for w in W)
    dtype = xp.float64 if wide else xp.float32
    for name, w in zip(names, W):
        _check_finite(xp, name, w)
    L, H, d, dh = W[0].shape
    ops = _ArrayAPI(xp, dtype, device(W[0]))
    plan = _plan(L, H, d, dh, dh, len(modes), ops.itemsize, work_bytes, copies=2)
    sides = _FrobeniusFactors(W, modes, ops, plan[0])
    nums = xp.permute_dims(xp.reshape(_cross_sq_norms(sides, plan, ops, progress), (L, H, L, len(modes), H)),
                           (3, 0, 1, 2, 4))
    idx = xp.arange(L, device=ops.device)
    mask = (idx[:, None] < idx[None, :])[:, None, :, None]
    outs = []
    for m in range(len(modes)):
        den = sides.nl[:, :, None, None] * sides.nr[m][None, None, :, :]
        outs.append(xp.where(mask, xp.sqrt(nums[m] / den), xp.zeros_like(nums[m])))
    return outs[0] if single else xp.stack(outs)


def _check_finite(xp, name, w):
    """Raise at the first NaN or infinity of ``w``, one layer at a time (no input-sized temporary)."""
    for l in range(w.shape[0]):
        ok = xp.isfinite(w[l])
        if not bool(xp.all(ok)):
            index = (l,) + tuple(int(i[0]) for i in xp.nonzero(~ok))
            raise ValueError(f"{name} must be finite; got {float(w[index])} at index {index}")
