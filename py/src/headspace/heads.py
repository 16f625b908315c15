"""Find the previous-token head and the induction head of a model from its attention patterns.

Why: composition scores are about pairs of heads, and the pair that matters in a two-layer
attention-only model is a previous-token head in layer 0 feeding an induction head in layer 1
(Elhage et al. 2021; Olsson et al. 2022). We find both by behaviour, not by weights, so the
labels do not depend on any composition score.

The probe is ``repeated_tokens``: ``T = n_ctx // 2`` uniform random tokens, then the same ``T``
tokens again (seeded). Per head, with ``pattern[i, j]`` the attention from query ``i`` to key
``j`` averaged over the batch:

* previous-token score: the mean of ``pattern[i, i - 1]`` over ``i >= 1``;
* induction score: the mean of ``pattern[i, i - T + 1]`` over ``i >= T``: in the repeat, the
  token after the earlier copy of the current token.

Both lie in [0, 1]; 1 means the head puts all its attention there. They are the scores
``scripts/train_models.py`` logs in ``training_curve.json``.

>>> from headspace.model import load
>>> model = load("attn-only-2l")
>>> prev, ind = head_scores(model)
>>> prev.shape
(2, 4)
>>> previous_token_head(model)[0], induction_head(model)[0]    # layers
(0, 1)
"""

from __future__ import annotations

import numpy as np

from headspace.validate import as_number

__all__ = ["repeated_tokens", "repeated_span", "head_scores", "probe_scores", "sequence_scores", "previous_token_head", "induction_head", "find_pair"]


def repeated_tokens(d_vocab: int, n_ctx: int, batch: int = 16, seed: int = 0) -> np.ndarray:
    """``[batch, 2T]`` int64: T = n_ctx // 2 seeded uniform random tokens, then the same T again.

    >>> t = repeated_tokens(10, 8, batch=2)
    >>> t.shape, bool((t[:, :4] == t[:, 4:]).all())
    ((2, 8), True)
    """
    d_vocab = int(as_number("d_vocab", d_vocab, lo=1))
    n_ctx = int(as_number("n_ctx", n_ctx, lo=4))
    batch = int(as_number("batch", batch, lo=1))
    half = _rng(seed).integers(0, d_vocab, (batch, n_ctx // 2))
    return np.concatenate([half, half], axis=1)


def _rng(seed) -> np.random.Generator:
    """numpy's generator of ``seed``: its own refusal ("expected non-negative integer") names no argument."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise ValueError(f"seed must be a non-negative integer or a sequence of them; got {seed!r}") from None


def repeated_span(d_vocab: int, prefix: int, span: int, seed: int = 0) -> np.ndarray:
    """``[prefix + 2 * span]`` int64: ``prefix`` seeded random tokens, then a random span twice.

    A single sequence for looking at heads by eye: in the second copy of the span an induction
    head attends to the token after the current token's first copy.

    >>> t = repeated_span(50, 3, 5)
    >>> t.shape, bool((t[3:8] == t[8:]).all())
    ((13,), True)
    """
    d_vocab = int(as_number("d_vocab", d_vocab, lo=1))
    prefix = int(as_number("prefix", prefix, lo=0))
    span = int(as_number("span", span, lo=1))
    rng = _rng(seed)
    head, body = rng.integers(0, d_vocab, prefix), rng.integers(0, d_vocab, span)
    return np.concatenate([head, body, body])


def head_scores(model, tokens=None) -> tuple[np.ndarray, np.ndarray]:
    """``(previous_token, induction)``, each ``[n_layers, n_heads]``, from ``model.attention_patterns``.

    ``tokens`` [batch, 2T] must repeat its first half; default ``repeated_tokens(d_vocab, n_ctx)``.
    """
    cfg = model.config
    toks = repeated_tokens(cfg["d_vocab"], cfg["n_ctx"]) if tokens is None else np.asarray(tokens)
    if toks.ndim != 2 or toks.shape[1] < 4 or toks.shape[1] % 2:
        raise ValueError(f"tokens must have shape [batch, 2T] with T >= 2; got {list(toks.shape)}")
    T = toks.shape[1] // 2
    if not (toks[:, :T] == toks[:, T:]).all():
        raise ValueError("tokens must repeat their first half in their second half (an induction probe)")
    return probe_scores(model.attention_patterns(toks).mean(axis=0))


def probe_scores(pattern):
    """``(previous_token, induction)`` per head from the batch-mean attention ``pattern``
    ``[..., 2T, 2T]`` of a probe whose second half repeats its first (``repeated_tokens``).

    Previous-token: the mean attention from position ``i`` to ``i - 1``. Induction: the mean
    attention from ``i >= T`` to ``i - T + 1``, the token after the current token's first copy.
    It uses only ``.diagonal`` and ``.mean``, so the trainer applies the same definition to
    torch tensors.

    >>> p = np.eye(6)[None, None][..., [0, 0, 1, 2, 3, 4], :]     # always the previous token
    >>> [s.round(2).tolist() for s in probe_scores(p)]
    [[[1.0]], [[0.0]]]
    """
    T = pattern.shape[-1] // 2
    previous = pattern.diagonal(-1, -2, -1).mean(-1)
    induction = pattern.diagonal(-(T - 1), -2, -1)[..., 1:].mean(-1)
    return previous, induction


def sequence_scores(pattern, tokens) -> tuple[np.ndarray, np.ndarray]:
    """``(previous_token, induction)`` scores, each ``[n_layers, n_heads]``, on any one sequence.

    ``pattern`` is ``[n_layers, n_heads, seq, seq]`` (``Model.attention_patterns`` of ``tokens
    [seq]``). The previous-token score is the mean of ``pattern[i, i - 1]`` over ``i >= 1``. The
    induction score generalises ``head_scores`` to sequences that need not repeat exactly: over
    the queries ``i`` whose token occurred before, the mean attention paid to the keys just after
    those earlier occurrences (``j <= i`` with ``tokens[j - 1] == tokens[i]``, ``j - 1 < i``). It
    is 0 where no token repeats: there is nothing to induct from.

    >>> p = np.zeros((1, 1, 4, 4)); p[0, 0, 0, 0] = p[0, 0, 1, 0] = p[0, 0, 2, 1] = p[0, 0, 3, 2] = 1
    >>> [s.tolist() for s in sequence_scores(p, [7, 8, 9, 7])]   # always the previous token: no induction
    [[[1.0]], [[0.0]]]
    """
    pattern = np.asarray(pattern, dtype=float)
    toks = np.asarray(tokens)
    seq = toks.shape[-1]
    if toks.ndim != 1 or pattern.ndim != 4 or pattern.shape[-2:] != (seq, seq):
        raise ValueError(f"pattern must have shape [n_layers, n_heads, seq, seq] with seq={seq} from tokens [seq]; "
                         f"got pattern {list(pattern.shape)} and tokens {list(toks.shape)}")
    if seq < 2:
        raise ValueError(f"tokens must have at least 2 positions; got seq={seq}")
    prev = np.diagonal(pattern, offset=-1, axis1=-2, axis2=-1).mean(-1)
    i, j = np.indices((seq, seq))
    after_copy = (j >= 1) & (j <= i) & (toks[np.maximum(j - 1, 0)] == toks[i]) & (j - 1 < i)
    queries = after_copy.any(axis=1)
    if not queries.any():
        return prev, np.zeros_like(prev)
    induction = (pattern * after_copy).sum(-1)[..., queries].mean(-1)
    return prev, induction


def previous_token_head(model, tokens=None) -> tuple[int, int]:
    """``(layer, head)`` with the highest previous-token score among all layers but the last
    (a head in the last layer has no later head to feed)."""
    return find_pair(model, tokens)[0]


def induction_head(model, tokens=None) -> tuple[int, int]:
    """``(layer, head)`` with the highest induction score among layers 1 and later (an induction
    head needs an earlier head's output)."""
    return find_pair(model, tokens)[1]


def find_pair(model, tokens=None) -> tuple[tuple[int, int], tuple[int, int]]:
    """``((layer, head) of the previous-token head, (layer, head) of the induction head)`` from one
    forward pass of the probe."""
    prev, ind = head_scores(model, tokens)
    if prev.shape[0] < 2:
        raise ValueError(f"model must have at least 2 layers for a composing pair; got n_layers = {prev.shape[0]}")
    l1, h1 = np.unravel_index(int(np.argmax(prev[:-1])), prev[:-1].shape)
    l2, h2 = np.unravel_index(int(np.argmax(ind[1:])), ind[1:].shape)
    return (int(l1), int(h1)), (int(l2) + 1, int(h2))
