"""Checkpoints as models are shared (safetensors + ``config.json``), read into ``headspace.weights.Weights``.

A checkpoint is one or more safetensors files (``headspace.safetensors_file``) and, usually, the
Hugging Face ``config.json`` beside them. Its *architecture* is named by the config
(``model_type``, else ``architectures``) or, without one, inferred from the tensor names (and
``Checkpoint.named_by`` says which). Four layouts are read:

* ``gpt2`` (GPT-2): Conv1D weights stored ``[in, out]``; ``c_attn`` holds Q, K and V side by
  side, ``[d_model, 3 d_model]``; LayerNorm ``ln_1`` before attention, ``ln_f`` at the end;
  learned positions.
* ``gpt_neox`` (GPT-NeoX, Pythia): torch Linear weights stored ``[out, in]``; the fused
  ``query_key_value`` interleaves per head, ``[n_heads, (q, k, v), d_head]`` along its output;
  LayerNorm ``input_layernorm``, ``final_layer_norm``; rotary positions on part of each head.
* ``llama`` (Llama, Mistral, Qwen2): separate ``q_proj k_proj v_proj o_proj``, torch Linear;
  grouped-query attention: ``k_proj`` and ``v_proj`` hold ``n_key_value_heads`` heads, each
  shared by ``n_heads / n_key_value_heads`` consecutive query heads, and are repeated here so
  that every query head has its own K and V (as the model computes it); RMSNorm
  ``input_layernorm``, ``norm``; rotary positions.
* ``transformer_lens``: TransformerLens's own state-dict keys (``blocks.0.attn.W_Q`` ...), its
  config fields in ``config.json`` (``n_layers, n_heads, d_model, d_head, normalization_type``).

Norm scales are folded into the readers exactly as ``headspace.weights`` folds them (TransformerLens's
``fold_ln``): LayerNorm's scale multiplied in and the readers centred, RMSNorm's multiplied in.

**Rotary positions.** In GPT-NeoX and Llama-family models the query and key are rotated by an angle
that depends on their positions before they meet, so the true QK map of a pair of positions is
``W_Q R(j - i) W_K^T``, a different matrix for every offset. The scores here read the weights
without rotation: ``W_Q W_K^T``, the content-only part (offset 0, a token attending to its own
position's content). Q- and K-composition of a rotary model are therefore the composition of the
content part of the query and key; V-composition (``W_V W_O``) has no rotation and is exact.
``Checkpoint.rotary`` says when this applies.

Only the tensors the scores need are read: per layer the attention weights and the first norm's
scale, and, if asked for (``embeddings=True``, the ``token`` and ``whitened`` metrics), the
embedding, the final norm and the unembedding. ``bytes_to_read`` says how many bytes that is
before anything is read, ``memory_bytes`` how much float32 memory the weights take.

>>> import numpy as np, tempfile, pathlib, json
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> config = example_config("gpt2", n_layers=2, n_heads=2, d_model=8)
>>> (root / "config.json").write_text(json.dumps(config)) > 0
True
>>> _ = write_example(root / "model.safetensors", config, seed=0)
>>> ck = open_checkpoint(root)
>>> ck.architecture, ck.named_by, ck.n_layers, ck.n_heads, ck.d_model, ck.d_head, ck.dtypes
('gpt2', 'config.json', 2, 2, 8, 4, ['F32'])
>>> w = ck.weights()
>>> w.normalization_type, w.W_Q.shape, w.W_E is None
('LNPre', (2, 2, 8, 4), True)
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from headspace._state_dict import FOLDED, NORMS, fold
from headspace.safetensors_file import FLOAT_DTYPES, FileSource, SafetensorsFile, to_bytes
from headspace.weights import Weights

__all__ = ["ARCHITECTURES", "MODEL_TYPES", "Checkpoint", "open_checkpoint", "from_files", "example_config",
           "example_state", "write_example"]

#: The layouts read, each with the tensor names it needs (``{l}``: the layer; relative to the
#: checkpoint's prefix, e.g. ``transformer.`` or ``model.``; ``^`` marks names at the root).
ARCHITECTURES = {
    "gpt2": {"attention": ("h.{l}.attn.c_attn.weight", "h.{l}.attn.c_proj.weight"), "ln1": "h.{l}.ln_1.weight",
             "ln_final": "ln_f.weight", "embed": "wte.weight", "pos": "wpe.weight", "unembed": "^lm_head.weight",
             "norm": "LN"},
    "gpt_neox": {"attention": ("layers.{l}.attention.query_key_value.weight", "layers.{l}.attention.dense.weight"),
                 "ln1": "layers.{l}.input_layernorm.weight", "ln_final": "final_layer_norm.weight",
                 "embed": "embed_in.weight", "pos": None, "unembed": "^embed_out.weight", "norm": "LN"},
    "llama": {"attention": ("layers.{l}.self_attn.q_proj.weight", "layers.{l}.self_attn.k_proj.weight",
                            "layers.{l}.self_attn.v_proj.weight", "layers.{l}.self_attn.o_proj.weight"),
              "ln1": "layers.{l}.input_layernorm.weight", "ln_final": "norm.weight", "embed": "embed_tokens.weight",
              "pos": None, "unembed": "^lm_head.weight", "norm": "RMS"},
    "transformer_lens": {"attention": ("blocks.{l}.attn.W_Q", "blocks.{l}.attn.W_K", "blocks.{l}.attn.W_V",
                                       "blocks.{l}.attn.W_O"),
                         "ln1": "blocks.{l}.ln1.w", "ln_final": "ln_final.w", "embed": "embed.W_E",
                         "pos": "pos_embed.W_pos", "unembed": "unembed.W_U", "norm": None},
}
#: config.json's ``model_type`` (and ``architectures`` class names) -> layout.
MODEL_TYPES = {"gpt2": "gpt2", "gpt_neox": "gpt_neox", "llama": "llama", "mistral": "llama", "qwen2": "llama",
               "GPT2LMHeadModel": "gpt2", "GPT2Model": "gpt2", "GPTNeoXForCausalLM": "gpt_neox",
               "GPTNeoXModel": "gpt_neox", "LlamaForCausalLM": "llama", "LlamaModel": "llama",
               "MistralForCausalLM": "llama", "MistralModel": "llama", "Qwen2ForCausalLM": "llama",
               "Qwen2Model": "llama"}


@dataclass
class Checkpoint:
    """A checkpoint's architecture and sizes, from its headers and config; ``weights()`` reads it.

    ``files``: name -> ``SafetensorsFile``; ``where``: tensor name -> file name. ``named_by``:
    ``"config.json"`` or ``"tensor names"``. ``model_type`` is the config's (``mistral``), or
    the layout's name when inferred. ``notes``: what a reader of the scores should know (rotary
    positions, an inferred architecture).
    """
    files: dict
    where: dict
    architecture: str
    model_type: str
    named_by: str
    prefix: str
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_model: int
    d_head: int
    normalization_type: str | None
    eps: float
    rotary: bool
    config: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)

    # ----------------------------------------------------------------------- what is there

    @property
    def file_bytes(self) -> int:
        """Bytes in the checkpoint's files, all of them."""
        return sum(f.size for f in self.files.values())

    @property
    def bytes_read(self) -> int:
        """Bytes read from the files so far (headers included)."""
        return sum(f.bytes_read for f in self.files.values())

    @property
    def dtypes(self) -> list[str]:
        """The stored dtypes of the attention weights, sorted."""
        return sorted({self._file(n).dtype(n) for n in self._names(embeddings=False)})

    def bytes_to_read(self, embeddings: bool = False) -> int:
        """Bytes ``weights(embeddings)`` will read, known from the headers alone."""
        return sum(self._file(n).nbytes(n) for n in self._names(embeddings))

    def memory_bytes(self, embeddings: bool = False) -> int:
        """float32 bytes of the weights ``weights(embeddings)`` returns, key and value heads repeated
        to one per query head, plus the largest layer read while folding."""
        L, H, M, D = self.n_layers, self.n_heads, self.d_model, self.d_head
        heads = 4 * L * H * M * D * 4
        layer = 3 * 4 * H * M * D * 4                           # stored, repeated and folded copies
        if embeddings:
            vocab = self._shape(self._name("embed"))[0]
            heads += 2 * vocab * M * 4 + (self._shape(self._name("pos"))[0] * M * 4 if self._has("pos") else 0)
        return heads + layer

    def summary(self) -> dict:
        """What was read, for a page or a log: JSON-ready."""
        return {"architecture": self.architecture, "model_type": self.model_type, "named_by": self.named_by,
                "n_layers": self.n_layers, "n_heads": self.n_heads, "n_kv_heads": self.n_kv_heads,
                "d_model": self.d_model, "d_head": self.d_head, "normalization_type": self.normalization_type,
                "dtypes": self.dtypes, "rotary": self.rotary, "file_bytes": self.file_bytes,
                "bytes_to_read": self.bytes_to_read(), "bytes_read": self.bytes_read,
                "memory_bytes": self.memory_bytes(), "notes": list(self.notes)}

    # ----------------------------------------------------------------------- reading

    def weights(self, embeddings: bool = False, progress=None) -> Weights:
        """The folded attention weights, TransformerLens layout, read one layer at a time.

        ``embeddings=False`` leaves ``W_E``, ``W_pos`` and ``W_U`` None (they are only needed by
        the ``token`` and ``whitened`` metrics, and at GPT-2's vocabulary they are larger than
        the attention weights). ``progress(layers_done, n_layers)`` is called after each layer.
        """
        L, H, M, D = self.n_layers, self.n_heads, self.d_model, self.d_head
        out = {k: np.empty((L, H, M, D) if k != "W_O" else (L, H, D, M), np.float32)
               for k in ("W_Q", "W_K", "W_V", "W_O")}
        folds = self.normalization_type in FOLDED
        for l in range(L):
            for key, value in zip(("W_Q", "W_K", "W_V", "W_O"), self.read_layer(l)):
                out[key][l] = value
            if progress is not None:
                progress(l + 1, L)
        W_E = W_pos = W_U = None
        if embeddings:
            W_E = self._tensor(self._name("embed"), (None, M))
            W_pos = self._tensor(self._name("pos"), (None, M)) if self._has("pos") else None
            W_U = self._unembed(W_E)
            if folds:
                W_U = fold(self.normalization_type, {"W_U": W_U},
                           {"ln_final": self._tensor(self._name("ln_final"), (M,))})[0]["W_U"]
            elif self.normalization_type in ("LN", "LNPre"):
                W_U = fold(self.normalization_type, {"W_U": W_U}, {})[0]["W_U"]
        norm = FOLDED.get(self.normalization_type, self.normalization_type)
        return Weights(W_E, W_pos, out["W_Q"], out["W_K"], out["W_V"], out["W_O"], W_U, norm, self.eps)

    def read_layer(self, l: int):
        """Layer ``l``'s folded ``W_Q, W_K, W_V [n_heads, d_model, d_head]`` and ``W_O [n_heads, d_head,
        d_model]``, float32: what ``weights()`` stacks (the page reads a layer per request)."""
        if not (isinstance(l, int) and 0 <= l < self.n_layers):
            raise ValueError(f"l must be a layer, 0 <= l < n_layers={self.n_layers}; got {l!r}")
        q, k, v, o = self._layer(l)
        scale = None
        if self.normalization_type in FOLDED:
            scale = self._tensor(self._name("ln1", l), (self.d_model,))[None]
        readers, _ = fold(self.normalization_type, {"W_Q": q[None], "W_K": k[None], "W_V": v[None]}, {"ln1": scale})
        return readers["W_Q"][0], readers["W_K"][0], readers["W_V"][0], o

    def _layer(self, l: int):
        """Layer ``l``'s unfolded ``W_Q, W_K, W_V [n_heads, d_model, d_head]``, ``W_O [n_heads, d_head, d_model]``."""
        H, K, M, D = self.n_heads, self.n_kv_heads, self.d_model, self.d_head
        names = [self._name(("attention", i), l) for i in range(len(ARCHITECTURES[self.architecture]["attention"]))]
        if self.architecture == "gpt2":
            qkv = self._tensor(names[0], (M, 3 * M))                     # Conv1D: x @ W, [in, out]
            q, k, v = (qkv[:, i * M:(i + 1) * M].reshape(M, H, D).transpose(1, 0, 2) for i in range(3))
            o = self._tensor(names[1], (M, M)).reshape(H, D, M)
        elif self.architecture == "gpt_neox":
            qkv = self._tensor(names[0], (3 * M, M)).reshape(H, 3, D, M)   # Linear [out, in], out = (head, qkv, d)
            q, k, v = (qkv[:, i].transpose(0, 2, 1) for i in range(3))
            o = self._tensor(names[1], (M, M)).T.reshape(H, D, M)
        elif self.architecture == "llama":
            q = self._tensor(names[0], (H * D, M)).reshape(H, D, M).transpose(0, 2, 1)
            k, v = (self._tensor(n, (K * D, M)).reshape(K, D, M).transpose(0, 2, 1) for n in names[1:3])
            o = self._tensor(names[3], (M, H * D)).T.reshape(H, D, M)
        else:
            q = self._tensor(names[0], (H, M, D))
            k, v = (self._tensor(n, (K, M, D)) for n in names[1:3])
            o = self._tensor(names[3], (H, D, M))
        if K != H:                                                   # each key/value head serves H/K query heads
            k, v = np.repeat(k, H // K, axis=0), np.repeat(v, H // K, axis=0)
        return q, k, v, o

    def _unembed(self, W_E):
        if self._has("unembed"):
            W = self._tensor(self._name("unembed"), None)
            return W if self.architecture == "transformer_lens" else W.T
        if self.architecture == "transformer_lens" or self.config.get("tie_word_embeddings") is False:
            raise ValueError(f"the checkpoint has no unembedding ({self._name('unembed')!r}) and does not tie it "
                             f"to the embedding")
        return W_E.T.copy()                                           # tied: lm_head = wte

    # ----------------------------------------------------------------------- names

    def _name(self, part, l: int | None = None) -> str:
        spec = ARCHITECTURES[self.architecture]
        pattern = spec[part[0]][part[1]] if isinstance(part, tuple) else spec[part]
        if self.architecture == "transformer_lens" and pattern.startswith("blocks.{l}.attn.W_") \
                and pattern[-1] in "KV" and self.n_kv_heads != self.n_heads:
            pattern = pattern.replace("attn.W_", "attn._W_")       # TransformerLens's grouped keys
        if pattern.startswith("^"):
            root = pattern[1:]
            return root if root in self.where or self.prefix + root not in self.where else self.prefix + root
        return self.prefix + pattern.format(l=l)

    def _has(self, part) -> bool:
        return ARCHITECTURES[self.architecture][part] is not None and self._name(part) in self.where

    def _names(self, embeddings: bool) -> list[str]:
        spec = ARCHITECTURES[self.architecture]
        names = [self._name(("attention", i), l) for l in range(self.n_layers) for i in range(len(spec["attention"]))]
        if self.normalization_type in FOLDED:
            names += [self._name("ln1", l) for l in range(self.n_layers)]
        if embeddings:
            names += [self._name(p) for p in ("embed", "pos", "unembed") if self._has(p)]
            if self.normalization_type in FOLDED:
                names.append(self._name("ln_final"))
        return names

    def _file(self, name: str) -> SafetensorsFile:
        if name not in self.where:
            raise ValueError(f"the checkpoint ({self.architecture} layout) must have a tensor {name!r}; it is missing")
        return self.files[self.where[name]]

    def _shape(self, name: str) -> tuple:
        return self._file(name).shape(name)

    def _tensor(self, name: str, shape) -> np.ndarray:
        f = self._file(name)
        if shape is not None and (len(f.shape(name)) != len(shape)
                                  or any(s is not None and s != a for s, a in zip(shape, f.shape(name)))):
            want = "[" + ", ".join("*" if s is None else str(s) for s in shape) + "]"
            raise ValueError(f"tensor {name!r} must have shape {want} for this {self.architecture} checkpoint "
                             f"(n_heads={self.n_heads}, n_kv_heads={self.n_kv_heads}, d_model={self.d_model}, "
                             f"d_head={self.d_head}); got {list(f.shape(name))}")
        arr = f.tensor(name)
        if not np.isfinite(arr).all():
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(f"tensor {name!r} must be finite; got {arr[tuple(bad)]} at index {tuple(int(i) for i in bad)}")
        return arr


# --------------------------------------------------------------------------- opening

def open_checkpoint(path, config=None) -> Checkpoint:
    """The checkpoint at ``path``: a Hugging Face folder (``config.json`` with ``model.safetensors``,
    or the shards a ``model.safetensors.index.json`` names), a ``.safetensors`` file (its config
    from ``config`` or a ``config.json`` beside it, else none), or an index file. Only headers are
    read here. ``config`` may be a dict or a path to a JSON file.
    """
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    if isinstance(config, (str, os.PathLike)):
        config = _read_json(Path(config), "config")
    elif config is None and (folder / "config.json").is_file() and (path.is_dir() or path.name != "config.json"):
        config = _read_json(folder / "config.json", "config")
    if path.is_dir():
        index = path / "model.safetensors.index.json"
        if index.is_file():
            path = index
        elif (path / "model.safetensors").is_file():
            path = path / "model.safetensors"
        else:
            found = sorted(p.name for p in path.iterdir())[:12]
            raise ValueError(f"{path} must hold model.safetensors or model.safetensors.index.json; found {found}")
    if not path.is_file():
        raise ValueError(f"checkpoint {path} does not exist")
    if path.name.endswith(".index.json"):
        weight_map = _read_json(path, "index").get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise ValueError(f"{path} must have a non-empty weight_map (tensor name -> shard file)")
        shards = sorted(set(weight_map.values()))
        # a download that stopped part way leaves an index naming shards that are not there
        missing = [s for s in shards if not (path.parent / s).is_file()]
        if missing:
            raise ValueError(f"every shard {path.name} names must be in {path.parent}; missing {len(missing)} "
                             f"of {len(shards)}: {', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}")
        files = {s: SafetensorsFile(FileSource(path.parent / s), name=s) for s in shards}
    else:
        files = {path.name: SafetensorsFile(FileSource(path), name=path.name)}
    return from_files(files, config)


def from_files(files: dict, config: dict | None = None) -> Checkpoint:
    """A ``Checkpoint`` of opened ``SafetensorsFile``s (name -> file) and a config dict (or None):
    the architecture and sizes worked out and checked against the headers. The page's worker
    calls this with files that read ``File.slice`` ranges."""
    where = {}
    for fname, f in files.items():
        for name in f.names:
            if name in where:
                raise ValueError(f"tensor {name!r} is in both {where[name]} and {fname}")
            where[name] = fname
    config = dict(config or {})
    arch, model_type, named_by = _architecture(config, where)
    prefix = _prefix(arch, where)
    if prefix is None:
        raise ValueError(_unknown(f"config.json names {model_type!r} ({arch} layout), but the tensors do not "
                                  f"have its names", where, only=arch))
    shape = lambda n: files[where[n]].shape(n)       # noqa: E731
    layers = {int(m.group(1)) for n in where
              if (m := re.fullmatch(re.escape(prefix) + ARCHITECTURES[arch]["attention"][0]
                                    .replace(".", r"\.").replace("{l}", r"(\d+)"), n))}
    n_layers = _int(config, ("n_layers", "n_layer", "num_hidden_layers"), max(layers) + 1 if layers else 0)
    missing = sorted(set(range(n_layers)) - layers)
    if missing:
        raise ValueError(f"the checkpoint has the attention weights of layers {sorted(layers)} but config "
                         f"says n_layers={n_layers}; missing layers {missing[:8]}")
    first = prefix + ARCHITECTURES[arch]["attention"][0].format(l=0)
    rope = bool(config.get("rotary_dim") or config.get("rotary_pct") or config.get("rope_theta")
                or config.get("positional_embedding_type") == "rotary")
    if arch == "transformer_lens":
        H, M, D = shape(first)
        kvname = prefix + "blocks.0.attn._W_K"
        K = shape(kvname)[0] if kvname in where else H
        norm = config["normalization_type"] if "normalization_type" in config else _tl_norm(where, prefix)
        if norm not in NORMS:
            raise ValueError(f"config['normalization_type'] must be one of {list(NORMS)}; got {norm!r}")
        eps = float(config.get("eps", 1e-5))
        rotary = config.get("positional_embedding_type") == "rotary"
    else:
        M = _int(config, ("n_embd", "hidden_size", "d_model"), None)
        if M is None:
            M = shape(first)[0] if arch == "gpt2" else shape(first)[1]
        H = _int(config, ("n_head", "num_attention_heads", "n_heads"), None)
        if H is None:
            raise ValueError(f"the number of attention heads of a {arch} checkpoint is not in its tensor shapes: "
                             f"give its config.json (num_attention_heads / n_head)")
        K = _int(config, ("num_key_value_heads",), H) if arch == "llama" else H
        D = _int(config, ("head_dim",), M // H) if arch == "llama" else M // H
        if arch != "llama" and M % H:
            raise ValueError(f"d_model={M} must be a multiple of n_heads={H}")
        norm = ARCHITECTURES[arch]["norm"]
        eps = float(config.get("layer_norm_epsilon", config.get("layer_norm_eps", config.get("rms_norm_eps", 1e-5))))
        rotary = arch in ("gpt_neox", "llama")
    if H % K:
        raise ValueError(f"n_heads={H} must be a multiple of the key/value heads n_key_value_heads={K}")
    notes = []
    if named_by == "tensor names":
        notes.append(f"no config.json: the architecture ({arch}) was inferred from the tensor names")
    if rotary or rope:
        notes.append("rotary positions: Q and K scores read W_Q W_K^T without rotation (the content part); "
                     "V scores are exact")
    if K != H:
        notes.append(f"grouped-query attention: {K} key/value heads, each repeated for {H // K} query heads")
    ck = Checkpoint(files, where, arch, model_type, named_by, prefix, n_layers, H, K, M, D, norm, eps,
                    bool(rotary or rope), config, notes)
    for name in ck._names(embeddings=False):                 # refused now, before any weight is read
        dtype = ck._file(name).dtype(name)
        if dtype not in FLOAT_DTYPES:
            raise ValueError(f"tensor {name!r} has dtype {dtype}; supported are {', '.join(FLOAT_DTYPES)} "
                             f"(floating point, read as float32)")
    return ck


def _architecture(config: dict, where: dict) -> tuple[str, str, str]:
    if config:
        if {"n_layers", "d_head", "n_heads"} <= set(config) and any(".attn.W_Q" in n for n in where):
            return "transformer_lens", "transformer_lens", "config.json"
        named = [config.get("model_type"), *(config.get("architectures") or [])]
        for n in named:
            if n in MODEL_TYPES:
                return MODEL_TYPES[n], config.get("model_type") or n, "config.json"
        if any(named):
            raise ValueError(_unknown(f"unknown architecture: config.json names model_type "
                                      f"{config.get('model_type')!r}, architectures {config.get('architectures')}; "
                                      f"supported are {', '.join(sorted(k for k in MODEL_TYPES if k.islower()))} "
                                      f"and TransformerLens keys", where))
    for arch in ARCHITECTURES:
        if _prefix(arch, where) is not None:
            return arch, arch, "tensor names"
    raise ValueError(_unknown("unknown architecture: no config.json names it and the tensor names match no "
                              "layout read here (GPT-2, GPT-NeoX/Pythia, Llama/Mistral/Qwen2, TransformerLens)",
                              where))


def _prefix(arch: str, where: dict) -> str | None:
    marker = ARCHITECTURES[arch]["attention"][0].format(l=0)
    for name in sorted(where, key=len):
        if name.endswith(marker) and (name == marker or name[:-len(marker)].endswith(".")):
            return name[:-len(marker)]
    return None


def _unknown(what: str, where: dict, only: str | None = None) -> str:
    names = sorted(where)
    shown = ", ".join(names[:10]) + (f" ... ({len(names)} in all)" if len(names) > 10 else "")
    expected = "; ".join(f"{a}: {ARCHITECTURES[a]['attention'][0].format(l=0)}" for a in ARCHITECTURES
                         if only in (None, a))
    return f"{what}. Tensor names found: {shown or 'none'}. Expected names such as {expected}"


def _tl_norm(where, prefix):
    if prefix + "blocks.0.ln1.b" in where:
        return "LN"
    if prefix + "blocks.0.ln1.w" in where:
        return "RMS"
    raise ValueError("a TransformerLens checkpoint without norm weights needs its config.json's normalization_type "
                     "(LNPre, RMSPre or null): the tensors cannot tell them apart")


def _int(config: dict, keys, default):
    for key in keys:
        if key in config and config[key] is not None:
            value = config[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"config[{key!r}] must be a positive integer; got {value!r}")
            return value
    return default


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{what} {path} must be a JSON file; {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} {path} must hold a JSON object; got {type(data).__name__}")
    return data


# --------------------------------------------------------------------------- examples (tests, benches)

def example_config(architecture: str, n_layers: int = 2, n_heads: int = 4, d_model: int = 32,
                   n_kv_heads: int | None = None, d_vocab: int = 50, n_ctx: int = 16) -> dict:
    """A config.json for a small model of ``architecture`` (``gpt2``, ``gpt_neox``, ``llama``,
    ``mistral``, ``qwen2`` or ``transformer_lens``), with the fields its library writes."""
    if architecture == "gpt2":
        return {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_layer": n_layers, "n_head": n_heads,
                "n_embd": d_model, "vocab_size": d_vocab, "n_positions": n_ctx, "layer_norm_epsilon": 1e-5}
    if architecture == "gpt_neox":
        return {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"], "num_hidden_layers": n_layers,
                "num_attention_heads": n_heads, "hidden_size": d_model, "vocab_size": d_vocab, "rotary_pct": 0.25,
                "layer_norm_eps": 1e-5, "max_position_embeddings": n_ctx}
    if architecture in ("llama", "mistral", "qwen2"):
        cls = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM"}
        return {"model_type": architecture, "architectures": [cls[architecture]], "num_hidden_layers": n_layers,
                "num_attention_heads": n_heads, "num_key_value_heads": n_kv_heads or n_heads,
                "hidden_size": d_model, "vocab_size": d_vocab, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
                "tie_word_embeddings": False, "max_position_embeddings": n_ctx}
    if architecture == "transformer_lens":
        return {"n_layers": n_layers, "n_heads": n_heads, "d_model": d_model, "d_head": d_model // n_heads,
                "d_vocab": d_vocab, "n_ctx": n_ctx, "normalization_type": "LN", "n_key_value_heads": n_kv_heads,
                "positional_embedding_type": "standard", "attn_only": True}
    raise ValueError(f"architecture must be one of gpt2, gpt_neox, llama, mistral, qwen2, transformer_lens; "
                     f"got {architecture!r}")


def example_state(config: dict, seed: int = 0, scale: float = 0.02) -> dict:
    """Random weights with the real names and shapes of ``config``'s architecture (as
    ``example_config`` writes it): every attention weight, norm scale (around 1) and embedding
    a reader here would use, plus the biases and MLP-free rest left out. For tests and benches."""
    rng = np.random.default_rng(seed)
    arch = "transformer_lens" if "d_head" in config else MODEL_TYPES[config["model_type"]]
    n = lambda *shape: (scale * rng.standard_normal(shape)).astype(np.float32)         # noqa: E731
    ones = lambda m: (1.0 + 0.3 * rng.standard_normal(m)).astype(np.float32)          # noqa: E731
    if arch == "transformer_lens":
        L, H, M, D = config["n_layers"], config["n_heads"], config["d_model"], config["d_head"]
        V, C, K = config["d_vocab"], config["n_ctx"], config.get("n_key_value_heads") or config["n_heads"]
        state = {"embed.W_E": n(V, M), "pos_embed.W_pos": n(C, M), "unembed.W_U": n(M, V),
                 "ln_final.w": ones(M), "ln_final.b": n(M)}
        for l in range(L):
            kv = "_" if K != H else ""
            state.update({f"blocks.{l}.ln1.w": ones(M), f"blocks.{l}.ln1.b": n(M), f"blocks.{l}.attn.W_Q": n(H, M, D),
                          f"blocks.{l}.attn.{kv}W_K": n(K, M, D), f"blocks.{l}.attn.{kv}W_V": n(K, M, D),
                          f"blocks.{l}.attn.W_O": n(H, D, M)})
        return state
    if arch == "gpt2":
        L, H, M, V, C = config["n_layer"], config["n_head"], config["n_embd"], config["vocab_size"], config["n_positions"]
        state = {"transformer.wte.weight": n(V, M), "transformer.wpe.weight": n(C, M),
                 "transformer.ln_f.weight": ones(M), "transformer.ln_f.bias": n(M)}
        for l in range(L):
            p = f"transformer.h.{l}."
            state.update({p + "ln_1.weight": ones(M), p + "ln_1.bias": n(M), p + "attn.c_attn.weight": n(M, 3 * M),
                          p + "attn.c_attn.bias": n(3 * M), p + "attn.c_proj.weight": n(M, M),
                          p + "attn.c_proj.bias": n(M)})
        return state
    L, H, M, V = config["num_hidden_layers"], config["num_attention_heads"], config["hidden_size"], config["vocab_size"]
    if arch == "gpt_neox":
        state = {"gpt_neox.embed_in.weight": n(V, M), "gpt_neox.final_layer_norm.weight": ones(M),
                 "gpt_neox.final_layer_norm.bias": n(M), "embed_out.weight": n(V, M)}
        for l in range(L):
            p = f"gpt_neox.layers.{l}."
            state.update({p + "input_layernorm.weight": ones(M), p + "input_layernorm.bias": n(M),
                          p + "attention.query_key_value.weight": n(3 * M, M),
                          p + "attention.query_key_value.bias": n(3 * M), p + "attention.dense.weight": n(M, M)})
        return state
    K, D = config.get("num_key_value_heads") or H, config.get("head_dim") or M // H
    state = {"model.embed_tokens.weight": n(V, M), "model.norm.weight": ones(M), "lm_head.weight": n(V, M)}
    for l in range(L):
        p = f"model.layers.{l}."
        state.update({p + "input_layernorm.weight": ones(M), p + "self_attn.q_proj.weight": n(H * D, M),
                      p + "self_attn.k_proj.weight": n(K * D, M), p + "self_attn.v_proj.weight": n(K * D, M),
                      p + "self_attn.o_proj.weight": n(M, H * D)})
    return state


def write_example(path, config: dict, seed: int = 0, dtype: str = "F32") -> int:
    """Write ``example_state(config, seed)`` to the safetensors file ``path``, every tensor as ``dtype``
    (F32, F16 or BF16); returns the bytes written."""
    state = example_state(config, seed)
    data = to_bytes(state, {k: dtype for k in state})
    Path(path).write_bytes(data)
    return len(data)
