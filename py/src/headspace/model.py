"""Load and run the toy transformers shipped with the site: a numpy forward pass.

The models are small attention-only transformers trained by
``scripts/train_models`` and shipped inside the package (``headspace/models/``,
TransformerLens layout, formats in that directory's README.md);
``headspace.store`` reads and checks the files, this module runs them. It needs
only numpy and the standard library, so the same code runs natively and in
the browser under Pyodide.

Axis names: ``n_layers n_heads d_model d_head d_vocab n_ctx``; ``batch`` and
``seq`` for the tokens passed in. The forward pass is TransformerLens's
``HookedTransformer`` for ``positional_embedding_type "standard"``,
``normalization_type`` None, "RMS", "RMSPre", "LN" or "LNPre", attention only
or with ReLU MLPs (``act_fn "relu"``)::

    resid = W_E[tokens] + W_pos[:seq]
    for each layer l:
        x = norm(resid) * ln1_w[l] + ln1_b[l]      (no norm: x = resid; RMS: no ln1_b)
        q, k, v = x @ W_Q[l] + b_Q[l], x @ W_K[l] + b_K[l], x @ W_V[l] + b_V[l]
        pattern = softmax(causal_mask(q @ k.T / sqrt(d_head)))
        resid = resid + sum over heads of (pattern @ v) @ W_O[l] + b_O[l]
        (MLPs)  y = norm(resid) * ln2_w[l] + ln2_b[l]
                resid = resid + relu(y @ W_in[l] + b_in[l]) @ W_out[l] + b_out[l]
    logits = norm(resid) * ln_final_w + ln_final_b @ W_U + b_U

where ``norm(x) = x / sqrt(mean(x**2) + eps)`` over ``d_model`` (LayerNorm
first subtracts the mean over ``d_model``). Everything is computed in float64.

>>> model = load("attn-only-2l")          # a name in the shipped manifest, or a directory
>>> model.config["n_layers"], model.W_Q.shape
(2, (2, 4, 64, 16))
>>> model.logits([3, 1, 4, 1, 5]).shape    # one sequence: [seq, d_vocab]
(5, 128)
>>> model.attention_patterns([[3, 1, 4], [1, 5, 9]]).shape  # [batch, n_layers, n_heads, seq, seq]
(2, 2, 4, 3, 3)
>>> load("attn-only-2l", step=0).step     # a training checkpoint
0
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from headspace import store
from headspace._state_dict import Reader, fold, norm_type, positive_ints

__all__ = ["Model", "load", "load_checkpoints", "cross_entropy"]

_ACTS = {"relu": lambda x: np.maximum(x, 0.0)}


def load(path, step: int | None = None, *, verify: bool = True) -> "Model":
    """Load a model from its directory: final weights, or the checkpoint at training ``step``.

    ``path`` is a model directory or the bare name of a model shipped with the
    package (``headspace.store.list_models()``). Files are read and sha256-checked
    by ``headspace.store.read_model`` (``verify=False`` for a directory of your
    own without a manifest); missing files, checksum mismatches and unreadable
    files raise ValueError.
    """
    return Model.from_stored(store.read_model(path, step, verify=verify))


def load_checkpoints(path, *, verify: bool = True) -> dict[int, "Model"]:
    """Every training checkpoint of a model, ``{step: Model}``, from one read of its file.

    >>> sorted(load_checkpoints("attn-only-2l"))[:2]
    [0, 600]
    """
    return {s.step: Model.from_stored(s) for s in store.read_checkpoints(path, verify=verify)}


class Model:
    """A transformer (attention only, or with ReLU MLPs) with TransformerLens weight names, run in numpy.

    Weights (float64), stacked over layers as in TransformerLens's
    ``HookedTransformer.W_Q`` and friends:

    * ``W_E [d_vocab, d_model]``, ``W_pos [n_ctx, d_model]``
    * ``W_Q, W_K, W_V [n_layers, n_heads, d_model, d_head]``, ``b_Q, b_K, b_V [n_layers, n_heads, d_head]``
    * ``W_O [n_layers, n_heads, d_head, d_model]``, ``b_O [n_layers, d_model]``
    * ``W_U [d_model, d_vocab]``, ``b_U [d_vocab]``
    * ``ln1_w [n_layers, d_model]`` and ``ln_final_w [d_model]`` for ``normalization_type
      "RMS"`` and "LN"; None otherwise. ``ln1_b``, ``ln_final_b`` likewise for "LN".
    * with MLPs (``attn_only`` false): ``W_in [n_layers, d_model, d_mlp]``, ``b_in [n_layers,
      d_mlp]``, ``W_out [n_layers, d_mlp, d_model]``, ``b_out [n_layers, d_model]``, and
      ``ln2_w``, ``ln2_b`` as ``ln1_w``, ``ln1_b``; all None for an attention-only model.

    ``config`` is the dict of ``HookedTransformerConfig`` fields, ``step`` the
    training step of these weights (None for the final weights) and ``steps``
    the training steps with a stored checkpoint.
    """

    def __init__(self, config: dict, state_dict: dict, name: str | None = None,
                 step: int | None = None, steps: tuple[int, ...] = ()):
        self.config = dict(config)
        self.name, self.step, self.steps = name, step, tuple(steps)
        cfg = self.config
        L, M, H, D, V, C = positive_ints(cfg, ("n_layers", "d_model", "n_heads", "d_head", "d_vocab", "n_ctx"))
        if cfg.get("attn_only") not in (True, False):
            raise ValueError(f"config['attn_only'] must be true or false; got {cfg.get('attn_only')!r}")
        mlp = cfg["attn_only"] is False
        if mlp and (cfg.get("act_fn") not in _ACTS or isinstance(cfg.get("d_mlp"), bool)
                    or not isinstance(cfg.get("d_mlp"), int) or cfg["d_mlp"] < 1):
            raise ValueError(f"config['act_fn'] must be one of {list(_ACTS)} and config['d_mlp'] a positive "
                             f"integer for a model with MLPs; got act_fn={cfg.get('act_fn')!r}, "
                             f"d_mlp={cfg.get('d_mlp')!r}")
        norm = norm_type(cfg)
        if cfg.get("positional_embedding_type", "standard") != "standard":
            raise ValueError(f"config['positional_embedding_type'] must be 'standard'; "
                             f"got {cfg['positional_embedding_type']!r}")
        V_out = cfg.get("d_vocab_out", V)
        self.eps = float(cfg.get("eps", 1e-5))
        read = Reader(state_dict, L)
        get, stack = read.get, read.stack
        self.W_E = get("embed.W_E", (V, M))
        self.W_pos = get("pos_embed.W_pos", (C, M))
        self.W_Q, self.W_K, self.W_V = (stack(f"attn.W_{x}", (H, M, D)) for x in "QKV")
        self.b_Q, self.b_K, self.b_V = (stack(f"attn.b_{x}", (H, D)) for x in "QKV")
        self.W_O = stack("attn.W_O", (H, D, M))
        self.b_O = stack("attn.b_O", (M,))
        self.W_U = get("unembed.W_U", (M, V_out))
        self.b_U = get("unembed.b_U", (V_out,))
        learned = norm in ("RMS", "LN")
        bias = norm == "LN"
        self.ln1_w = stack("ln1.w", (M,)) if learned else None
        self.ln_final_w = get("ln_final.w", (M,)) if learned else None
        self.ln1_b = stack("ln1.b", (M,)) if bias else None
        self.ln_final_b = get("ln_final.b", (M,)) if bias else None
        self.W_in = self.b_in = self.W_out = self.b_out = self.ln2_w = self.ln2_b = None
        if mlp:
            F = cfg["d_mlp"]
            self.W_in, self.b_in = stack("mlp.W_in", (M, F)), stack("mlp.b_in", (F,))
            self.W_out, self.b_out = stack("mlp.W_out", (F, M)), stack("mlp.b_out", (M,))
            self.ln2_w = stack("ln2.w", (M,)) if learned else None
            self.ln2_b = stack("ln2.b", (M,)) if bias else None

    @classmethod
    def from_stored(cls, stored: "store.Stored") -> "Model":
        """The model of what ``headspace.store`` read from a model directory."""
        return cls(stored.config, stored.state, name=stored.name, step=stored.step, steps=stored.steps)

    def __repr__(self) -> str:
        c = self.config
        at = "final" if self.step is None else f"step {self.step}"
        return (f"Model({self.name!r}, {at}: n_layers={c['n_layers']} n_heads={c['n_heads']} "
                f"d_model={c['d_model']} d_head={c['d_head']} d_vocab={c['d_vocab']} n_ctx={c['n_ctx']} "
                f"normalization_type={c.get('normalization_type')!r})")

    # -- forward pass -------------------------------------------------------

    def run(self, tokens, patterns: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
        """``(logits, attention_patterns)`` from one forward pass; see those methods for shapes.
        ``patterns=False`` gives ``(logits, None)``: stacking every layer's pattern is a copy of the
        largest array of the pass, which a loss does not need."""
        toks, single = self.check_tokens(tokens)
        resid = self.embed(toks)
        kept = []
        for l in range(self.config["n_layers"]):
            x = self.layer_input(resid, l)
            pattern, out = self.attend(l, x, x, x)
            resid = self.mlp(resid + out.sum(axis=1) + self.b_O[l], l)
            if patterns:
                kept.append(pattern)
        logits = self.unembed(resid)
        stacked = np.stack(kept, axis=1) if patterns else None
        if single:
            return logits[0], None if stacked is None else stacked[0]
        return logits, stacked

    # -- the forward pass in pieces (headspace.causal intervenes between them) ---------

    def embed(self, toks: np.ndarray) -> np.ndarray:
        """The residual stream before layer 0: ``W_E[toks] + W_pos[:seq]``, [batch, seq, d_model]."""
        return self.W_E[toks] + self.W_pos[:toks.shape[-1]]

    def layer_input(self, resid: np.ndarray, l: int) -> np.ndarray:
        """What the heads of layer ``l`` read: the residual stream through the layer's norm (if any)."""
        return self._norm(resid, None if self.ln1_w is None else self.ln1_w[l],
                          None if self.ln1_b is None else self.ln1_b[l])

    def mlp(self, resid_mid: np.ndarray, l: int) -> np.ndarray:
        """The residual stream after layer ``l``'s MLP (``resid_mid`` itself for an attention-only model)."""
        if self.W_in is None:
            return resid_mid
        y = self._norm(resid_mid, None if self.ln2_w is None else self.ln2_w[l],
                       None if self.ln2_b is None else self.ln2_b[l])
        act = _ACTS[self.config["act_fn"]](y @ self.W_in[l] + self.b_in[l])
        return resid_mid + act @ self.W_out[l] + self.b_out[l]

    def attend(self, l: int, xq: np.ndarray, xk: np.ndarray, xv: np.ndarray, heads=slice(None)):
        """Layer ``l``'s heads on query, key and value inputs [batch, seq, d_model] (or [batch,
        n_heads, seq, d_model] for one input per head): ``(pattern [batch, n_heads, seq, seq],
        out [batch, n_heads, seq, d_model])`` where ``out = pattern @ v @ W_O`` (no ``b_O``)."""
        xq, xk, xv = (x[:, None] if x.ndim == 3 else x for x in (xq, xk, xv))
        q = xq @ self.W_Q[l, heads] + self.b_Q[l, heads][..., None, :]     # [batch, n_heads, seq, d_head]
        k = xk @ self.W_K[l, heads] + self.b_K[l, heads][..., None, :]
        v = xv @ self.W_V[l, heads] + self.b_V[l, heads][..., None, :]
        seq = q.shape[-2]
        scores = q @ k.swapaxes(-1, -2) / np.sqrt(self.config["d_head"]) + _causal_mask(seq)
        scores -= scores.max(axis=-1, keepdims=True)      # in place: this is the forward pass's hot spot
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        return scores, scores @ v @ self.W_O[l, heads]

    def unembed(self, resid: np.ndarray) -> np.ndarray:
        """Logits from the final residual stream (through the final norm, if any)."""
        return self._norm(resid, self.ln_final_w, self.ln_final_b) @ self.W_U + self.b_U

    def logits(self, tokens) -> np.ndarray:
        """Next-token logits: ``[seq, d_vocab]`` for ``tokens [seq]``, ``[batch, seq, d_vocab]`` for ``[batch, seq]``.

        ``tokens`` are integer ids in ``[0, d_vocab)``, at most ``n_ctx`` of them
        per sequence. Floats (even whole ones), bools, other shapes raise ValueError.
        """
        return self.run(tokens, patterns=False)[0]

    def attention_patterns(self, tokens) -> np.ndarray:
        """Attention probabilities, query position by key position.

        ``[n_layers, n_heads, seq, seq]`` for ``tokens [seq]`` and ``[batch,
        n_layers, n_heads, seq, seq]`` for ``[batch, seq]``. Entry ``[l, h, i, j]``
        is how much head ``h`` of layer ``l`` at position ``i`` attends to
        position ``j``: each row sums to 1 and is 0 for ``j > i`` (causal mask).
        """
        return self.run(tokens)[1]

    def loss_per_token(self, tokens) -> np.ndarray:
        """Cross-entropy (nats) of predicting ``tokens[..., t+1]`` at position ``t``: shape ``[..., seq-1]``."""
        toks, _ = self.check_tokens(tokens)
        return cross_entropy(self.logits(tokens), np.asarray(tokens))

    def fold_norm(self) -> "Model":
        """The same function with the norm's learned scale folded into the weights that read it.

        As TransformerLens's ``fold_ln`` (``headspace._state_dict.fold``, the fold the scores'
        ``headspace.weights`` uses too): ``W_Q, W_K, W_V`` of layer ``l`` become
        ``ln1_w[l][:, None] * W``, ``W_U`` becomes ``ln_final_w[:, None] * W_U``
        (``W_in`` likewise with ``ln2_w``) and ``normalization_type`` "RMS" becomes the
        parameter-free "RMSPre". For "LN" the norm's bias goes into the reader's bias
        (``b_Q + ln1_b @ W_Q``), the scaled readers are centred over ``d_model`` (LayerNorm's
        output has mean 0, so that component is never read) and the type becomes "LNPre"; an
        "LNPre" model's readers are centred too. Composition scores should be computed on folded
        weights: they are the maps the heads really apply to the (normalised) residual stream.
        A model without a norm comes back unchanged (as a copy).
        """
        folded = Model.__new__(Model)
        folded.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v)
                                for k, v in self.__dict__.items()})
        folded.config = dict(self.config)
        names = ("W_Q", "W_K", "W_V", "W_U", "b_Q", "b_K", "b_V", "b_U")
        names += ("W_in", "b_in") if self.W_in is not None else ()
        norm = self.config.get("normalization_type")
        readers, after = fold(norm, {n: getattr(folded, n) for n in names},
                              {"ln1": self.ln1_w, "ln_final": self.ln_final_w, "ln2": self.ln2_w},
                              {"ln1": self.ln1_b, "ln_final": self.ln_final_b, "ln2": self.ln2_b})
        folded.__dict__.update(readers)
        if after != norm:
            folded.config["normalization_type"] = after
        folded.ln1_w = folded.ln_final_w = folded.ln2_w = None
        folded.ln1_b = folded.ln_final_b = folded.ln2_b = None
        return folded

    # -- helpers ------------------------------------------------------------

    def _norm(self, x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None = None) -> np.ndarray:
        norm = self.config.get("normalization_type")
        if norm is None:
            return x
        if norm in ("LN", "LNPre"):
            x = x - x.mean(axis=-1, keepdims=True)
        x = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + self.eps)
        x = x if w is None else x * w
        return x if b is None else x + b

    def check_tokens(self, tokens) -> tuple[np.ndarray, bool]:
        """``tokens`` as int64 ``[batch, seq]``, and whether a single ``[seq]`` sequence came in."""
        if isinstance(tokens, (str, bytes)):
            raise ValueError(f"tokens must be integer token ids; got a string {tokens!r}")
        try:
            toks = np.asarray(tokens)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"tokens must be a [seq] or [batch, seq] array of integers; got {exc}") from None
        if toks.size == 0:  # before the dtype: numpy reads [] as float64
            raise ValueError(f"tokens must not be empty; got shape {list(toks.shape)}")
        if toks.dtype.kind not in "iu":
            raise ValueError(f"tokens must be integer token ids; got dtype {toks.dtype}")
        if toks.ndim not in (1, 2):
            raise ValueError(f"tokens must have shape [seq] or [batch, seq]; got {list(toks.shape)}")
        n_ctx, d_vocab = self.config["n_ctx"], self.config["d_vocab"]
        if toks.shape[-1] > n_ctx:
            raise ValueError(f"tokens must have at most n_ctx={n_ctx} positions; got seq={toks.shape[-1]}")
        bad = (toks < 0) | (toks >= d_vocab)
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"tokens must be in [0, d_vocab={d_vocab}); got {toks[where]} at index {where}")
        single = toks.ndim == 1
        return (toks[None] if single else toks).astype(np.int64), single


@lru_cache(maxsize=8)
def _causal_mask(seq: int) -> np.ndarray:
    """[seq, seq]: 0 where a query may attend, -inf where the key comes after it (added to the scores,
    which is faster than assigning through a boolean mask)."""
    mask = np.where(np.triu(np.ones((seq, seq), dtype=bool), k=1), -np.inf, 0.0)
    mask.setflags(write=False)
    return mask


def cross_entropy(logits: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Next-token loss (nats): ``logits[..., t, :]`` predicting ``tokens[..., t+1]``, shape ``[..., seq-1]``."""
    logits = logits[..., :-1, :]
    logits = logits - logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(logp, np.asarray(tokens)[..., 1:, None], axis=-1)[..., 0]
