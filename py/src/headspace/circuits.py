"""A head's full circuits in token space, and the copying score read off its OV circuit.

Why: a head's weights act on the residual stream, which has no readable basis; multiplied through
the embedding and unembedding they become maps between tokens, which do (Elhage et al. 2021):

* full OV circuit ``W_E W_V W_O W_U`` [d_vocab, d_vocab_out]: if the head attends to token ``s``,
  row ``s`` is what it adds to every output logit;
* full QK circuit ``W_E W_Q W_K^T W_E^T`` [d_vocab, d_vocab]: entry ``[q, k]`` is the attention
  score a query token ``q`` gives a key token ``k`` (through the embeddings alone).

A head *copies* if attending to a token raises that same token's logit. The Framework's copying
score sums the OV circuit's eigenvalues over the sum of their absolute values: 1 when every
eigenvalue is positive (the map reinforces what it reads), -1 when every one is negative. The
circuit has rank at most ``d_head``, and ``W_E W_V W_O W_U`` shares its nonzero eigenvalues with
the ``d_head x d_head`` product ``W_O W_U W_E W_V``, so the score costs one small eigenproblem.

Weights in the TransformerLens layout of one head: ``W_E [d_vocab, d_model]``, ``W_Q, W_K, W_V
[d_model, d_head]``, ``W_O [d_head, d_model]``, ``W_U [d_model, d_vocab]``.

>>> W_E = np.random.default_rng(0).standard_normal((10, 6))     # 10 tokens, d_model 6
>>> W_U = np.linalg.pinv(W_E)                                   # unembedding undoes the embedding
>>> W_V, W_O = np.eye(6, 3), np.eye(3, 6)                       # d_head 3: reads and writes 3 directions
>>> round(copying_score(W_E, W_V, W_O, W_U), 6), round(copying_score(W_E, W_V, -W_O, W_U), 6)
(1.0, -1.0)
>>> full_ov_circuit(W_E, W_V, W_O, W_U).shape
(10, 10)
"""

from __future__ import annotations

import numpy as np

from headspace.validate import as_array

__all__ = ["full_ov_circuit", "full_qk_circuit", "ov_eigenvalues", "copying_score", "diagonal_top_fraction"]


def _check(W_E, W_U=None, **heads):
    W_E = as_array("W_E", W_E, ndim=2)
    d_model = W_E.shape[1]
    out = [W_E]
    for name, W in heads.items():
        W = as_array(name, W, ndim=2)
        want = (None, d_model) if name == "W_O" else (d_model, None)
        if any(w is not None and w != s for w, s in zip(want, W.shape)):
            shape = "[d_head, d_model]" if name == "W_O" else "[d_model, d_head]"
            raise ValueError(f"{name} must have shape {shape} with d_model={d_model} (from W_E); got {list(W.shape)}")
        out.append(W)
    if W_U is not None:
        out.append(as_array("W_U", W_U, shape=(d_model, None)))
    return out


def full_ov_circuit(W_E, W_V, W_O, W_U) -> np.ndarray:
    """``W_E W_V W_O W_U`` [d_vocab, d_vocab_out]: row = the token attended to, column = the logit it moves."""
    W_E, W_V, W_O, W_U = _check(W_E, W_U, W_V=W_V, W_O=W_O)
    if W_V.shape[1] != W_O.shape[0]:
        raise ValueError(f"W_V [d_model, d_head] and W_O [d_head, d_model] must share d_head; "
                         f"got {list(W_V.shape)} and {list(W_O.shape)}")
    return (W_E @ W_V) @ (W_O @ W_U)


def full_qk_circuit(W_E, W_Q, W_K) -> np.ndarray:
    """``W_E W_Q W_K^T W_E^T`` [d_vocab, d_vocab]: row = query token, column = key token, entry = attention score
    (before the ``1/sqrt(d_head)`` scale and the softmax)."""
    W_E, W_Q, W_K = _check(W_E, W_Q=W_Q, W_K=W_K)
    if W_Q.shape != W_K.shape:
        raise ValueError(f"W_Q and W_K must have the same shape [d_model, d_head]; got {list(W_Q.shape)} and {list(W_K.shape)}")
    return (W_E @ W_Q) @ (W_E @ W_K).T


def ov_eigenvalues(W_E, W_V, W_O, W_U) -> np.ndarray:
    """The ``d_head`` eigenvalues of the full OV circuit that can be nonzero (complex, [d_head]).

    ``W_E W_V W_O W_U`` has rank at most ``d_head``; its other ``d_vocab - d_head`` eigenvalues are 0.
    Needs a square circuit (``d_vocab_out == d_vocab``).
    """
    W_E, W_V, W_O, W_U = _check(W_E, W_U, W_V=W_V, W_O=W_O)
    if W_U.shape[1] != W_E.shape[0]:
        raise ValueError(f"W_U must map back to the d_vocab={W_E.shape[0]} input tokens for eigenvalues; "
                         f"got d_vocab_out={W_U.shape[1]}")
    if W_V.shape[1] != W_O.shape[0]:
        raise ValueError(f"W_V [d_model, d_head] and W_O [d_head, d_model] must share d_head; "
                         f"got {list(W_V.shape)} and {list(W_O.shape)}")
    return np.linalg.eigvals(W_O @ (W_U @ W_E) @ W_V)   # cyclic: same nonzero eigenvalues


def copying_score(W_E, W_V, W_O, W_U) -> float:
    """Sum of the full OV circuit's eigenvalues over the sum of their absolute values, in [-1, 1].

    A zero circuit has no score and raises.
    """
    eig = ov_eigenvalues(W_E, W_V, W_O, W_U)
    size = float(np.abs(eig).sum())
    if size <= np.finfo(float).tiny:
        raise ValueError("the OV circuit W_E W_V W_O W_U is zero: a copying score needs a nonzero circuit")
    return float(eig.sum().real / size)


def diagonal_top_fraction(M) -> float:
    """Share of rows whose largest entry is on the diagonal: how often a token's own column wins.

    For a full OV circuit, the share of tokens that raise their own logit most; for a full QK
    circuit, the share of query tokens that attend most to their own token.

    >>> diagonal_top_fraction([[2.0, 1.0], [0.0, -1.0]])
    0.5
    """
    M = as_array("M", M, ndim=2)
    n = min(M.shape)
    return float(np.mean(np.argmax(M[:n], axis=1) == np.arange(n)))
