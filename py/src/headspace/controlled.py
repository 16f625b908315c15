"""A ground truth that isolates composition: a path's effect beyond what a perturbation of its size does.

Why: path ablation (``headspace.ground_truth``) changes what one writer sends into one reader's
Q, K or V input and measures the loss. A review of the benchmark (issue 47) found that this also
rewards plain damage: pushing a reader's input by a large vector hurts whether or not the reader
uses what the writer carries, so pairs of large heads outside any circuit show effects, and the
size of the push into the reader, ``E ||delta||`` below, predicts the ground truth better than
any weight score. A score of composition should be judged on the part of the effect that comes
from the *information* on the path, not from its size.

The control. For writer ``(l1, h1)``, reader ``(l2, h2)`` and mode ``m`` (``"Q" "K" "V"``), path
patching by resampling (as ``ground_truth.path_effects(..., "resample")``) moves the reader's
input ``x`` to ``x' = norm(resid[l2] - o + o_other)``, so the reader's query (key, value) vector
``u = x @ W_m[l2, h2]`` [batch, seq, d_head] moves by ``delta = (x' - x) @ W_m[l2, h2]``. The
*control* moves it by a vector of the same length at every position, in a random direction of
the head's d_head-dimensional space: ``|delta| g / |g|``, ``g`` standard normal (seeded per pair
and mode, ``control_directions``). It costs the reader exactly as much input change as the path
does, but carries none of the writer's information. The ground truth

    ``excess = loss(path patched) - loss(control)``

is positive where the reader is hurt by *what* the writer sends more than by a push of that size,
near 0 where the damage is generic, and negative where a random push hurts more than the real
one (the real one stays on the directions the reader was trained with). Both runs recompute the
rest of the model after the reader as ``ground_truth`` does (later layers, MLPs, logits).

``controlled_effects`` returns, per position, the patched and the control loss increase and the
perturbation size ``|delta|`` for resampling and for mean ablation (``o`` replaced by its mean), so
that every ground truth can be checked against the size alone.

>>> from headspace.model import load
>>> from headspace.heads import repeated_tokens
>>> from headspace.ground_truth import path_effects
>>> model = load("attn-only-2l")
>>> toks = repeated_tokens(128, 16, batch=4, seed=1)
>>> out = controlled_effects(model, toks, "K")
>>> sorted(out), out["patched"].shape                   # [L, H, L, H, batch, seq-1]
(['control', 'patched', 'size_mean', 'size_resample'], (2, 4, 2, 4, 4, 15))
>>> bool(np.allclose(out["patched"], path_effects(model, toks, "K", "resample")))
True
>>> e = (out["patched"] - out["control"]).mean(axis=(-2, -1))
>>> bool(e[0, 1, 1, 0] > 0.1)                           # the previous-token -> induction path carries information
True
"""

from __future__ import annotations

import numpy as np

from headspace.causal import parse_modes
from headspace.head_pairs import later_mask
from headspace.model import cross_entropy

__all__ = ["controlled_effects", "control_directions", "CONTROLLED", "controlled_ground_truth", "model_controlled",
           "compute_zoo", "read_zoo", "FILE", "FIELDS"]

#: The ground truth's name in the benchmark: resample path patching minus its size-matched control,
#: averaged over the positions where the task's circuit acts.
CONTROLLED = "excess-circuit"


def control_directions(seed: int, pair, mode: str, shape) -> np.ndarray:
    """Unit vectors ``[..., d_head]`` (``shape``), seeded by ``seed``, the ``pair`` ``(l1, h1, l2, h2)`` and ``mode``.

    Why per pair: every pair and mode gets its own random directions, reproducible from the four
    indices alone (an independent implementation can draw the same ones).

    >>> d = control_directions(0, (0, 1, 1, 2), "K", (3, 5, 16))
    >>> d.shape, bool(np.allclose(np.linalg.norm(d, axis=-1), 1.0))
    ((3, 5, 16), True)
    """
    if mode not in "QKV" or len(mode) != 1:
        raise ValueError(f"mode must be one of 'Q', 'K', 'V'; got {mode!r}")
    g = np.random.default_rng([int(seed), *(int(i) for i in pair), "QKV".index(mode)]).normal(size=tuple(shape))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)


def _qkv(model, l, x):
    """``[q, k, v]`` of every head of layer ``l`` on the input ``x`` [batch, seq, d_model]: each [batch, n_heads, seq, d_head]."""
    return [x[:, None] @ W[l] + b[l][:, None, :] for W, b in ((model.W_Q, model.b_Q), (model.W_K, model.b_K),
                                                               (model.W_V, model.b_V))]


def _heads_out(model, l, q, k, v):
    """Each head's output ``pattern @ v @ W_O`` [batch, n_heads, seq, d_model] from given q, k, v (as ``Model.attend``)."""
    seq = q.shape[-2]
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(model.config["d_head"])
    scores = np.where(np.triu(np.ones((seq, seq), dtype=bool), k=1), -np.inf, scores)
    scores = scores - scores.max(axis=-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(axis=-1, keepdims=True)
    return p @ v @ model.W_O[l]


def controlled_effects(model, tokens, mode, seed: int = 0) -> dict:
    """Per-position loss increases of resample path patching and of its size-matched control, and the push sizes.

    Returns ``{"patched", "control", "size_resample", "size_mean"}``, each ``[n_layers, n_heads,
    n_layers, n_heads, batch, seq-1]`` (with a leading ``len(mode)`` axis for a sequence of modes;
    0 where ``l2 <= l1``): the loss increase (nats) at each position when the writer's output is
    resampled (sequence ``b`` gets ``b + 1``'s) in the reader's ``mode`` input; the same when
    the reader's q (k, v) moves instead by a random vector of the same length at each position
    (module docstring); and ``|delta|`` at each query position, for resampling and for mean
    ablation (the size of the push, position ``t``'s loss slot holding position ``t``'s push).
    ``tokens`` [batch, seq], batch >= 2, seq >= 2.
    """
    modes, single = parse_modes(mode)
    toks, one = model.check_tokens(tokens)
    if one or toks.shape[-1] < 2 or toks.shape[0] < 2:
        raise ValueError(f"tokens must have shape [batch, seq] with batch >= 2 (another sequence to resample "
                         f"from) and seq >= 2; got {list(np.shape(tokens))}")
    L, H = model.config["n_layers"], model.config["n_heads"]
    B, S = toks.shape
    resid = [model.embed(toks)]
    outs, inputs, mids, qkvs = [], [], [], []
    for l in range(L):
        x = model.layer_input(resid[l], l)
        _, out = model.attend(l, x, x, x)
        outs.append(out)
        inputs.append(x)
        qkvs.append(_qkv(model, l, x))
        mids.append(resid[l] + out.sum(axis=1) + model.b_O[l])
        resid.append(model.mlp(mids[l], l))
    clean = cross_entropy(model.unembed(resid[L]), toks)                          # [batch, seq-1]
    other = np.roll(np.arange(B), -1)
    shape = (len(modes), L, H, L, H, B, S - 1)
    result = {k: np.zeros(shape) for k in ("patched", "control", "size_resample", "size_mean")}

    def loss_after(l2, new):
        """Loss [n_heads, batch, seq-1] when each reader h2 of layer l2 alone outputs ``new[:, h2]``."""
        r = mids[l2][None] + np.moveaxis(new - outs[l2], 1, 0)
        r = model.mlp(r.reshape((H * B,) + r.shape[2:]), l2)
        for l in range(l2 + 1, L):
            y = model.layer_input(r, l)
            r = model.mlp(r + model.attend(l, y, y, y)[1].sum(axis=1) + model.b_O[l], l)
        return cross_entropy(model.unembed(r), np.tile(toks, (H, 1))).reshape(H, B, S - 1)

    for l1, h1, l2 in np.argwhere(later_mask((L, H, L, 1))[..., 0]):
        o = outs[l1][:, h1]
        x = inputs[l2]
        x_res = model.layer_input(resid[l2] + o[other] - o, l2)
        x_mean = model.layer_input(resid[l2] + o.mean(axis=(0, 1)) - o, l2)
        for i, m in enumerate(modes):
            j = "QKV".index(m)
            clean_u = qkvs[l2][j]                                                # [batch, n_heads, seq, d_head]
            delta = _qkv(model, l2, x_res)[j] - clean_u
            size = np.linalg.norm(delta, axis=-1)                                # [batch, n_heads, seq]
            size_mean = np.linalg.norm(_qkv(model, l2, x_mean)[j] - clean_u, axis=-1)
            result["size_resample"][i, l1, h1, l2] = np.moveaxis(size, 1, 0)[..., :-1]
            result["size_mean"][i, l1, h1, l2] = np.moveaxis(size_mean, 1, 0)[..., :-1]
            for key, push in (("patched", delta), ("control", None)):
                if push is None:
                    dirs = np.stack([control_directions(seed, (l1, h1, l2, h2), m, (B, S, delta.shape[-1]))
                                     for h2 in range(H)], axis=1)                # [batch, n_heads, seq, d_head]
                    push = size[..., None] * dirs
                u = list(qkvs[l2])
                u[j] = clean_u + push
                result[key][i, l1, h1, l2] = loss_after(l2, _heads_out(model, l2, *u)) - clean[None]
    if single:
        return {k: v[0] for k, v in result.items()}
    return result


def controlled_ground_truth(effects: dict, mask=None) -> np.ndarray:
    """``excess``: the mean over the positions of ``mask`` (default all) of ``patched - control``.

    >>> e = {"patched": np.ones((2, 3)), "control": np.zeros((2, 3))}
    >>> float(controlled_ground_truth(e, np.array([[True, False, False], [False, False, False]])))
    1.0
    """
    from headspace.ground_truth import ground_truth
    return ground_truth(np.asarray(effects["patched"]) - np.asarray(effects["control"]), mask)


#: The file beside ``ground_truth.npz`` in a zoo folder that holds, per model, ``[4, n_batches, 3, L, H, L, H]``:
#: the controlled ground truth (``CONTROLLED``), the patched and the control effect (circuit positions), and
#: the push size of resampling and of mean ablation (every position): ``FIELDS`` order.
FILE = "ground_truth_controlled.npz"
FIELDS = (CONTROLLED, "patched-circuit", "control-circuit", "size_resample", "size_mean")


def model_controlled(model, tokens, mask, seed: int = 0) -> np.ndarray:
    """``[len(FIELDS), n_batches, 3, L, H, L, H]`` on a task's evaluation batches (``benchmark.eval_batches``)."""
    from headspace.ground_truth import ground_truth
    L, H = model.config["n_layers"], model.config["n_heads"]
    out = np.zeros((len(FIELDS), len(tokens), 3, L, H, L, H))
    for b, (toks, m) in enumerate(zip(tokens, mask)):
        e = controlled_effects(model, toks, "QKV", seed + b)
        out[0, b] = ground_truth(e["patched"] - e["control"], m)
        out[1, b] = ground_truth(e["patched"], m)
        out[2, b] = ground_truth(e["control"], m)
        out[3, b] = ground_truth(e["size_resample"])
        out[4, b] = ground_truth(e["size_mean"])
    return out


def compute_zoo(zoo, names=None, seed: int = 0, progress=print):
    """Compute ``model_controlled`` for every model of a zoo folder (or ``names``, keeping the others' on
    file); write ``FILE`` there."""
    from headspace import benchmark
    return benchmark.compute_per_model(zoo, FILE, lambda model, tokens, mask: model_controlled(model, tokens, mask, seed),
                                       names, progress, "controlled ground truth")


def read_zoo(zoo) -> dict:
    """``{field: {model: [n_batches, 3, L, H, L, H]}}`` from a zoo folder's ``FILE`` (``FIELDS``)."""
    from headspace import benchmark
    path = benchmark.zoo_dir(zoo) / FILE
    if not path.is_file():
        raise ValueError(f"zoo must hold {FILE} (python -m headspace.controlled --zoo DIR); got none at {path}")
    with np.load(path) as f:
        return {field: {k: f[k][i].astype(np.float64) for k in f.files} for i, field in enumerate(FIELDS)}


if __name__ == "__main__":   # pragma: no cover
    import argparse
    ap = argparse.ArgumentParser(description=f"Compute the controlled ground truth of a zoo into {FILE}.")
    ap.add_argument("--zoo", help="the zoo directory (default $HEADSPACE_ZOO)")
    ap.add_argument("--only", help="comma-separated model-name prefixes to recompute")
    args = ap.parse_args()
    from headspace import benchmark as _b
    names = None if not args.only else [n for n in _b.zoo_models(args.zoo) if n.startswith(tuple(args.only.split(",")))]
    compute_zoo(args.zoo, names)
