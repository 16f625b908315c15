"""Edge attribution patching: every path's effect from one forward and one backward pass.

Why: path patching (``headspace.ground_truth``) runs the model again for every pair of heads and
mode, which is what makes it a ground truth and what makes it slow. Edge attribution patching
(Syed, Rager & Conmy 2023; the inference-time route of the current circuit benchmarks) replaces
each run by its first-order term: if the writer's output moves by ``Delta`` (its output on
another sequence minus its own), the loss moves by about ``grad . Delta``, where ``grad`` is the
gradient of the loss with respect to the *reader's own input* in that mode. One backward pass
gives the gradient at every reader's Q, K and V input at once, so every path costs a dot product:

    ``eap[m, l1, h1, l2, h2] = sum over (batch, position) of  g[m, l2, h2] . Delta[l1, h1]``

with ``g`` the gradient of the mean loss over the chosen positions with respect to the residual
stream as head ``(l2, h2)`` reads it for ``m`` (before its norm), and ``Delta = o[b + 1] - o[b]``
(``"resample"``) or ``mean(o) - o`` (``"mean"``): the same patch as ``ground_truth``. It is a score
that needs data but no weights-only formula, for ``headspace.benchmark`` to set beside the weight
scores; exact where the model is linear along the patch, and as good as the first order otherwise.

The backward pass is written here by hand for the zoo's architecture (learned positions, LN,
RMSNorm or none, attention, ReLU MLPs, a final norm and the unembedding); ``tests/unit`` checks
it against finite differences and its scores against the limit of exact path patching.

>>> from headspace.model import load
>>> from headspace.heads import repeated_tokens
>>> model = load("attn-only-2l")
>>> toks = repeated_tokens(128, 16, batch=8, seed=1)
>>> eap = edge_attribution(model, toks, "K")
>>> eap.shape, bool(eap[0, 1, 1, 0] > 0.1), float(eap[1, 0, 0, 0])   # prev-token -> induction, by gradient
((2, 4, 2, 4), True, 0.0)
"""

from __future__ import annotations

import numpy as np

from headspace.causal import parse_modes
from headspace.head_pairs import later_mask

__all__ = ["edge_attribution", "input_gradients"]


def _norm_fwd(model, x, w, b):
    """``(y, cache)`` of the model's norm on ``x`` (``Model._norm``), the cache for ``_norm_bwd``."""
    norm = model.config.get("normalization_type")
    if norm is None:
        return x, None
    xc = x - x.mean(axis=-1, keepdims=True) if norm in ("LN", "LNPre") else x
    r = np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + model.eps)
    xhat = xc / r
    y = xhat if w is None else xhat * w
    return (y if b is None else y + b), (norm, xhat, r, w)


def _norm_bwd(cache, dy):
    """The gradient at the norm's input from ``dy`` at its output (a per-position linear map)."""
    if cache is None:
        return dy
    norm, xhat, r, w = cache
    d = dy if w is None else dy * w
    if norm in ("LN", "LNPre"):
        d = d - d.mean(axis=-1, keepdims=True)
    return (d - xhat * (d * xhat).mean(axis=-1, keepdims=True)) / r


def input_gradients(model, tokens, mask=None) -> tuple[np.ndarray, list]:
    """The gradient of the mean loss at every reader's Q, K and V input, and each head's output.

    Returns ``(grads, outs)``: ``grads [n_layers, 3 (Q, K, V), batch, n_heads, seq, d_model]``, the
    gradient of the mean next-token loss over ``mask`` (``[batch, seq-1]``, default every position)
    with respect to the residual stream as each head reads it in each mode, before its norm (as if
    each head's Q, K and V had its own copy of the stream); and ``outs``, per layer, the clean
    heads' outputs ``[batch, n_heads, seq, d_model]``. One forward pass, one backward pass.
    """
    toks, one = model.check_tokens(tokens)
    if one or toks.shape[-1] < 2:
        raise ValueError(f"tokens must have shape [batch, seq] with seq >= 2; got {list(np.shape(tokens))}")
    B, S = toks.shape
    L, H, D = model.config["n_layers"], model.config["n_heads"], model.config["d_head"]
    if mask is None:
        mask = np.ones((B, S - 1), dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (B, S - 1) or not mask.any():
        raise ValueError(f"mask must be a [batch, seq-1] = {[B, S - 1]} bool array with a true entry; "
                         f"got shape {list(mask.shape)} with {int(mask.sum())} true")
    causal = np.triu(np.ones((S, S), dtype=bool), k=1)
    resid, caches = model.embed(toks), []
    outs = []
    for l in range(L):
        x, n1 = _norm_fwd(model, resid, None if model.ln1_w is None else model.ln1_w[l],
                          None if model.ln1_b is None else model.ln1_b[l])
        q = x[:, None] @ model.W_Q[l] + model.b_Q[l][:, None]                      # [B, H, S, D]
        k = x[:, None] @ model.W_K[l] + model.b_K[l][:, None]
        v = x[:, None] @ model.W_V[l] + model.b_V[l][:, None]
        sc = np.where(causal, -np.inf, q @ k.swapaxes(-1, -2) / np.sqrt(D))
        p = np.exp(sc - sc.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        z = p @ v
        out = z @ model.W_O[l]                                                      # [B, H, S, d_model]
        outs.append(out)
        mid = resid + out.sum(1) + model.b_O[l]
        mlp = None
        if model.W_in is not None:
            y, n2 = _norm_fwd(model, mid, None if model.ln2_w is None else model.ln2_w[l],
                              None if model.ln2_b is None else model.ln2_b[l])
            pre = y @ model.W_in[l] + model.b_in[l]
            mlp = (n2, pre)
            resid = mid + np.maximum(pre, 0.0) @ model.W_out[l] + model.b_out[l]
        else:
            resid = mid
        caches.append((n1, q, k, v, p, mlp))
    y, nf = _norm_fwd(model, resid, model.ln_final_w, model.ln_final_b)
    logits = y @ model.W_U + model.b_U
    # backward: d(mean loss over mask) / d logits = (softmax - onehot) / n at the loss positions
    lg = logits[:, :-1]
    prob = np.exp(lg - lg.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    np.subtract.at(prob, (np.arange(B)[:, None], np.arange(S - 1)[None], toks[:, 1:]), 1.0)
    dlogits = np.zeros_like(logits)
    dlogits[:, :-1] = prob * mask[..., None] / mask.sum()
    d = _norm_bwd(nf, dlogits @ model.W_U.T)                                        # d resid_L
    grads = np.zeros((L, 3, B, H, S, d.shape[-1]))
    for l in reversed(range(L)):
        n1, q, k, v, p, mlp = caches[l]
        dmid = d
        if mlp is not None:
            n2, pre = mlp
            dpre = (d @ model.W_out[l].T) * (pre > 0)
            dmid = d + _norm_bwd(n2, dpre @ model.W_in[l].T)
        dz = dmid[:, None] @ model.W_O[l].swapaxes(-1, -2)                        # [B, H, S, D]
        dp = dz @ v.swapaxes(-1, -2)
        dv = p.swapaxes(-1, -2) @ dz
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / np.sqrt(D)
        dq, dk = ds @ k, ds.swapaxes(-1, -2) @ q
        for j, (du, W) in enumerate(((dq, model.W_Q[l]), (dk, model.W_K[l]), (dv, model.W_V[l]))):
            grads[l, j] = _norm_bwd(n1 if n1 is None else (n1[0], n1[1][:, None], n1[2][:, None], n1[3]),
                                    du @ W.swapaxes(-1, -2))
        d = dmid + grads[l].sum(axis=(0, 2))
    return grads, outs


def edge_attribution(model, tokens, mode, ablation: str = "resample", mask=None) -> np.ndarray:
    """Edge attribution patching scores: the first-order loss change of every path (module docstring).

    ``[n_layers, n_heads, n_layers, n_heads]`` for one mode (``[len(mode), ...]`` for several, as
    ``"QKV"``), 0 unless ``l2 > l1``; nats, the first-order estimate of
    ``ground_truth.path_effects(model, tokens, mode, ablation)`` averaged over ``mask``.
    """
    modes, single = parse_modes(mode)
    if ablation not in ("mean", "resample"):
        raise ValueError(f"ablation must be 'mean' or 'resample'; got {ablation!r}")
    toks, _ = model.check_tokens(tokens)
    if ablation == "resample" and toks.shape[0] < 2:
        raise ValueError(f"tokens must have at least 2 sequences for ablation 'resample'; got batch={toks.shape[0]}")
    grads, outs = input_gradients(model, tokens, mask)
    L, H = model.config["n_layers"], model.config["n_heads"]
    other = np.roll(np.arange(toks.shape[0]), -1)
    out = np.zeros((len(modes), L, H, L, H))
    for l1 in range(L - 1):
        o = outs[l1]                                                               # [B, H, S, d]
        delta = (o.mean(axis=(0, 2), keepdims=True) if ablation == "mean" else o[other]) - o
        for i, m in enumerate(modes):
            g = grads[l1 + 1:, "QKV".index(m)]                                     # [L-l1-1, B, H2, S, d]
            out[i, l1, :, l1 + 1:] = np.einsum("bhsd,lbksd->hlk", delta, g, optimize=True)
    out *= later_mask(out.shape[1:])
    return out[0] if single else out
