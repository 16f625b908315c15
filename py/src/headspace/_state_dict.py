"""A TransformerLens state dict, read one checked tensor at a time, and its norms folded into the
weights that read them: the one reader and the one fold of ``headspace.model.Model`` (the forward
pass) and ``headspace.weights`` (what the scores read).

Keys are those of ``HookedTransformer.state_dict()``: ``embed.W_E``, ``pos_embed.W_pos``,
``blocks.{l}.attn.W_Q`` ... ``W_O``, ``blocks.{l}.ln1.w``, ``ln_final.w``, ``unembed.W_U``.

>>> import numpy as np
>>> state = {f"blocks.{l}.ln1.w": np.full(2, l + 1.0) for l in range(2)}
>>> Reader(state, n_layers=2).stack("ln1.w", (2,)).tolist()
[[1.0, 1.0], [2.0, 2.0]]
>>> Reader(state, n_layers=2).get("ln_final.w", (2,))
Traceback (most recent call last):
...
ValueError: weights must include 'ln_final.w' with shape [2]; it is missing
"""

from __future__ import annotations

import numpy as np

from headspace.validate import as_array

#: The normalisation types a model may have (TransformerLens's ``normalization_type``).
NORMS = (None, "LN", "LNPre", "RMS", "RMSPre")
#: What a type with a learned scale becomes once the scale is folded into the readers.
FOLDED = {"LN": "LNPre", "RMS": "RMSPre"}


def positive_ints(config: dict, keys) -> list[int]:
    """``config[key]`` for each key, each a positive integer, or a ValueError naming the key."""
    out = []
    for key in keys:
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"config[{key!r}] must be a positive integer; got {value!r}")
        out.append(value)
    return out


def norm_type(config: dict) -> str | None:
    """``config["normalization_type"]``, if it is one of ``NORMS``."""
    norm = config.get("normalization_type")
    if norm not in NORMS:
        raise ValueError(f"config['normalization_type'] must be one of {list(NORMS)}; got {norm!r}")
    return norm


class Reader:
    """The tensors of ``state``, each checked for its shape and finiteness when read.

    ``dtype`` None keeps float32 as float32 (``headspace.weights``); the forward pass reads float64.
    """

    def __init__(self, state: dict, n_layers: int, dtype=np.float64):
        self.state, self.n_layers, self.dtype = state, n_layers, dtype

    def __contains__(self, key: str) -> bool:
        return key in self.state

    def get(self, key: str, shape: tuple) -> np.ndarray:
        """``state[key]`` as an array of ``shape`` (None: any length on that axis)."""
        if key not in self.state:
            raise ValueError(f"weights must include {key!r} with shape {list(shape)}; it is missing")
        return as_array(key, self.state[key], shape=shape, dtype=self.dtype)

    def stack(self, key: str, shape: tuple) -> np.ndarray:
        """``blocks.{l}.{key}`` of every layer, stacked: [n_layers, *shape]."""
        return np.stack([self.get(f"blocks.{l}.{key}", shape) for l in range(self.n_layers)])


#: Each reader of the normalised stream: the norm it reads through, its bias, and how that norm's
#: bias enters the reader's bias (LayerNorm's ``b`` times the unscaled reader).
_READERS = {
    "W_Q": ("ln1", "b_Q", lambda b, W: np.einsum("lm,lhmd->lhd", b, W)),
    "W_K": ("ln1", "b_K", lambda b, W: np.einsum("lm,lhmd->lhd", b, W)),
    "W_V": ("ln1", "b_V", lambda b, W: np.einsum("lm,lhmd->lhd", b, W)),
    "W_in": ("ln2", "b_in", lambda b, W: np.einsum("lm,lmf->lf", b, W)),
    "W_U": ("ln_final", "b_U", lambda b, W: b @ W),
}


def fold(norm: str | None, readers: dict, scales: dict, biases: dict | None = None, *,
         offset: bool = False) -> tuple[dict, str | None]:
    """``(readers, normalization type)`` with the norm folded in, as TransformerLens's ``fold_ln``.

    ``readers`` holds the matrices that read the normalised stream, ``W_Q, W_K, W_V [n_layers,
    n_heads, d_model, d_head]``, ``W_U [d_model, d_vocab]`` and optionally ``W_in [n_layers,
    d_model, d_mlp]``, and any of their biases ``b_Q, b_K, b_V, b_U, b_in``. ``scales`` are the
    norms' learned scales by norm, ``ln1 [n_layers, d_model]``, ``ln_final [d_model]``, ``ln2``;
    ``biases`` LayerNorm's biases, the same way.

    * ``LN`` and ``RMS``: each reader becomes ``w[:, None] * W`` (``1 + w`` with ``offset``,
      TransformerLens's ``rmsnorm_uses_offset``); a LayerNorm bias given goes into the reader's
      bias given (``b_Q + ln1_b @ W_Q``).
    * ``LN`` and ``LNPre``: the readers are then centred over ``d_model``: LayerNorm's output has
      mean 0, so that component of a reader is never read.
    * The type becomes ``LNPre`` or ``RMSPre``; ``None``, ``RMSPre`` and ``LNPre`` stay.

    >>> r, norm = fold("RMS", {"W_U": np.ones((2, 1))}, {"ln_final": np.array([2.0, 3.0])})
    >>> r["W_U"].ravel().tolist(), norm
    ([2.0, 3.0], 'RMSPre')
    """
    out = dict(readers)
    for name, W in readers.items():
        if name not in _READERS:
            continue
        ln, bias, bias_term = _READERS[name]
        if norm in FOLDED:
            b = (biases or {}).get(ln)
            if b is not None and bias in readers:
                out[bias] = readers[bias] + bias_term(b, W)
            w = 1.0 + scales[ln] if offset else scales[ln]
            W = w.reshape(w.shape[:-1] + (1,) * (W.ndim - w.ndim - 1) + w.shape[-1:] + (1,)).astype(W.dtype) * W
        if norm in ("LN", "LNPre"):
            W = W - W.mean(axis=-2, keepdims=True)
        out[name] = W
    return out, FOLDED.get(norm, norm)
