"""One earlier layer against one later layer: every head pair's composition scores from one product.

The unit of work the page "Score your model" computes per request (one block, so that the reader's
tab stays responsive and the work can stop between blocks), and the fast route to the two size
baselines of ``headspace.pair_scores`` for a whole model (``size_scores``: the command line's
``--metric product_norm,norm_product``).

Why one product gives every score. Each head's matrix has rank d_head, so its thin SVD is small:
the writer ``A = W_V W_O = U_A S_A V_A^T`` and the reader ``B = X Y^T = U_B S_B V_B^T`` (``X, Y`` =
``W_Q, W_K`` for Q, ``W_K, W_Q`` for K, ``W_V, W_O^T`` for V), each from two thin QR factors and a
d_head x d_head SVD (``head_bases``). Then ``A B = U_A (S_A K S_B) V_B^T`` with the d_head x d_head
matrix ``K = V_A^T U_B``, the cosines between the writer's output directions and the reader's input
directions, and every score is a function of ``K`` and the singular values:

* ``frobenius = ||S_A K S_B||_F / (||S_A|| ||S_B||)`` (``headspace.composition``'s, TransformerLens's),
* ``svd_bound = ||S_A K S_B||_F / ||S_A S_B||`` (singular values paired in descending order; at most 1),
* ``subspace = ||K'||_F^2 / rank A``, ``K'`` the rows and columns of nonzero singular values
  (the mean squared cosine of the principal angles between the two spaces),
* ``product_norm = ||S_A K S_B||_2``, the largest singular value (``pair_scores.product_norm``),
* ``norm_product = ||S_A|| ||S_B||`` (``pair_scores.norm_product``).

The ``K`` of every writer head of one layer against every reader head of a later layer, in every
mode, is one matmul of their stacked bases ([n_heads d_head, d_model] by [d_model, modes n_heads
d_head]): the one product of d_model length, never a d_model x d_model matrix. The bases are
computed once per layer (``head_bases``), so a whole model costs one such product per layer pair.
The product is taken in float32 when the weights are float32 (as ``head_pairs`` does) and
everything after it in float64. Under Pyodide, whose numpy has no BLAS, the product runs as
``einsum`` over two rows-contiguous operands, in blocks that stay in the cache, faster there than
``matmul`` (whose loop without BLAS strides down the second operand's columns); natively it is a
BLAS matmul (docs/decisions/0009-own-model-speed.md has the measurements).

``token`` and ``whitened`` are not here: they read the embedding (d_vocab x d_model, 154 MB of
GPT-2 small's file as float32) and its d_vocab-row Gram matrix, more work than every other score;
``headspace.composition.all_composition_scores`` computes them.

Random baselines, to read a score against: ``random_baselines(d_model, d_head)`` gives the mean
of each score over random Gaussian heads of these shapes (``frobenius``'s is
``headspace.composition``'s ``random_baseline``, what ``frobenius_baseline`` subtracts; ``subspace``'s
is exact, ``d_head / d_model``) and the mean ratio ``product_norm / norm_product``: a pair's
``product_norm`` is expected to be that ratio times its ``norm_product`` if its heads were random
directions of the same sizes. ``norm_product`` reads no alignment, so random heads of the same
sizes score exactly the same: it has no baseline of its own.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> W_Q, W_K, W_V = rng.normal(size=(3, 3, 2, 8, 4))
>>> W_O = rng.normal(size=(3, 2, 4, 8))
>>> s = layer_pair_scores(W_Q, W_K, W_V, W_O, 0, 2, "K")
>>> list(s), s["frobenius"].shape                               # [modes, writer heads, reader heads]
(['frobenius', 'svd_bound', 'subspace', 'product_norm', 'norm_product'], (1, 2, 2))
>>> from headspace.composition import all_composition_scores
>>> bool(np.allclose(s["subspace"][0], all_composition_scores(W_Q, W_K, W_V, W_O, "K", "subspace")[0, :, 2, :]))
True
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import numpy as np

from headspace._linalg import _T, _rank_mask
from headspace._random_baseline import random_baseline
from headspace.head_pairs import later_mask

__all__ = ["SCORES", "HeadBases", "head_bases", "layer_bases", "bases_scores", "layer_pair_scores",
           "size_scores", "random_baselines", "top_singular_value"]

#: The scores ``layer_pair_scores`` returns, in the order the page and the CSV list them.
SCORES = ("frobenius", "svd_bound", "subspace", "product_norm", "norm_product")
#: numpy without BLAS (Pyodide): the product runs as an einsum (see the module's docstring).
_NO_BLAS = sys.platform == "emscripten"
_ROWS = 128                  # rows of the second operand per einsum without BLAS (``_cross``)


@dataclass(frozen=True)
class HeadBases:
    """One layer's heads, each as its thin SVD's directions and sizes (``head_bases``).

    ``rows [n_heads, d_head, d_model]``: orthonormal rows spanning what a writer writes (its output
    space, ``V_A^T``) or what a reader reads (its input space, ``U_B^T``), a row set to 0 where its
    singular value does not count (below ``max(shape) eps`` of the largest, as ``subspace``);
    ``s [n_heads, d_head]``: the singular values, descending, float64; ``rank [n_heads]``.
    """
    rows: np.ndarray
    s: np.ndarray
    rank: np.ndarray


def head_bases(P, Q, side: str, dtype=np.float32) -> HeadBases:
    """The thin SVD of every head's ``M = P Q^T`` (``P, Q [n_heads, d_model, d_head]``): a writer's
    output side (``side="out"``: ``P = W_V``, ``Q = W_O^T``) or a reader's input side (``"in"``:
    ``P = X``, ``Q = Y``). With ``P = q_P r_P`` and ``Q = q_Q r_Q`` (thin QR), ``M = q_P (r_P r_Q^T)
    q_Q^T``, so the SVD ``r_P r_Q^T = u s vh`` gives ``M``'s: rows ``vh q_Q^T`` (out) or ``u^T q_P^T``
    (in). Computed in float64; ``rows`` stored as ``dtype``.

    The QR factors come from the d_head x d_head Gram matrices (``r`` its Cholesky factor, ``q = P
    r^-1``): two products of d_model length and small solves, where a Householder QR in Pyodide's
    numpy (no LAPACK, no BLAS) is slow enough to dominate reading a layer (decision 0009). Its columns are
    orthonormal to about ``cond(P)^2`` machine epsilons; if a head's Gram matrix is singular or
    its Cholesky diagonal spans more than 1e4 (a lower bound on ``cond(P)``), the layer takes the
    Householder QR instead.

    >>> rng = np.random.default_rng(1)
    >>> V, O = rng.normal(size=(2, 3, 6, 2))
    >>> b = head_bases(V, O, "out", np.float64)
    >>> A = V[0] @ O[0].T                                        # the writer's OV, row vectors
    >>> bool(np.allclose(b.s[0], np.linalg.svd(A, compute_uv=False)[:2]))
    True
    >>> bool(np.allclose(A @ b.rows[0].T @ b.rows[0], A))        # its rows span A's row space
    True
    """
    if side not in ("out", "in"):
        raise ValueError(f"side must be 'out' (a writer's output) or 'in' (a reader's input); got {side!r}")
    P, Q = np.asarray(P, np.float64), np.asarray(Q, np.float64)
    d = P.shape[-2]
    L_P, L_Q = _cholesky_of_gram(P), _cholesky_of_gram(Q)
    if L_P is None or L_Q is None:
        q_P, r_P = np.linalg.qr(P)
        q_Q, r_Q = np.linalg.qr(Q)
        u, s, vh = np.linalg.svd(r_P @ _T(r_Q))
        rows = vh @ _T(q_Q) if side == "out" else _T(u) @ _T(q_P)
    else:                                          # r = L^T, so q^T = r^-T P^T = L^-1 P^T
        u, s, vh = np.linalg.svd(_T(L_P) @ L_Q)
        if side == "out":
            rows = _times_rows(_T(np.linalg.solve(_T(L_Q), _T(vh))), Q)      # vh L_Q^-1 Q^T
        else:
            rows = _times_rows(_T(np.linalg.solve(_T(L_P), u)), P)           # u^T L_P^-1 P^T
    keep = _rank_mask(s, d, None)
    rows = (rows * keep[..., :, None]).astype(dtype)
    return HeadBases(rows, s, keep.sum(-1))


def _cholesky_of_gram(X):
    """Lower ``L`` with ``L L^T = X^T X`` per head (float64), or None if a head's Gram matrix is
    singular or its diagonal spans more than 1e4 (then the caller takes a Householder QR)."""
    G = np.einsum("hki,hkj->hij", X, X) if _NO_BLAS else _T(X) @ X
    try:
        L = np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        return None
    diag = np.abs(np.diagonal(L, axis1=-2, axis2=-1))
    if np.any(diag.min(-1) <= 1e-4 * diag.max(-1)):             # a lower bound on cond(X): too large
        return None
    return L


def _times_rows(T, X):
    """``T @ X^T`` per head: T [H, a, b], X [H, d_model, b] -> [H, a, d_model] (an einsum without BLAS)."""
    return np.einsum("hab,hdb->had", T, X) if _NO_BLAS else T @ _T(X)


def layer_bases(W_Q, W_K, W_V, W_O, l: int, modes="QKV", writer: bool = True, readers: bool = True) -> dict:
    """Layer ``l``'s bases: ``{"writer": HeadBases, "Q": ..., "K": ..., "V": ...}`` (readers for
    ``modes``), float32 rows if the weights are float32, else float64. The page computes them once
    per layer, as it reads the layer, and keeps them instead of the weights (the same size)."""
    work = np.float32 if all(np.asarray(w).dtype == np.float32 for w in (W_Q, W_K, W_V, W_O)) else np.float64
    out = {}
    if writer:
        out["writer"] = head_bases(W_V[l], _T(np.asarray(W_O[l])), "out", work)
    if readers:
        for mode in modes:
            X, Y = {"Q": (W_Q[l], W_K[l]), "K": (W_K[l], W_Q[l]), "V": (W_V[l], _T(np.asarray(W_O[l])))}[mode]
            out[mode] = head_bases(X, Y, "in", work)
    return out


def _cross(a, b):
    """``a @ b.T`` in float64 for row-contiguous ``a [m, k]``, ``b [n, k]`` (in their dtype, then widened).

    Without BLAS, an einsum per 128 rows of ``b``, which stay in the cache while every row of ``a``
    meets them (decision 0009: faster than one einsum, and blocks of 64 or of ``a`` too are not).
    """
    if not _NO_BLAS:
        return (a @ b.T).astype(np.float64)
    out = np.empty((len(a), len(b)))
    for j in range(0, len(b), _ROWS):
        out[:, j:j + _ROWS] = np.einsum("ik,jk->ij", a, b[j:j + _ROWS])
    return out


def bases_scores(writer: HeadBases, readers, layers=(None, None)) -> dict:
    """Every score of ``SCORES`` for each writer head against each reader head of each ``readers``
    entry (a mode): ``{score: [len(readers), n_heads, n_heads]}``, from one product of the bases.
    ``layers`` (writer's, reader's) only names a zero head in the error."""
    H, dh, d = writer.rows.shape
    M = len(readers)
    sw, sr = writer.s, np.stack([r.s for r in readers])                     # [H, dh], [M, H, dh]
    nw2, nr2 = (sw ** 2).sum(-1), (sr ** 2).sum(-1)
    if np.any(nw2 <= 0) or np.any(nr2 <= 0):
        h1 = int(np.argmax(nw2 <= 0)) if np.any(nw2 <= 0) else 0
        h2 = int(np.argwhere(nr2 <= 0)[0][1]) if np.any(nr2 <= 0) else 0
        l1, l2 = layers
        raise ValueError(f"writer head L{l1}H{h1} or reader head L{l2}H{h2} is zero (norm 0), so its scores are "
                         f"0/0; expected nonzero weights")
    right = np.concatenate([r.rows.reshape(H * dh, d) for r in readers]) if M > 1 else readers[0].rows.reshape(-1, d)
    K = _cross(writer.rows.reshape(H * dh, d), right)
    K = np.ascontiguousarray(K.reshape(H, dh, M, H, dh).transpose(2, 0, 3, 1, 4))   # [M, H1, H2, dh, dh]
    C = sw[None, :, None, :, None] * K * sr[:, None, :, None, :]
    sq = np.einsum("mabij,mabij->mab", C, C)
    sizes = np.sqrt(nw2[None, :, None] * nr2[:, None, :])
    paired = np.einsum("ak,mbk->mab", sw ** 2, sr ** 2)
    return {"frobenius": np.sqrt(sq) / sizes,
            "svd_bound": np.minimum(np.sqrt(sq / paired), 1.0),
            "subspace": np.clip(np.einsum("mabij,mabij->mab", K, K) / writer.rank[None, :, None], 0.0, 1.0),
            "product_norm": top_singular_value(C),
            "norm_product": sizes}


def layer_pair_scores(W_Q, W_K, W_V, W_O, l1: int, l2: int, modes="QKV") -> dict:
    """Scores of every head of layer ``l1`` (writer) against every head of layer ``l2`` (reader):
    ``{score: [len(modes), n_heads, n_heads]}`` for each of ``SCORES``, ``out[m, h1, h2]``.

    Weights in TransformerLens layout, norm scales folded in (``headspace.weights``), ``W_Q, W_K,
    W_V [n_layers, n_heads, d_model, d_head]``, ``W_O [n_layers, n_heads, d_head, d_model]``; only
    layers ``l1`` and ``l2`` are read. ``l1 < l2`` is required: earlier writes, later reads.
    """
    L = len(W_Q)
    if not (isinstance(l1, (int, np.integer)) and isinstance(l2, (int, np.integer)) and 0 <= l1 < l2 < L):
        raise ValueError(f"l1 and l2 must be layers with 0 <= l1 < l2 < n_layers={L}; got l1={l1!r}, l2={l2!r}")
    bad = [m for m in modes if m not in "QKV"]
    if bad or not modes:
        raise ValueError(f"modes must be a sequence of 'Q', 'K', 'V'; got {modes!r}")
    writer = layer_bases(W_Q, W_K, W_V, W_O, l1, readers=False)["writer"]
    readers = layer_bases(W_Q, W_K, W_V, W_O, l2, modes, writer=False)
    return bases_scores(writer, [readers[m] for m in modes], (l1, l2))


def top_singular_value(C):
    """The largest singular value of each matrix of the stack ``C [..., n, n]`` (float64): the largest
    eigenvalue of ``C C^T``, exactly (``eigvalsh``).

    Power iteration was tried and measured slower, natively and in Pyodide (decision 0009): the
    top two singular values of these products are close enough that it needs tens of steps.
    ``C @ C^T`` stays a matmul in Pyodide too: at 64 x 64 it fits the cache.

    >>> C = np.diag([3.0, 2.0, 1.0])[None]
    >>> float(top_singular_value(C)[0])
    3.0
    """
    C = np.asarray(C, np.float64)
    return np.sqrt(np.clip(np.linalg.eigvalsh(C @ _T(C))[..., -1], 0.0, None))


def size_scores(W_Q, W_K, W_V, W_O, mode) -> dict:
    """``product_norm`` and ``norm_product`` of every earlier/later head pair, ``[n_layers, n_heads,
    n_layers, n_heads]`` each (0 unless the reader's layer is later), a layer pair at a time:
    ``pair_scores``'s two size baselines without forming any d_model x d_model matrix.

    >>> from headspace.model import load
    >>> from headspace.pair_scores import product_norm, weights_of
    >>> w = weights_of(load("attn-only-2l"))
    >>> s = size_scores(w.W_Q, w.W_K, w.W_V, w.W_O, "V")
    >>> bool(np.allclose(s["product_norm"], product_norm(w, "V"), rtol=1e-6))
    True
    """
    if mode not in ("Q", "K", "V"):
        raise ValueError(f"mode must be one of 'Q', 'K', 'V'; got {mode!r}")
    L, H = np.shape(W_Q)[:2]
    out = {name: np.zeros((L, H, L, H)) for name in ("product_norm", "norm_product")}
    bases = [layer_bases(W_Q, W_K, W_V, W_O, l, mode, writer=l < L - 1, readers=l > 0) for l in range(L)]
    for l2 in range(1, L):
        for l1 in range(l2):
            block = bases_scores(bases[l1]["writer"], [bases[l2][mode]], (l1, l2))
            for name in out:
                out[name][l1, :, l2, :] = block[name][0]
    assert not any(np.any(v[~later_mask(v.shape)]) for v in out.values())
    return out


@functools.lru_cache(maxsize=8)
def random_baselines(d_model: int, d_head: int, samples: int = 64, seed: int = 0) -> dict:
    """What random heads of these shapes score, ``(mean, stderr)`` each: ``frobenius`` (as
    ``headspace.composition.random_baseline`` for heads: rank ``d_head`` factors of ``d_model``),
    ``svd_bound``, ``subspace`` (exact: ``d_head / d_model``, the mean squared cosine between random
    subspaces) and ``size_ratio``, the mean of ``product_norm / norm_product``, over Gaussian
    ``W_V, W_O`` of a writer and ``X, Y`` of a reader. Kept for the next model of the same shapes
    (in Pyodide they are a noticeable part of opening a model; the dict is shared: do not change it).

    >>> b = random_baselines(64, 16, samples=16)
    >>> 0 < b["size_ratio"][0] < b["frobenius"][0] < 1      # ||A B||_2 <= ||A B||_F: below frobenius
    True
    >>> b["subspace"]
    (0.25, 0.0)
    """
    frob = random_baseline((d_model, d_model), (d_model, d_model), ranks=(d_head, d_head), samples=samples, seed=seed)
    rng = np.random.default_rng(seed)
    V, X, Y, O = rng.standard_normal((4, samples, d_model, d_head))
    w, r = head_bases(V, O, "out", np.float64), head_bases(X, Y, "in", np.float64)
    one = lambda b, i: HeadBases(b.rows[i:i + 1], b.s[i:i + 1], b.rank[i:i + 1])   # noqa: E731
    # writer i against reader i only: independent draws, and samples products, not samples^2
    s = [bases_scores(one(w, i), [one(r, i)]) for i in range(samples)]
    ratio = np.array([x["product_norm"].item() / x["norm_product"].item() for x in s])
    svd = np.array([x["svd_bound"].item() for x in s])
    mean = lambda x: (float(x.mean()), float(x.std(ddof=1) / np.sqrt(len(x))))   # noqa: E731
    return {"frobenius": frob, "svd_bound": mean(svd), "subspace": (d_head / d_model, 0.0),
            "size_ratio": mean(ratio)}
