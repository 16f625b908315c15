"""The path expansion of an attention-only transformer's logits: direct, single-head and virtual-head terms.

Why: with its attention patterns held fixed, an attention-only transformer is linear in its
embeddings, so its logits are a sum of terms, one per path the embedding can take to the
unembedding (Elhage et al. 2021). In a two-layer model the paths are the direct path (embedding
straight to the unembedding), one path through each single head, and one through each pair of a
layer-0 head and a layer-1 head: a *virtual head*, the composition of the two. Which terms carry
the prediction says which heads work alone and which work as a pair.

Here a path starts at the embedding the model adds at each position (token plus position,
``W_E[t] + W_pos[p]``) and its term at a position is the vector of logits it contributes. Each
head ``h`` of layer ``l`` maps a residual-stream vector field ``r`` to ``A^h (s_l r) W_V^h W_O^h``
where ``A^h`` is its attention pattern and ``s_l`` the normalisation factor of its input, both
taken from the model's own forward pass and held fixed; the final normalisation factor likewise.
Every bias (``b_V`` through ``W_O``, ``b_O``, ``b_U``) is followed along the same maps and summed in
one ``"bias"`` term, so the terms add up to the model's logits exactly (to rounding).

Labels: ``"direct"``, ``"bias"``, ``"l.h"`` for a single head, ``"l1.h1>l2.h2"`` for the virtual
head through ``l1.h1`` then ``l2.h2`` (longer chains in deeper models likewise).

>>> from headspace.model import load
>>> model = load("attn-only-2l")
>>> terms = path_terms(model, [5, 9, 2, 7, 5, 9, 2, 7])
>>> len(terms), terms["0.1>1.2"].shape           # 1 + 1 + 8 + 16 terms, each [seq, d_vocab]
(26, (8, 128))
>>> bool(np.allclose(sum(terms.values()), model.logits([5, 9, 2, 7, 5, 9, 2, 7])))
True
"""

from __future__ import annotations

import numpy as np

from headspace.model import cross_entropy

__all__ = ["path_terms", "path_labels", "ablated_losses", "DIRECT", "BIAS", "VIRTUAL"]

DIRECT, BIAS = "direct", "bias"
VIRTUAL = ">"  # joins the heads of a virtual head: "0.1>1.2"
MAX_PATHS = 4096  # (1 + n_heads) ** n_layers terms; beyond this the expansion is not a readable picture


def path_labels(n_layers: int, n_heads: int) -> list[str]:
    """Every term's label, in the order ``path_terms`` returns them.

    >>> path_labels(2, 1)
    ['direct', 'bias', '0.0', '1.0', '0.0>1.0']
    """
    paths = [()]
    for l in range(n_layers):
        paths += [p + ((l, h),) for p in paths for h in range(n_heads)]
    paths.sort(key=len)
    return [DIRECT, BIAS] + [VIRTUAL.join(f"{l}.{h}" for l, h in p) for p in paths[1:]]


def path_terms(model, tokens) -> dict[str, np.ndarray]:
    """The logits split into one term per path, ``{label: [..., seq, d_vocab]}``; they sum to the logits.

    ``model`` is a ``headspace.model.Model`` (attention only; any learned norm scale is folded in
    first), ``tokens`` ``[seq]`` or ``[batch, seq]`` integer ids. Attention patterns and
    normalisation factors come from the model's forward pass on ``tokens`` and are held fixed.
    Cost: one forward pass, then a residual-stream field for each path that does not end in the
    last layer; the last layer's terms are read through each head's ``d_head``-wide maps.
    """
    model = model.fold_norm()
    toks, single = model.check_tokens(tokens)
    L, H = model.config["n_layers"], model.config["n_heads"]
    if (1 + H) ** L > MAX_PATHS:
        raise ValueError(f"model must have at most {MAX_PATHS} paths ((1 + n_heads) ** n_layers); got "
                         f"(1 + {H}) ** {L} = {(1 + H) ** L}")
    normed = model.config.get("normalization_type") is not None
    # residual-stream contribution of each path, [batch, seq, d_model]; tuples of (layer, head) as keys
    fields: dict[tuple, np.ndarray] = {(): model.embed(toks)}
    bias = np.zeros_like(fields[()])
    resid = fields[()]
    for l in range(L - 1):
        scale = _inverse_rms(resid, model.eps) if normed else 1.0       # [batch, seq, 1], held fixed
        pattern, _ = model.attend(l, *(model.layer_input(resid, l),) * 3)  # [batch, n_heads, seq, seq]
        W_OV = model.W_V[l] @ model.W_O[l]                                # [n_heads, d_model, d_model]
        new = {}
        for path, field in fields.items():
            moved = pattern @ (field * scale)[:, None] @ W_OV             # [batch, n_heads, seq, d_model]
            for h in range(H):
                new[path + ((l, h),)] = moved[:, h]
        bias = bias + (pattern @ (bias * scale)[:, None] @ W_OV).sum(axis=1) + _constant(model, l)
        fields.update(new)
        resid = sum(fields.values()) + bias
    # The last layer's paths (most of them: (1 + n_heads) ** (n_layers - 1) * n_heads) end in the
    # unembedding, so each is read through its head's low-rank maps, W_V [d_model, d_head] then
    # W_O W_U [d_head, d_vocab], and never written out in the residual stream: a third of the
    # multiplications of moving d_model-wide fields through W_OV and each through W_U.
    l = L - 1
    scale = _inverse_rms(resid, model.eps) if normed else 1.0
    pattern, _ = model.attend(l, *(model.layer_input(resid, l),) * 3)
    paths = list(fields)
    sources = np.stack([fields[p] for p in paths] + [bias])             # [path, batch, seq, d_model]
    read = pattern @ ((sources * scale)[:, :, None] @ model.W_V[l])     # [path, batch, n_heads, seq, d_head]
    constant = _constant(model, l)
    final = 1.0
    if normed:  # the last layer's output, for the final norm's scale: every head of every path at once
        resid = resid + (read.sum(axis=0) @ model.W_O[l]).sum(axis=1) + constant
        final = _inverse_rms(resid, model.eps)
    last = read @ (model.W_O[l] @ model.W_U)                             # [path, batch, n_heads, seq, d_vocab]
    if normed:
        last *= final[:, None]
    out = {path: (fields[path] * final) @ model.W_U for path in paths}
    out.update({path + ((l, h),): last[k, :, h] for k, path in enumerate(paths) for h in range(H)})
    out = {DIRECT if not path else VIRTUAL.join(f"{l}.{h}" for l, h in path): term
           for path, term in sorted(out.items(), key=lambda kv: len(kv[0]))}
    bias_term = ((bias + constant) * final) @ model.W_U + last[-1].sum(axis=1) + model.b_U
    out = {DIRECT: out.pop(DIRECT), BIAS: bias_term, **out}
    return {k: v[0] for k, v in out.items()} if single else out


def ablated_losses(model, tokens, positions=None, terms=None) -> dict[str, float]:
    """Mean next-token loss (nats) with each path term removed from the logits, ``{label: loss}``,
    and the unablated loss under ``"none"``.

    ``positions`` (a slice or index array over the loss positions ``0 .. seq-2``; default all)
    picks where the loss is averaged, for example the repeated half of an induction probe.
    ``terms`` may pass ``path_terms(model, tokens)`` computed already.

    >>> from headspace.model import load
    >>> losses = ablated_losses(load("attn-only-2l"), [5, 9, 2, 7, 5, 9, 2, 7], positions=slice(4, None))
    >>> losses["0.1>1.2"] > losses["none"]        # the induction circuit's virtual head matters here
    True
    """
    toks, _ = model.check_tokens(tokens)
    if toks.shape[-1] < 2:
        raise ValueError(f"tokens must have at least 2 positions (a next token to predict); got seq={toks.shape[-1]}")
    terms = path_terms(model, tokens) if terms is None else terms
    logits = sum(terms.values())
    where = slice(None) if positions is None else positions
    target = np.asarray(tokens)

    def loss(lg):
        return float(np.mean(cross_entropy(lg, target)[..., where]))

    out = {"none": loss(logits)}
    out.update({label: loss(logits - term) for label, term in terms.items()})
    return out


def _constant(model, l: int) -> np.ndarray:
    """What layer ``l`` adds whatever it reads, [d_model]: ``b_O`` and each head's ``b_V`` through its ``W_O``."""
    return model.b_O[l] + (model.b_V[l][:, None] @ model.W_O[l]).sum(axis=(0, 1))


def _inverse_rms(x: np.ndarray, eps: float) -> np.ndarray:
    return 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)
