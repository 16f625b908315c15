"""Composition scores: how much a later attention head reads what an earlier head writes.

Several scores exist and they disagree; each behaves differently under the
symmetries of the residual stream (see ``headspace.symmetry``) and against the
axioms of ``headspace.axioms``. This module computes every one of them from the
same inputs so that the site can put them side by side. The table of every
earlier head against every later head of a model, ``all_composition_scores``,
is computed in memory-bounded blocks by ``headspace.head_pairs`` and importable
from here.

Layout (TransformerLens, row vectors, ``x @ W``): ``left`` is the earlier
head's OV circuit ``W_V @ W_O`` [d_model, d_model]; ``right`` is the later
head's ``W_Q @ W_K.T`` (Q-composition), ``W_K @ W_Q.T`` (K-composition) or
``W_V @ W_O`` (V-composition). The score is about the product ``left @ right``.
In the paper's column vectors the same product is ``(left @ right).T``, e.g.
``W_QK^T W_OV`` for Q-composition (Elhage et al. 2021).

>>> import numpy as np
>>> composition_score(np.eye(4), np.eye(4))            # the identity paradox
0.5
>>> composition_score(np.eye(4), np.eye(4), "svd_bound")
1.0
"""

from __future__ import annotations

import numpy as np

from headspace._linalg import _T, _rank_mask, _sq_norm, _sv2
from headspace._metric_inputs import (
    METRICS, MODES, check_options, embedding_factor, float_array, metric_name, mode_name, reference_factor,
    unembedding_factor,
)
from headspace._random_baseline import random_baseline
from headspace.head_pairs import all_composition_scores

__all__ = [
    "METRICS", "MODES", "composition_score", "all_composition_scores",
    "frobenius", "frobenius_baseline", "random_baseline", "svd_bound", "subspace", "token", "token_path",
    "whitened",
]


def _pair(left, right):
    """Validate a (left, right) pair as float64 arrays [..., n, m] and [..., m, p]."""
    L = float_array("left", left, min_ndim=2).astype(np.float64, copy=False)
    R = float_array("right", right, min_ndim=2).astype(np.float64, copy=False)
    if L.shape[-1] != R.shape[-2]:
        raise ValueError(f"right must have shape [..., {L.shape[-1]}, *] so that left @ right is defined "
                         f"(left has shape {list(L.shape)}); got {list(R.shape)}")
    try:
        np.broadcast_shapes(L.shape[:-2], R.shape[:-2])
    except ValueError:
        raise ValueError(f"left and right batch dimensions must broadcast; got left {list(L.shape)} "
                         f"and right {list(R.shape)}") from None
    return L, R


def _nonzero(name, sq_norm, what=None):
    """Raise if any squared norm is zero: the score would be 0/0."""
    sq_norm = np.asarray(sq_norm)
    if np.any(sq_norm <= 0):
        idx = tuple(int(i) for i in np.argwhere(sq_norm <= 0)[0])
        where = f" at batch index {idx}" if idx else ""
        what = what or f"{name} is a zero matrix"
        raise ValueError(f"{what}{where} (norm 0), so the score is 0/0; expected a nonzero matrix")


def _out(x):
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


# --------------------------------------------------------------------------- metrics on dense matrices

def frobenius(left, right):
    r"""The score of Elhage et al. (2021): ``||left @ right||_F / (||left||_F ||right||_F)``.

    Row vectors (ours): ``C(A, B) = ||A B||_F / (||A||_F ||B||_F)`` with ``A = W_V W_O`` of the earlier
    head and ``B`` the later head's ``W_Q W_K^T`` (Q), ``W_K W_Q^T`` (K) or ``W_V W_O`` (V).
    Column vectors (paper): ``||W_QK^T W_OV||_F / (||W_QK^T||_F ||W_OV||_F)`` for Q-composition;
    transposing does not change a Frobenius norm, so the numbers agree. It equals TransformerLens's
    ``composition_scores``.

    In [0, 1] because the Frobenius norm is submultiplicative. It is 0 exactly when ``A B = 0``.
    The identity scores ``d**-0.5`` with itself (the identity paradox of seed 001), and a basis
    change can reorder scores (seed 000). Axioms (``headspace.axioms``): meets 2 (proved); fails 1
    and 1-strict (the identity paradox), 3 (it is continuous, but turning a written direction
    towards the read space can lower it when what A writes cancels after B reads it) and 4
    (counterexamples).

    >>> import numpy as np
    >>> frobenius(np.eye(9), np.eye(9))          # writes exactly where it reads, yet 1/3
    0.3333333333333333
    >>> frobenius(np.ones((3, 1)), np.ones((1, 3)))  # 1 needs rank-1 factors of constant rows/cols
    1.0
    """
    L, R = _pair(left, right)
    nl, nr = _sq_norm(L), _sq_norm(R)
    _nonzero("left", nl)
    _nonzero("right", nr)
    return _out(np.sqrt(_sq_norm(L @ R) / (nl * nr)))


def frobenius_baseline(left, right, *, samples=64, seed=0, ranks=None):
    r"""``frobenius`` minus the expected score of random matrices of the same shapes.

    Elhage et al. (2021) subtract "the amount of composition expected of random matrices" so that
    unrelated heads score near 0. Formula (both conventions, as ``frobenius``):
    ``C(A, B) = ||A B||_F / (||A||_F ||B||_F) - E[C(G, H)]`` with ``G, H`` Gaussian of the shapes of
    ``A, B`` (or products of Gaussian factors of inner sizes ``ranks``).
    ``E[C]`` is estimated by ``random_baseline``: the mean over ``samples`` seeded draws, standard
    error ``std / sqrt(samples)``; with the default 64 samples: 0.481 +- 0.011 for 4 x 4 matrices,
    0.350 +- 0.004 for 8 x 8, 0.03607 +- 0.00006 for GPT-2-small heads (d_model 768, d_head 64). The shift is the same for every pair of the same shapes, so orderings are
    those of ``frobenius``. Can be negative. Axioms: meets none; fails 1, 1-strict, 2 (orthogonal
    spaces score ``-E[C]``, not 0), 3 and 4 as ``frobenius`` does.

    >>> import numpy as np
    >>> round(frobenius_baseline(np.eye(4), np.eye(4)), 3)   # 0.5 minus 0.481 (stderr 0.011)
    0.019
    """
    L, R = _pair(left, right)
    mean, _ = random_baseline(L.shape[-2:], R.shape[-2:], ranks=ranks, samples=samples, seed=seed)
    return _out(np.asarray(frobenius(L, R)) - mean)


def svd_bound(left, right):
    r"""``||left @ right||_F / ||sigma(left) * sigma(right)||_2``: the tighter denominator.

    ``sigma`` are singular values in descending order; the elementwise product runs over the shorter
    list. Since ``||A B||_F <= ||sigma(A) * sigma(B)||_2 <= ||A||_F ||B||_F`` (Horn & Johnson, Topics
    in Matrix Analysis), the score lies in [0, 1] and is never below ``frobenius``. It is 1 when the
    singular vectors of A's output side and B's input side coincide in the same order, e.g. the
    identity with itself. Due to Turner & Strand, via Lieberum ("Thoughts on formalizing
    composition"). Singular values do not change under transposition, so the formula is the same in
    row (``A = W_V W_O``, product ``A B``) and column (``W_OV``, product ``W_QK^T W_OV``) conventions.
    Why it is an upper bound: ``||A B||_F^2 = tr(A^T A B B^T) <= sum_i sigma_i^2 tau_i^2`` by von
    Neumann's trace inequality, with equality exactly when ``A^T A`` and ``B B^T`` share an
    eigenbasis with eigenvalues in the same order (Theobald 1975); both directions are tested.
    Axioms: meets 2 (proved); fails 1 and 1-strict (writing inside the read space is not enough:
    bases and their order must agree), 3 (its numerator is that of ``frobenius``) and 4 (a basis
    change rescales singular values).

    >>> import numpy as np
    >>> svd_bound(np.eye(3), np.eye(3))
    1.0
    >>> round(svd_bound(np.diag([2.0, 1.0]), np.diag([1.0, 2.0])), 3)  # same basis, opposite order
    0.686
    """
    L, R = _pair(left, right)
    nl, nr = _sq_norm(L), _sq_norm(R)
    _nonzero("left", nl)
    _nonzero("right", nr)
    sl2, sr2 = _sv2(L), _sv2(R)
    k = min(sl2.shape[-1], sr2.shape[-1])
    den = np.einsum("...k,...k->...", sl2[..., :k], sr2[..., :k])
    return _out(np.minimum(np.sqrt(_sq_norm(L @ R) / den), 1.0))


def subspace(left, right, *, rtol=None):
    r"""Mean squared cosine of the principal angles from the space ``left`` writes to the space
    ``right`` reads.

    Row vectors (ours): ``x @ A`` lies in W, the row space of A; ``x @ B`` depends only on the part
    of x in R, the column space of B. Column vectors (paper): W is the column space of ``W_OV``, R
    the row space of ``W_QK^T`` (the orthogonal complement of its kernel).
    ``C = ||Q_W^T Q_R||_F^2 / dim W`` with orthonormal bases ``Q_W, Q_R``: the mean of
    ``cos^2`` over the principal angles, where the ``dim W - dim R`` directions of W that have no
    partner when R is smaller count as 90 degrees. So C = 1 exactly when W lies inside R and
    C = 0 exactly when W is orthogonal to R (it is the standard mean over ``min(dim W, dim R)``
    angles whenever ``dim W <= dim R``, as for heads of equal d_head). Dimensions are numerical
    ranks: singular values above ``rtol * sigma_max``, default ``rtol = max(shape) * eps``.
    Sources: principal angles between the subspaces that Lieberum's Axioms 1 and 2 speak of.
    Axioms: meets 1-strict, 2 and 3 (at fixed rank; all proved); fails 1 (W at 10..80 degrees
    meets B's kernel only in 0, yet scores below 1) and 4 (angles are not invariant under shears
    and scalings of the residual stream: ``axioms.inclusion_swap``).

    >>> import numpy as np
    >>> subspace(np.diag([5.0, 1.0, 0.0]), np.diag([1.0, 1.0, 1.0]))   # W inside R
    1.0
    >>> c = np.cos(np.deg2rad(60))
    >>> round(subspace(np.array([[c, np.sin(np.deg2rad(60))]]), np.diag([1.0, 0.0])), 6)  # 60 deg
    0.25
    """
    L, R = _pair(left, right)
    _nonzero("left", _sq_norm(L))
    _nonzero("right", _sq_norm(R))
    _, sl, vlh = np.linalg.svd(L, full_matrices=False)
    ur, sr, _ = np.linalg.svd(R, full_matrices=False)
    wl = _rank_mask(sl, max(L.shape[-2:]), rtol)
    wr = _rank_mask(sr, max(R.shape[-2:]), rtol)
    cos = vlh @ ur  # [..., k_l, k_r]: cosines between write and read directions
    sq = np.einsum("...i,...ij,...j->...", wl.astype(float), cos ** 2, wr.astype(float))
    return _out(np.clip(sq / wl.sum(-1), 0.0, 1.0))


def _square(L, R, metric):
    if L.shape[-1] != L.shape[-2] or R.shape[-1] != R.shape[-2]:
        raise ValueError(f"{metric} needs square left and right [d_model, d_model]; got left "
                         f"{list(L.shape)} and right {list(R.shape)}")
    return L.shape[-1]


def whitened(left, right, *, mode, W_E=None, gram=None):
    r"""``frobenius`` in the residual basis where a reference Gram matrix becomes the identity.

    Why: ``frobenius`` measures lengths with the residual stream's coordinates, which the model does
    not care about (a change of basis T leaves its function unchanged and reorders the scores). Pick
    the lengths from the model instead: with ``G = F^T F`` (default ``G = W_E^T W_E``, the
    embedding's Gram matrix; or pass ``gram``, e.g. the covariance of residual activations), move to
    the basis ``x -> x F^-1`` in which G is the identity and score there.

    Row vectors (ours): ``A' = F A F^-1``, ``B' = F B F^T`` for Q and K (``W_Q W_K^T`` reads on both
    sides), ``B' = F B F^-1`` for V; ``C = ||A' B'||_F / (||A'||_F ||B'||_F)``. Column vectors
    (paper, basis change ``S = F^-T``): ``W_OV' = F^-T W_OV F^T`` and ``W_QK' = F W_QK F^T``,
    product ``W_QK'^T W_OV'``. Under a basis change T (``A -> T^-1 A T``, ``W_E -> W_E T``) the
    factor becomes ``F T`` up to a rotation, which cancels: C is invariant under every invertible T
    whose reference moves with it (``W_E -> W_E T``, or ``gram -> T^T gram T``; a fixed ``gram`` does
    not move), proved by that identity and tested to 1e-9 on random T. It equals ``frobenius`` when G = I and is
    0 exactly when ``A B = 0`` (F is invertible). For Q and K with the default G it equals
    ``token`` (see there). Source: ours, after seed 000's call for a basis-free score.
    Axioms (``headspace.axioms``): meets 2 and 4 (both proved); fails 1, 1-strict and 3
    (counterexamples).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A, B, E, T = rng.normal(size=(4, 6, 6))
    >>> Ti = np.linalg.inv(T)
    >>> s = whitened(A, B, W_E=E, mode="K")
    >>> bool(np.isclose(s, whitened(Ti @ A @ T, Ti @ B @ Ti.T, W_E=E @ T, mode="K")))
    True
    >>> bool(np.isclose(whitened(A, B, gram=np.eye(6), mode="Q"), frobenius(A, B)))
    True
    """
    L, R = _pair(left, right)
    mode = mode_name(mode)
    d = _square(L, R, "whitened")
    F = reference_factor("gram", gram, W_E, d)
    return _in_basis(F, L, R, Fi_or_X=None if mode == "V" else _T(F))


def token_path(left, right, *, W_E, W_U=None, mode):
    r"""The token-to-token map the model computes through writer ``left`` then reader ``right``.

    Elhage et al.'s virtual weights, in our row convention: ``W_E A B W_E^T`` [d_vocab, d_vocab] for
    Q and K (entry [i, j]: how much token i, sent through the writer's OV, adds to the reader's
    attention score with token j on the other side; for Q rows are query tokens and columns key
    tokens, for K rows are key tokens and columns query tokens), and ``W_E A B W_U`` [d_vocab,
    d_vocab_out] for V (token i, through both OV circuits, to logits). Column vectors (paper):
    ``W_E^T W_QK^T W_OV W_E``-style products, the transposes of these.

    >>> import numpy as np
    >>> E = np.eye(3)
    >>> token_path(np.eye(3), np.diag([1.0, 2.0, 3.0]), W_E=E, mode="Q").diagonal().tolist()
    [1.0, 2.0, 3.0]
    """
    L, R = _pair(left, right)
    mode = mode_name(mode)
    d = _square(L, R, "token_path")
    E = float_array("W_E", W_E, min_ndim=2).astype(np.float64, copy=False)
    if E.shape[-1] != d:
        raise ValueError(f"W_E must have shape [d_vocab, d_model={d}]; got {list(E.shape)}")
    if mode != "V":
        return E @ L @ R @ _T(E)
    if W_U is None:
        raise ValueError("token_path for mode 'V' needs W_U [d_model, d_vocab]; got none")
    U = float_array("W_U", W_U, min_ndim=2).astype(np.float64, copy=False)
    if U.shape[-2] != d:
        raise ValueError(f"W_U must have shape [d_model={d}, d_vocab]; got {list(U.shape)}")
    return E @ L @ R @ U


def token(left, right, *, W_E, W_U=None, mode):
    r"""The composition of two heads measured on the token-to-token path the model computes.

    Why: seed 000's way out of the residual stream's symmetry is to score in token space, where
    every basis change cancels. The path must be one the model has: a token embedded by ``W_E``,
    through the writer's OV, into the reader, and out through the reader's other side (``W_E`` for
    Q and K, ``W_U`` for V); see ``token_path``. Never through ``W_U W_E`` (logits fed back in as an
    embedding: no such path exists).

    Row vectors (ours), with ``F`` any factor of the embedding's Gram matrix (``F^T F = W_E^T W_E``;
    W_E must have full column rank): the token paths factor as ``M_AB = (W_E A F^-1)(F B X)`` with
    ``X = W_E^T`` (Q, K) or ``W_U`` (V), and
    ``C = ||W_E A B X||_F / (||W_E A F^-1||_F ||F B X||_F)``. The first factor is the writer's
    token-to-token map ``W_E A W_E^+`` (``W_E^+`` the pseudo-inverse), the second the reader's
    token-space circuit ``W_E B X`` measured in the same units. Column vectors (paper): the
    transposes, ``X^T B^T A^T W_E^T`` etc.; norms are unchanged. In [0, 1] (Frobenius norms are
    submultiplicative), exactly 0 when ``A B = 0``, and invariant under every invertible change of
    residual basis (``W_E -> W_E T``, ``W_U -> T^-1 W_U``, ``A -> T^-1 A T``, ``B -> T^-1 B T^-T``
    or ``T^-1 B T``): each factor is unchanged, proved by cancelling T, tested to 1e-9.
    Since ``W_E F^-1`` has orthonormal columns, for Q and K this is exactly ``whitened`` with
    ``gram = W_E^T W_E`` (proved the same way; tested); for V the reader is scored through ``W_U``.
    Cost: d_model x d_model matrices only (``W_E^T W_E``, ``W_U W_U^T``), never d_vocab x d_vocab.
    For a model with normalisation, pass the embedding the heads see (rows of W_E normalised).
    Source: virtual weights of Elhage et al. (2021); the normalisation is ours.
    Axioms: meets 2 and 4 (both proved); fails 1, 1-strict and 3 (counterexamples).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> A, B, T = rng.normal(size=(3, 4, 4))
    >>> E, U = rng.normal(size=(50, 4)), rng.normal(size=(4, 50))
    >>> Ti = np.linalg.inv(T)
    >>> s = token(A, B, W_E=E, W_U=U, mode="V")
    >>> bool(np.isclose(s, token(Ti @ A @ T, Ti @ B @ T, W_E=E @ T, W_U=Ti @ U, mode="V")))
    True
    >>> token(np.diag([1.0, 1, 0, 0]), np.diag([0.0, 0, 1, 1]), W_E=E, mode="Q")   # A B = 0
    0.0
    """
    L, R = _pair(left, right)
    mode = mode_name(mode)
    d = _square(L, R, "token")
    F = embedding_factor(W_E, d)
    if mode != "V":
        return _in_basis(F, L, R, _T(F))
    if W_U is None:
        raise ValueError("token for mode 'V' needs W_U [d_model, d_vocab]; got none")
    return _in_basis(F, L, R, _T(unembedding_factor(W_U, d)))    # ||M W_U||_F = ||M FU^T||_F


def _in_basis(F, L, R, Fi_or_X=None):
    """``||F (L R) X|| / (||F L F^-1|| ||F R X||)`` with X = ``Fi_or_X`` (default F^-1).

    The numerator is formed from the product ``L @ R`` itself, so it is exactly 0 when that is.
    """
    Fi = np.linalg.inv(F)
    X = Fi if Fi_or_X is None else Fi_or_X
    nl, nr = _sq_norm(F @ L @ Fi), _sq_norm(F @ R @ X)
    _nonzero("left", nl)
    _nonzero("right", nr)
    return _out(np.sqrt(_sq_norm(F @ (L @ R) @ X) / (nl * nr)))


_DENSE = {"frobenius": frobenius, "frobenius_baseline": frobenius_baseline, "svd_bound": svd_bound,
          "subspace": subspace, "token": token, "whitened": whitened}
def composition_score(left, right, metric="frobenius", **kw):
    r"""The composition score of ``left @ right`` under ``metric`` (one of ``METRICS``).

    ``left`` [..., n, m] is the earlier head's OV (``W_V @ W_O``), ``right`` [..., m, p] the later
    head's ``W_Q @ W_K.T``, ``W_K @ W_Q.T`` or ``W_V @ W_O`` (TransformerLens order). Leading axes
    broadcast and give one score each. Keywords go to the metric: ``samples, seed, ranks``
    (frobenius_baseline), ``rtol`` (subspace), ``W_E, W_U, mode`` (token: W_U for V only),
    ``W_E or gram, mode`` (whitened). See each metric's docstring for its formula and axioms.

    >>> import numpy as np
    >>> [round(composition_score(np.eye(4), np.eye(4), m), 3) for m in METRICS[:4]]
    [0.5, 0.019, 1.0, 1.0]
    >>> composition_score(np.eye(4), np.eye(4), "whitened", gram=np.eye(4), mode="Q")  # frobenius when gram = I
    0.5
    """
    metric = metric_name(metric)
    return _DENSE[metric](left, right, **check_options(metric, kw))
