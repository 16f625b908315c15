"""Ground truths for head-to-head composition: path ablation, by mean or by resampling, per position.

Why several: a weight score is judged by how well it ranks pairs of heads by their causal
effect, and "causal effect" is itself a choice. ``headspace.causal.path_ablation`` replaces a
writer's output, in one reader's Q, K or V input only, by its mean over the batch and
positions, and averages the loss increase over every position. Two choices there are worth
varying:

* **what replaces the output**: its mean (``"mean"``), or the same head's output at the same
  position of *another* sequence of the batch (``"resample"``: sequence ``b`` gets sequence
  ``b + 1``'s, cyclically), which keeps the output on the distribution the reader was trained
  on (resample ablation, as in causal scrubbing, Chan et al. 2022, and path patching, Wang et
  al. 2023);
* **where the loss is averaged**: every position, or only the positions where the task's
  circuit acts (``headspace.tasks``: the repeated half of an induction sequence, ...). On a
  random first half no path can help, so averaging there dilutes every effect by the same
  noise.

``path_effects`` returns the loss increase at every position, so each of the four ground
truths is one average of it (``ground_truth``). Everything else is as in
``headspace.causal.path_ablation``: the reader's input is ``resid_pre[l2] - o + o'`` through its
own normalisation, its other two inputs and every other head unchanged, and the change flows
on through later layers (and MLPs) to the logits.

>>> from headspace.model import load
>>> from headspace.heads import repeated_tokens
>>> from headspace.causal import path_ablation
>>> model = load("attn-only-2l")
>>> toks = repeated_tokens(128, 32, batch=4, seed=1)
>>> effects = path_effects(model, toks, "K")                 # [L, H, L, H, batch, seq-1]
>>> effects.shape
(2, 4, 2, 4, 4, 31)
>>> bool(np.allclose(ground_truth(effects), path_ablation(model, toks, "K")))   # mean, all positions
True
"""

from __future__ import annotations

import numpy as np

from headspace.causal import parse_modes
from headspace.head_pairs import later_mask
from headspace.model import cross_entropy

__all__ = ["ABLATIONS", "GROUND_TRUTHS", "path_effects", "ground_truth"]

#: How a writer's output is replaced in the reader's input.
ABLATIONS = ("mean", "resample")
#: The four ground truths the benchmark compares: (name, ablation, positions).
GROUND_TRUTHS = (("mean-all", "mean", "all"), ("mean-circuit", "mean", "circuit"),
                 ("resample-all", "resample", "all"), ("resample-circuit", "resample", "circuit"))


def path_effects(model, tokens, mode, ablation: str = "mean", scale: float = 1.0) -> np.ndarray:
    """Loss increase (nats) at every position when each writer's output is ablated in one reader's input.

    Returns ``[n_layers, n_heads, n_layers, n_heads, batch, seq-1]`` (``out[l1, h1, l2, h2, b, t]``
    is the change of the loss of predicting ``tokens[b, t+1]``; 0 where ``l2 <= l1``), or with a
    leading ``len(mode)`` axis for a sequence of modes such as ``"QKV"``. ``ablation`` is
    ``"mean"`` or ``"resample"`` (see the module docstring; resampling needs ``batch >= 2``).
    ``scale`` moves the writer's output only that fraction of the way to its replacement (1: the full
    ablation, the ground truth; a small one: the regime where edge attribution patching,
    ``headspace.attribution``, is exact to first order, which its tests check against this).
    """
    if not np.isfinite(scale):
        raise ValueError(f"scale must be a finite number; got {scale!r}")
    modes, single = parse_modes(mode)
    if ablation not in ABLATIONS:
        raise ValueError(f"ablation must be one of {list(ABLATIONS)}; got {ablation!r}")
    toks, one = model.check_tokens(tokens)
    if one or toks.shape[-1] < 2:
        raise ValueError(f"tokens must have shape [batch, seq] with seq >= 2 (a next token to predict); "
                         f"got {list(np.shape(tokens))}")
    if ablation == "resample" and toks.shape[0] < 2:
        raise ValueError(f"tokens must have at least 2 sequences for ablation 'resample' (another "
                         f"sequence to take the output from); got batch={toks.shape[0]}")
    L, H = model.config["n_layers"], model.config["n_heads"]
    B, S = toks.shape
    resid = [model.embed(toks)]
    outs, inputs, mids = [], [], []
    for l in range(L):
        x = model.layer_input(resid[l], l)
        _, out = model.attend(l, x, x, x)
        outs.append(out)
        inputs.append(x)
        mids.append(resid[l] + out.sum(axis=1) + model.b_O[l])
        resid.append(model.mlp(mids[l], l))
    clean = cross_entropy(model.unembed(resid[L]), toks)              # [batch, seq-1]
    other = np.roll(np.arange(B), -1)
    effect = np.zeros((len(modes), L, H, L, H, B, S - 1))
    for l1, h1, l2 in np.argwhere(later_mask((L, H, L, 1))[..., 0]):
        o = outs[l1][:, h1]
        shift = scale * ((o.mean(axis=(0, 1)) if ablation == "mean" else o[other]) - o)
        ablated = model.layer_input(resid[l2] + shift, l2)
        x = inputs[l2]
        for i, m in enumerate(modes):
            xq, xk, xv = (ablated if m == s else x for s in "QKV")
            _, new = model.attend(l2, xq, xk, xv)
            r = mids[l2][None] + np.moveaxis(new - outs[l2], 1, 0)    # [n_heads, batch, seq, d]
            r = model.mlp(r.reshape((H * B,) + r.shape[2:]), l2)
            for l in range(l2 + 1, L):
                y = model.layer_input(r, l)
                r = model.mlp(r + model.attend(l, y, y, y)[1].sum(axis=1) + model.b_O[l], l)
            loss = cross_entropy(model.unembed(r), np.tile(toks, (H, 1))).reshape(H, B, S - 1)
            effect[i, l1, h1, l2] = loss - clean
    return effect[0] if single else effect


def ground_truth(effects: np.ndarray, mask=None) -> np.ndarray:
    """The mean of ``path_effects`` over every position, or over the positions where ``mask`` is true.

    ``mask`` is ``[batch, seq-1]`` bool (``headspace.tasks``), matching the last two axes of
    ``effects``; a mask with no true entry raises ValueError (no position to average over).
    """
    effects = np.asarray(effects)
    if mask is None:
        return effects.mean(axis=(-2, -1))
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != effects.shape[-2:]:
        raise ValueError(f"mask must have shape {list(effects.shape[-2:])} (the batch and loss positions "
                         f"of effects); got {list(mask.shape)}")
    if not mask.any():
        raise ValueError("mask must mark at least one position; got none")
    return effects[..., mask].mean(axis=-1)
