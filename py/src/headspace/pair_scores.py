"""Every head-pair score the benchmark compares, as one function per score: ``score(weights, mode)``.

Each takes a ``headspace.weights.Weights`` (norm scales folded in; a ``headspace.model.Model``
is accepted too and folded with ``weights_of``) and a mode (``"Q" "K" "V"``) and returns
``[n_layers, n_heads, n_layers, n_heads]``, ``out[l1, h1, l2, h2]`` the score of writer
``(l1, h1)`` into reader ``(l2, h2)``, 0 unless ``l2 > l1``. All read weights only. Layout
as ``headspace.composition``: ``left = W_V W_O`` of the writer (row vectors, [d_model,
d_model]), ``right`` the reader's ``W_Q W_K^T`` (Q), ``W_K W_Q^T`` (K) or ``W_V W_O`` (V), with
norm scales folded into the readers, except for ``frobenius_unfolded``, which reads the stored
weights that ``weights_of`` keeps beside the folded ones.

* the six metrics of ``headspace.composition`` (``frobenius`` is TransformerLens's
  ``all_composition_scores`` after ``fold_ln``);
* ``frobenius_unfolded``: TransformerLens's ``all_composition_scores`` on the weights as
  stored, norm scales left out (what you get without ``fold_ln``);
* ``svd_component``: Merullo, Eickhoff & Pavlick 2024, composition of the writer's strongest
  single SVD component;
* ``projection_kernel``: Yamagiwa, Takase & Shimodaira 2026, principal-angle projection kernel
  minus its value for random subspaces;
* ``token_diagonal``: a score of a path's *structure*: how often the token path picks out the
  matching token;
* two magnitude baselines, which any score that claims to measure composition must beat:
  ``product_norm``, the spectral norm of ``left @ right`` without normalisation, and
  ``norm_product``, the product of the two heads' own Frobenius norms, which reads no
  composition at all.

``SCORES`` maps each name to its function. A researcher's own score has the same signature,
``(weights, mode)``, whether it is run by ``python -m headspace bench --score module:function``
or passed to ``headspace.benchmark.benchmark_table`` (which calls it with ``weights_of(model)``).

>>> from headspace.model import load
>>> w = weights_of(load("attn-only-2l"))
>>> s = token_diagonal(w, "K")
>>> s.shape, float(s[1, 0, 0, 0])
((2, 4, 2, 4), 0.0)
>>> sorted(SCORES)[:3]
['frobenius', 'frobenius_baseline', 'frobenius_unfolded']
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from headspace.composition import METRICS, MODES, token_path
from headspace.head_pairs import all_composition_scores, later_mask
from headspace.weights import Weights, from_model

__all__ = ["SCORES", "StoredWeights", "weights_of", "as_weights", "svd_component", "projection_kernel", "projection_kernel_baseline", "token_diagonal",
           "frobenius_unfolded", "reader_matrix", "product_norm", "norm_product", "BASELINES"]


def _mode(mode):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}; got {mode!r}")
    return mode


@dataclass(frozen=True)
class StoredWeights(Weights):
    """``Weights`` (norm scales folded in) that also keep the weights as stored, unfolded.

    Why: every score reads folded weights except ``frobenius_unfolded``, which measures what a
    TransformerLens user gets *without* ``fold_ln``; carrying both in the one argument keeps one
    signature, ``score(weights, mode)``, for every score. ``stored`` is a ``Weights`` of the
    unfolded matrices (its ``normalization_type`` the model's own).
    """
    stored: Weights | None = None


def weights_of(model) -> StoredWeights:
    """The ``Weights`` a score reads from a ``headspace.model.Model``: folded, and the stored ones beside.

    >>> from headspace.model import load
    >>> w = weights_of(load("attn-only-2l-rms"))
    >>> w.normalization_type, w.stored.normalization_type
    ('RMSPre', 'RMS')
    """
    f = from_model(model)
    stored = Weights(model.W_E, model.W_pos, model.W_Q, model.W_K, model.W_V, model.W_O, model.W_U,
                     model.config.get("normalization_type"), f.eps)
    return StoredWeights(f.W_E, f.W_pos, f.W_Q, f.W_K, f.W_V, f.W_O, f.W_U, f.normalization_type, f.eps,
                         stored=stored)


def as_weights(weights) -> Weights:
    """``weights`` if it is a ``Weights``; a ``headspace.model.Model`` through ``weights_of``.

    >>> as_weights("attn-only-2l")
    Traceback (most recent call last):
    ...
    ValueError: weights must be a headspace.weights.Weights or a headspace.model.Model; got str
    """
    if isinstance(weights, Weights):
        return weights
    from headspace.model import Model
    if isinstance(weights, Model):
        return weights_of(weights)
    raise ValueError(f"weights must be a headspace.weights.Weights or a headspace.model.Model; "
                     f"got {type(weights).__name__}")


def reader_matrix(W_Q, W_K, W_V, W_O, mode):
    """The reader's matrix ``right`` per head, [..., d_model, d_model]: ``W_Q W_K^T`` (Q),
    ``W_K W_Q^T`` (K) or ``W_V W_O`` (V)."""
    if mode == "Q":
        return W_Q @ np.swapaxes(W_K, -1, -2)
    if mode == "K":
        return W_K @ np.swapaxes(W_Q, -1, -2)
    return W_V @ W_O


def _pairs(weights, mode, pair_score):
    """Apply ``pair_score(left, right)`` to every earlier/later pair of ``weights`` (folded)."""
    _mode(mode)
    w = as_weights(weights)
    L, H = w.W_Q.shape[:2]
    OV = w.W_V @ w.W_O
    right = reader_matrix(w.W_Q, w.W_K, w.W_V, w.W_O, mode)
    out = np.zeros((L, H, L, H))
    for l1, h1, l2, h2 in np.argwhere(later_mask(out.shape)):
        out[l1, h1, l2, h2] = pair_score(OV[l1, h1], right[l2, h2])
    return out


def _metric(name):
    def score(weights, mode):
        return as_weights(weights).composition_scores(_mode(mode), name)
    score.__name__ = name
    score.__doc__ = (f"``headspace.composition.{name}`` on every pair of heads (norm scales folded in); "
                     f"its docstring gives the formula and source.")
    return score


def frobenius_unfolded(weights, mode):
    """TransformerLens's ``all_composition_scores(mode)`` on the stored weights, norms *not* folded.

    Source: TransformerLens (``HookedTransformer.all_composition_scores``), Elhage et al. 2021.
    Formula: ``||A B||_F / (||A||_F ||B||_F)`` with ``A = W_V W_O`` of the writer and ``B`` the
    reader's matrix, on the weights as trained: a LayerNorm's or RMSNorm's learned scale, which
    multiplies every reader's input, is left out, and LayerNorm's readers are not centred. Equal to
    ``frobenius`` for a model without normalisation. Reads ``weights.stored`` (``weights_of``); a
    plain ``Weights`` has lost the stored scales unless its model had no norm, and raises.
    """
    _mode(mode)
    w = as_weights(weights)
    stored = getattr(w, "stored", None)
    if stored is None:
        if w.normalization_type is not None:
            raise ValueError(f"weights must keep the stored, unfolded weights for frobenius_unfolded "
                             f"(headspace.pair_scores.weights_of(model)); got folded Weights of a "
                             f"{w.normalization_type} model without them")
        stored = w
    return all_composition_scores(stored.W_Q, stored.W_K, stored.W_V, stored.W_O, mode)


def svd_component(weights, mode):
    r"""Composition of the writer's strongest single SVD component with the reader.

    Source: Merullo, Eickhoff & Pavlick 2024, "Talking Heads: Understanding Inter-layer
    Communication in Transformer Language Models": decompose a head's OV matrix by SVD into
    rank-1 components and score each with the composition score; the communication between heads
    is concentrated in one or two components. We take the best component.
    Formula (row vectors): ``A = sum_i s_i u_i v_i^T``; component i scores
    ``||s_i u_i v_i^T B||_F / (||s_i u_i v_i^T||_F ||B||_F) = ||v_i^T B||_2 / ||B||_F`` (``u_i`` is a
    unit vector), so the score is ``max_i ||v_i^T B||_2 / ||B||_F`` over the writer's nonzero
    singular values (at most d_head of them). Unlike ``frobenius`` it does not weigh a direction by
    how strongly the writer uses it: a weak component that the reader reads scores high.
    """
    def pair(A, B):
        _, s, vt = np.linalg.svd(A)
        keep = s > s[0] * max(A.shape) * np.finfo(float).eps
        return float(np.linalg.norm(vt[keep] @ B, axis=1).max() / np.linalg.norm(B))
    return _pairs(weights, mode, pair)


def _basis(M, side):
    """Orthonormal basis of the row space (``side="rows"``) or column space of ``M``, numerical rank."""
    u, s, vt = np.linalg.svd(M, full_matrices=False)
    keep = s > s[0] * max(M.shape) * np.finfo(float).eps
    return vt[keep].T if side == "rows" else u[:, keep]


def projection_kernel_baseline(dim_a: int, dim_b: int, d_model: int) -> float:
    """Mean projection kernel of uniformly random subspaces of dimensions ``dim_a, dim_b`` in R^d_model:
    ``dim_a dim_b / d_model`` (``E[P_A] = dim_a / d I`` for a random projection, so ``E tr(P_A P_B) =
    dim_a dim_b / d``).

    >>> projection_kernel_baseline(8, 8, 32)
    2.0
    """
    for name, v in (("dim_a", dim_a), ("dim_b", dim_b), ("d_model", d_model)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer; got {v!r}")
    return dim_a * dim_b / d_model


def projection_kernel(weights, mode):
    r"""Projection kernel between the writer's output space and the reader's input space, minus random.

    Source: Yamagiwa, Takase & Shimodaira 2026, "Measuring Affinity between Attention-Head Weight
    Subspaces via the Projection Kernel": ``PK(A, B) = sum_k cos^2 theta_k = ||Q_A^T Q_B||_F^2``
    over the principal angles ``theta_k`` between two heads' weight subspaces (``Q`` orthonormal
    bases), judged against the distribution for random subspaces. Here ``A`` is the writer's
    output space (row space of its ``W_O``, where ``x @ W_V W_O`` lies) and ``B`` the reader's
    input space (column space of its ``W_Q``, ``W_K`` or ``W_V``, folded). Score: ``PK(A, B) -
    dim A dim B / d_model``, the excess over the mean for random subspaces
    (``projection_kernel_baseline``). With every head of full rank d_head it is an increasing
    function of the ``subspace`` metric (``PK = d_head * subspace``), so the two rank pairs alike.
    """
    _mode(mode)
    w = as_weights(weights)
    L, H, M = w.W_Q.shape[:3]
    reads = {"Q": w.W_Q, "K": w.W_K, "V": w.W_V}[mode]
    out = np.zeros((L, H, L, H))
    for l1, h1, l2, h2 in np.argwhere(later_mask(out.shape)):
        A = _basis(w.W_O[l1, h1], "rows")
        B = _basis(reads[l2, h2], "cols")
        pk = float(np.sum((A.T @ B) ** 2))
        out[l1, h1, l2, h2] = pk - projection_kernel_baseline(A.shape[1], B.shape[1], M)
    return out


def token_diagonal(weights, mode):
    r"""Fraction of tokens for which the two heads' token path picks out the same token.

    A score of the path's structure, not its size. The token path (``composition.token_path``,
    Elhage et al.'s virtual weights) is ``T = W_E A B W_E^T`` for Q and K and ``W_E A B W_U`` for V.
    The score is the fraction of tokens t whose own entry is the largest of its line of T:
    K (rows: key tokens sent through the writer, columns: query tokens): for query token t, the key
    that carries t scores highest (what an induction head needs of a previous-token head);
    Q (rows: query tokens through the writer, columns: key tokens): a query carrying t prefers the
    key t; V (rows: source tokens, columns: logits): t's own logit is the largest (copying through
    both heads). Folded weights; positions and MLPs are not on this path. In [0, 1]; about
    ``1/d_vocab`` for unrelated heads.
    """
    _mode(mode)
    W = as_weights(weights)

    def pair(A, B):
        T = token_path(A, B, W_E=W.embedding_read(), W_U=W.W_U, mode=mode)
        own = np.diag(T)
        best = T.max(axis=0) if mode == "K" else T.max(axis=1)
        return float(np.mean(own >= best))
    return _pairs(W, mode, pair)


def product_norm(weights, mode):
    r"""The size of the path through both heads, unnormalised: the spectral norm ``||A B||_2``.

    A baseline. ``A = W_V W_O`` of the writer, ``B`` the reader's matrix (row vectors, norm scales
    folded in): the largest factor by which the two heads together can scale a residual vector.
    Every normalised score (``frobenius`` and the others) divides a product's size by the heads'
    own sizes, so that a large head does not score high for being large. This score does not: it
    is the "Use it" page's example score, and it ranks a pair high if its heads are large *or* if
    they line up. Paper convention: ``||W_B W_A||_2`` with ``W_A = W_OV`` of the writer.
    Source: ours, the example score of the site's "Use it" page, kept as a baseline after a
    review found it ranked the zoo's pairs better than every normalised score.

    >>> from headspace.model import load
    >>> w = weights_of(load("attn-only-2l"))
    >>> s = product_norm(w, "K")
    >>> bool(s[0, 1, 1, 2] > 0), float(s[1, 0, 0, 0])      # a later reader; no pair within a layer
    (True, 0.0)
    """
    return _pairs(weights, mode, lambda A, B: float(np.linalg.norm(A @ B, 2)))


def norm_product(weights, mode):
    r"""The two heads' own sizes, multiplied: ``||A||_F ||B||_F``. A baseline that reads no composition.

    ``A = W_V W_O`` of the writer, ``B`` the reader's matrix, norm scales folded in (as
    ``product_norm``). It never forms the product ``A B``, so it cannot see whether what the
    writer writes is what the reader reads: turning one head's subspace against the other's leaves
    it unchanged. It is the denominator of ``frobenius`` (``frobenius = ||A B||_F / (||A||_F
    ||B||_F)``), and it bounds ``product_norm`` from above (``||A B||_2 <= ||A||_2 ||B||_2 <=
    ||A||_F ||B||_F``). A score that ranks pairs no better than this one has not shown that it
    measures composition; it may only be measuring how large the heads are. Source: the
    denominator of Elhage et al. 2021's composition score, on its own, as a baseline.

    >>> from headspace.model import load
    >>> w = weights_of(load("attn-only-2l"))
    >>> bool(np.all(product_norm(w, "V") <= norm_product(w, "V") + 1e-12))   # the bound
    True
    """
    return _pairs(weights, mode, lambda A, B: float(np.linalg.norm(A) * np.linalg.norm(B)))


#: The magnitude baselines: scores that read the heads' sizes, not whether they compose.
BASELINES = ("product_norm", "norm_product")

#: name -> score(weights, mode), in the order the benchmark's table lists them.
SCORES = {name: _metric(name) for name in METRICS}
SCORES.update(frobenius_unfolded=frobenius_unfolded, svd_component=svd_component,
              projection_kernel=projection_kernel, token_diagonal=token_diagonal,
              product_norm=product_norm, norm_product=norm_product)
