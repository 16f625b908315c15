"""Path ablation: the causal ground truth that weight-based composition scores are judged against.

Why: a composition score reads two heads' weights and says how much one reads what the other
writes. Whether the model *uses* that path is a question about its behaviour, which the weights
alone do not answer. Path ablation answers it directly: remove what one writer sends along one
path into one reader, run the model, and see how much worse it predicts.

For writer head ``(l1, h1)`` and reader head ``(l2, h2)`` with ``l2 > l1``: the writer's output
``o = pattern @ v @ W_O`` [batch, seq, d_model] (without ``b_O``) is replaced by its mean over
batch and positions, in the ``mode`` input of the reader only (its queries for Q, keys for K,
values for V). The reader's input for that mode becomes ``resid_pre[l2] - o + mean(o)`` and goes
through the reader's own normalisation, recomputed as the model would; its other two inputs, the
other heads of layer ``l2`` and everything before stay as they were. The reader's changed output
then flows on through the residual stream: later layers and the unembedding are recomputed.
The effect is the increase in mean next-token loss (nats) over every position of ``tokens``.

>>> from headspace.model import load
>>> from headspace.heads import repeated_tokens
>>> model = load("attn-only-2l")
>>> effect = path_ablation(model, repeated_tokens(128, 64, batch=8, seed=1), "K")
>>> effect.shape, bool(effect[0, 1, 1, 0] > 0.1), float(effect[1, 0, 0, 0])   # prev-token -> induction
((2, 4, 2, 4), True, 0.0)
"""

from __future__ import annotations

import numpy as np

from headspace.composition import MODES
from headspace.head_pairs import later_mask
from headspace.model import cross_entropy
from headspace.stats import spearman_along

__all__ = ["path_ablation", "rank_correlation", "parse_modes"]


def parse_modes(mode) -> tuple[tuple[str, ...], bool]:
    """``(modes, single)``: ``mode`` as a tuple of ``"Q" "K" "V"``, and whether one mode was named.

    Why: every function over path ablations takes one mode (and returns one array) or a sequence
    of them such as ``"QKV"`` (and stacks one array per mode); this is the one reading of that
    argument.

    >>> parse_modes("K"), parse_modes("QV")
    ((('K',), True), (('Q', 'V'), False))
    """
    if isinstance(mode, str) and mode in MODES:
        return (mode,), True
    if isinstance(mode, (str, list, tuple)) and len(mode) > 0 and all(m in MODES for m in mode):
        return tuple(mode), False
    raise ValueError(f"mode must be one of 'Q', 'K', 'V' or a sequence of them; got {mode!r}")


def path_ablation(model, tokens, mode, positions=None) -> np.ndarray:
    """Loss increase (nats) when each writer's output is mean-ablated in one reader's ``mode`` input.

    Returns ``[n_layers, n_heads, n_layers, n_heads]`` (``out[l1, h1, l2, h2]``; 0 where
    ``l2 <= l1``), or ``[len(mode), ...]`` for a sequence of modes such as ``"QKV"``. ``model`` is
    a ``headspace.model.Model``; ``tokens`` [batch, seq] integer ids with ``seq >= 2``.
    ``positions`` (a slice or index array over the loss positions ``0 .. seq-2``; default all)
    picks where the loss is averaged, for example the repeated half of an induction probe.
    Cost: one clean forward pass, then per pair one head and the layers after it.
    """
    modes, single = parse_modes(mode)
    toks, one = model.check_tokens(tokens)
    if one or toks.shape[-1] < 2:
        raise ValueError(f"tokens must have shape [batch, seq] with seq >= 2 (a next token to predict); "
                         f"got {list(np.shape(tokens))}")
    L, H = model.config["n_layers"], model.config["n_heads"]
    # the clean run, layer by layer: residual stream before each layer, each head's output
    resid = [model.embed(toks)]
    outs, inputs = [], []
    for l in range(L):
        x = model.layer_input(resid[l], l)
        _, out = model.attend(l, x, x, x)                       # [batch, n_heads, seq, d_model]
        outs.append(out)
        inputs.append(x)
        resid.append(model.mlp(resid[l] + out.sum(axis=1) + model.b_O[l], l))
    where = slice(None) if positions is None else positions
    clean = float(cross_entropy(model.unembed(resid[L]), toks)[:, where].mean())
    effect = np.zeros((len(modes), L, H, L, H))
    for l1, h1, l2 in np.argwhere(later_mask((L, H, L, 1))[..., 0]):
        o = outs[l1][:, h1]
        shift = o.mean(axis=(0, 1)) - o                     # ablated stream = stream + shift
        ablated = model.layer_input(resid[l2] + shift, l2)
        x = inputs[l2]
        for i, m in enumerate(modes):
            xq, xk, xv = (ablated if m == s else x for s in "QKV")
            _, new = model.attend(l2, xq, xk, xv)           # every reader of layer l2 at once
            # one stream per reader h2: only that reader's output changed [n_heads, batch, seq, d]
            mid = resid[l2] + outs[l2].sum(axis=1) + model.b_O[l2]
            r = mid[None] + np.moveaxis(new - outs[l2], 1, 0)
            r = model.mlp(r.reshape((H * toks.shape[0],) + r.shape[2:]), l2)
            for l in range(l2 + 1, L):                  # later layers see the changed stream
                y = model.layer_input(r, l)
                r = model.mlp(r + model.attend(l, y, y, y)[1].sum(axis=1) + model.b_O[l], l)
            loss = cross_entropy(model.unembed(r), np.tile(toks, (H, 1)))
            effect[i, l1, h1, l2] = loss[:, where].reshape(H, -1).mean(axis=1) - clean
    return effect[0] if single else effect


def rank_correlation(x, y) -> float:
    """Spearman's rank correlation of two equal-length sequences (ties get their average rank).

    Pearson's correlation of the ranks; 0 when either sequence is constant (no order to agree with).
    The site's figures read it; it is ``headspace.stats.spearman_along`` (the package's one rank
    correlation) with that convention for a constant.

    >>> rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]), rank_correlation([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    """
    x, y = (np.asarray(v, dtype=float).ravel() for v in (x, y))
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"x and y must be sequences of the same length >= 2; got lengths {x.size} and {y.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x and y must be finite")
    r = float(spearman_along(x, y))
    return 0.0 if r != r else r
