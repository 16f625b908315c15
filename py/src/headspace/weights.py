"""The weights composition scores read, from wherever a model comes from.

Scores compare the maps heads apply to the *normalised* residual stream, so a
norm's learned scale belongs inside the readers. ``Weights`` holds a model's
attention weights with the scales folded in exactly as TransformerLens's
``fold_ln`` does (``process_weights_(fold_ln=True)``):

* ``LN``: ``W_Q, W_K, W_V`` of layer ``l`` become ``ln1.w[l][:, None] * W``, then
  are centred over ``d_model`` (LayerNorm removes the mean, so that component
  is never read); ``W_U`` becomes ``ln_final.w[:, None] * W_U``, centred too.
  The type becomes ``LNPre``.
* ``RMS``: the same scaling (``1 + w`` for ``rmsnorm_uses_offset``), no
  centring; the type becomes ``RMSPre``.
* ``LNPre``, ``RMSPre``, ``None``: nothing to fold (``LNPre`` readers are
  centred, which changes nothing if they already are).

Biases are left out: no composition score reads them. Grouped-query models
store fewer key/value heads; their ``W_K`` and ``W_V`` are repeated to one per
query head, as TransformerLens's ``W_K`` property does, so scores are per
query head.

Three ways in: ``from_transformer_lens(model)`` (a ``HookedTransformer`` or a
TransformerLens 4 ``TransformerBridge``; torch is only touched through the
tensors you pass), ``from_state_dict(state, config)`` (TransformerLens
state-dict keys as numpy arrays, e.g. an ``.npz``) and ``from_model(model)``
(a ``headspace.model.Model``).

>>> from headspace.model import load
>>> w = from_model(load("attn-only-2l-rms"))
>>> w.normalization_type, w.W_Q.shape
('RMSPre', (2, 4, 64, 16))
>>> w.composition_scores("K").shape                     # [n_layers, n_heads, n_layers, n_heads]
(2, 4, 2, 4)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from headspace._state_dict import FOLDED, NORMS, Reader, fold, norm_type, positive_ints
from headspace.validate import as_array

__all__ = ["Weights", "from_transformer_lens", "from_state_dict", "from_model", "embedding_read"]


@dataclass(frozen=True)
class Weights:
    """A model's attention weights in TransformerLens layout, norm scales folded into the readers.

    ``W_E [d_vocab, d_model]``, ``W_pos [n_ctx, d_model]`` (None for rotary and
    other non-learned positions), ``W_Q, W_K, W_V [n_layers, n_heads, d_model,
    d_head]``, ``W_O [n_layers, n_heads, d_head, d_model]``, ``W_U [d_model,
    d_vocab]``, the normalisation type after folding and the norm's ``eps``.
    """
    W_E: np.ndarray | None
    W_pos: np.ndarray | None
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_U: np.ndarray | None
    normalization_type: str | None = None
    eps: float = 1e-5

    def embedding_read(self) -> np.ndarray:
        """``W_E`` as the first layer's heads read it: ``embedding_read`` with this model's norm."""
        if self.W_E is None:
            raise ValueError("W_E is None: these weights were read without the embedding; read them with "
                             "embeddings=True (headspace.checkpoint) for the token and whitened metrics")
        return embedding_read(self.W_E, self.normalization_type, self.eps)

    def composition_scores(self, mode, metric: str = "frobenius", **kw) -> np.ndarray:
        """``headspace.composition.all_composition_scores`` on these weights; ``token`` and
        ``whitened`` get ``W_E`` (``embedding_read``) and, for V, ``W_U`` from here unless given."""
        from headspace.composition import all_composition_scores
        if metric in ("token", "whitened") and "gram" not in kw:
            kw.setdefault("W_E", self.embedding_read())
        if metric == "token":
            kw.setdefault("W_U", self.W_U)
        return all_composition_scores(self.W_Q, self.W_K, self.W_V, self.W_O, mode, metric, **kw)


def from_model(model) -> Weights:
    """The weights of a ``headspace.model.Model`` (shipped or loaded from a directory), folded."""
    m = model.fold_norm()
    return Weights(m.W_E, m.W_pos, m.W_Q, m.W_K, m.W_V, m.W_O, m.W_U, m.config.get("normalization_type"), m.eps)


def from_transformer_lens(model) -> Weights:
    """The weights of a TransformerLens ``HookedTransformer`` (3.x) or ``TransformerBridge`` (4.x), folded.

    Reads the model's stacked ``W_Q, W_K, W_V, W_O, W_E, W_pos, W_U`` and each
    block's ``ln1`` and the final norm's scale, copies them to numpy (float32;
    bfloat16 and float16 are widened), and folds the scales as ``fold_ln``. The
    model is not changed. Scores then equal TransformerLens's own
    ``all_composition_scores`` after ``process_weights_(fold_ln=True)``.
    """
    cfg = getattr(model, "cfg", None)
    if cfg is None or not hasattr(model, "W_Q"):
        raise ValueError(f"model must be a TransformerLens HookedTransformer or TransformerBridge "
                         f"(with .cfg and stacked .W_Q); got {type(model).__name__}")
    norm = getattr(cfg, "normalization_type", None)
    if norm not in NORMS:
        raise ValueError(f"model.cfg.normalization_type must be one of {list(NORMS)}; got {norm!r}")
    get = lambda name: _to_numpy(name, getattr(model, name))  # noqa: E731
    try:
        W_pos = get("W_pos")
    except (AttributeError, KeyError, ValueError, TypeError):
        W_pos = None    # rotary, alibi or no positional embedding
    ln1 = ln_final = None
    if norm in FOLDED:
        blocks = list(model.blocks)
        ln1 = np.stack([_scale(f"blocks.{l}.ln1", b.ln1) for l, b in enumerate(blocks)])
        ln_final = _scale("ln_final", model.ln_final)
    W_Q = get("W_Q")
    W_K, W_V = (_per_query_head(n, get(n), W_Q.shape[1]) for n in ("W_K", "W_V"))
    return _fold(get("W_E"), W_pos, W_Q, W_K, W_V, get("W_O"), get("W_U"),
                 norm, ln1, ln_final, bool(getattr(cfg, "rmsnorm_uses_offset", False)), float(getattr(cfg, "eps", 1e-5)))


def from_state_dict(state: dict, config: dict) -> Weights:
    """The weights in a TransformerLens state dict (numpy arrays) with its config fields, folded.

    Keys as ``HookedTransformer.state_dict()``: ``embed.W_E``, ``pos_embed.W_pos``
    (optional), ``blocks.{l}.attn.W_Q`` ... ``W_O`` (grouped-query models:
    ``_W_K``, ``_W_V``), ``blocks.{l}.ln1.w`` and ``ln_final.w`` for ``LN`` and
    ``RMS``, ``unembed.W_U``. A missing key or a wrong shape raises ValueError
    naming it.
    """
    L, H, M, D = positive_ints(config, ("n_layers", "n_heads", "d_model", "d_head"))
    norm = norm_type(config)
    kv = config.get("n_key_value_heads") or H
    read = Reader(state, L, dtype=None)

    def stack(name, shape, grouped=False):
        key = f"attn._{name}" if grouped and kv != H and f"blocks.0.attn._{name}" in read else f"attn.{name}"
        heads = kv if key.startswith("attn._") else H
        arr = read.stack(key, (heads,) + shape)
        return np.repeat(arr, H // heads, axis=1) if heads != H else arr

    W_E = read.get("embed.W_E", (None, M))
    W_pos = read.get("pos_embed.W_pos", (None, M)) if "pos_embed.W_pos" in read else None
    W_U = read.get("unembed.W_U", (M, None))
    ln1 = ln_final = None
    if norm in FOLDED:
        ln1 = read.stack("ln1.w", (M,))
        ln_final = read.get("ln_final.w", (M,))
    return _fold(W_E, W_pos, stack("W_Q", (M, D)), stack("W_K", (M, D), True), stack("W_V", (M, D), True),
                 stack("W_O", (D, M)), W_U, norm, ln1, ln_final, bool(config.get("rmsnorm_uses_offset", False)),
                 float(config.get("eps", 1e-5)))


def embedding_read(W_E, normalization_type: str | None, eps: float = 1e-5) -> np.ndarray:
    """``W_E [d_vocab, d_model]`` as the first layer's heads read it: each token's row divided by
    the scale the model's norm divides it by (``RMS``/``RMSPre``: its root mean square;
    ``LN``/``LNPre``: the root mean square of its centred copy; None: as stored), the learned
    scale being folded into the readers. A LayerNorm row keeps its mean: every reader of such a
    model is centred, so none reads it, and the ``whitened`` metric needs an embedding of full rank.

    The ``token`` and ``whitened`` metrics measure token space through this embedding, for the site
    and for researchers alike (docs/decisions/0007-embedding-read.md): on a normalised model the raw
    ``W_E`` is not what any head reads. Positions are left out: token space has none.

    >>> embedding_read(np.array([[3.0, 4.0]]), "RMSPre", eps=0.0).round(4)   # RMS of [3, 4]: sqrt(12.5)
    array([[0.8485, 1.1314]])
    >>> embedding_read(np.array([[3.0, 4.0]]), None)                          # no norm: as stored
    array([[3., 4.]])
    """
    E = as_array("W_E", W_E, ndim=2, dtype=None)
    if normalization_type not in NORMS:
        raise ValueError(f"normalization_type must be one of {list(NORMS)}; got {normalization_type!r}")
    if normalization_type is None:
        return E
    seen = E - E.mean(axis=-1, keepdims=True) if normalization_type in ("LN", "LNPre") else E
    return E / np.sqrt((seen * seen).mean(axis=-1, keepdims=True) + eps)


# --------------------------------------------------------------------------- private

def _fold(W_E, W_pos, W_Q, W_K, W_V, W_O, W_U, norm, ln1, ln_final, offset, eps) -> Weights:
    """Scale the readers by the norms' weights and centre them for LayerNorm, as ``fold_ln``."""
    r, folded = fold(norm, {"W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_U": W_U}, {"ln1": ln1, "ln_final": ln_final},
                     offset=offset)
    return Weights(W_E, W_pos, r["W_Q"], r["W_K"], r["W_V"], W_O, r["W_U"], folded, eps)


def _per_query_head(name: str, W: np.ndarray, n_heads: int) -> np.ndarray:
    """Grouped-query keys or values [n_layers, n_kv_heads, ...] repeated to one per query head
    (a bridge's ``W_K`` keeps the stored heads; a HookedTransformer's is already repeated)."""
    kv = W.shape[1]
    if kv == n_heads:
        return W
    if n_heads % kv:
        raise ValueError(f"{name} must have a number of heads dividing n_heads={n_heads}; got {kv}")
    return np.repeat(W, n_heads // kv, axis=1)


def _scale(name: str, module) -> np.ndarray:
    """A norm module's learned scale: ``.w`` (TransformerLens), ``.weight`` (torch), or the wrapped one's."""
    for owner in (module, getattr(module, "original_component", None)):
        for attr in ("w", "weight"):
            value = getattr(owner, attr, None) if owner is not None else None
            if value is not None and not callable(value):
                return _to_numpy(f"{name}.{attr}", value)
    raise ValueError(f"{name} must have a learned scale (.w or .weight) for normalization_type "
                     f"LN or RMS; found none on {type(module).__name__}")


def _to_numpy(name: str, value) -> np.ndarray:
    """A tensor or array as numpy, float32 or float64, without importing torch."""
    if hasattr(value, "detach"):                       # a torch tensor, on any device
        value = value.detach()
        if str(getattr(value, "dtype", "")) in ("torch.bfloat16", "torch.float16"):
            value = value.float()
        value = value.cpu().numpy()
    arr = as_array(name, value, dtype=None)
    return arr if arr.dtype in (np.float32, np.float64) else arr.astype(np.float32)
