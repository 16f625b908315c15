"""The shipped toy models as the composition demos see them: names, steps, weights, scores, cached.

Every demo call is pure and deterministic; the caches only make the second call fast (the first
call of a model pays for loading it and for one forward pass that finds its heads).

Composition scores are computed on the model's weights with any learned norm scale folded in
(``Model.fold_norm``): those are the maps the heads apply to the residual stream they read.

The parameter options are read from ``manifest.json`` when this module is imported. The browser
imports the registry after copying the models, so it sees the same manifest as the build. Without
a manifest (a page with no model demo), the fallbacks below only fill the declarations.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from headspace import model as _model
from headspace import store as _store
from headspace.composition import METRICS, MODES, all_composition_scores
from headspace.weights import embedding_read
from headspace.head_pairs import later_mask
from headspace.heads import find_pair, repeated_span, repeated_tokens

from .outputs import head
from .registry import Param

FALLBACK_MODELS = ("attn-only-2l", "attn-only-2l-rms")
PREV, INDUCTION = "previous-token", "induction"
#: The ground truth beside the weight-based metrics: loss increase under path ablation (nats).
CAUSAL = "causal"
#: What the composition demos offer: every metric of the library, then the causal ground truth.
SCORE_OPTIONS = METRICS + (CAUSAL,)


def _manifest() -> dict | None:
    try:
        return _store.read_manifest()
    except ValueError:  # no models here (a browser page without model demos): the fallbacks
        return None


def _declarations():
    """(model names, default model, step options, head1 options, head2 options, names of the
    models with a normalisation, the d_vocab and n_ctx every model accepts, each model's name in
    words) from the manifest."""
    manifest = _manifest()
    entries = (manifest or {}).get("models") or {n: {} for n in FALLBACK_MODELS}
    names = tuple(entries)
    plain = [n for n, e in entries.items() if e.get("normalization_type") is None]
    normed = tuple(n for n in names if n not in plain) or names[-1:]
    default = plain[0] if plain else names[0]
    steps = sorted({int(s) for e in entries.values() for s in e.get("checkpoint_steps", ())})
    layers, heads, vocab, ctx = 2, 4, 128, 64
    if manifest:
        configs = [_store.read_config(n) for n in names]
        layers = min(c["n_layers"] for c in configs)
        heads = min(c["n_heads"] for c in configs)
        vocab = min(c["d_vocab"] for c in configs)
        ctx = min(c["n_ctx"] for c in configs)
    head1 = (PREV,) + tuple(head(l, h) for l in range(layers - 1) for h in range(heads))
    head2 = (INDUCTION,) + tuple(head(l, h) for l in range(1, layers) for h in range(heads))
    words = {n: _model_words(e.get("normalization_type") if manifest else ("RMS" if n.endswith("-rms") else None),
                             _store.read_config(n)["n_layers"] if manifest else 2) for n, e in entries.items()}
    return names, default, ("final",) + tuple(steps), head1, head2, normed, vocab, ctx, words


def _model_words(norm, n_layers: int) -> str:
    """A shipped model as the articles describe it: ``"2 layers, RMSNorm"``, ``"2 layers, no norm"``."""
    return f"{n_layers} layers, " + ({None: "no norm", "RMS": "RMSNorm", "RMSPre": "RMSNorm", "LN": "LayerNorm",
                                       "LNPre": "LayerNorm"}.get(norm) or str(norm))


(MODEL_NAMES, DEFAULT_MODEL, STEP_OPTIONS, HEAD1_OPTIONS, HEAD2_OPTIONS, NORMALISED_MODELS,
 D_VOCAB, N_CTX, _MODEL_WORDS) = _declarations()


def model_words(name: str) -> str:
    """Model ``name`` in words, as its menu and the figures' titles show it."""
    return _MODEL_WORDS.get(name, name)


def n_layers(name: str) -> int:
    """The number of layers of model ``name``, from its config (no weights loaded).

    >>> n_layers("attn-only-2l")
    2
    """
    return _store.read_config(name)["n_layers"]


def _where() -> str:
    return str(_store.models_dir())


def models_where() -> str:
    """The models directory as the caches here key it (it changes when the worker points the store
    elsewhere): a key for a demo's own caches of what it computes from the shipped models."""
    return _where()


def checkpoint_steps(name: str) -> tuple[int, ...]:
    """The training steps with a stored checkpoint of model ``name``."""
    return _entry(_where(), name)["steps"]


@lru_cache(maxsize=None)
def _entry(where: str, name: str) -> dict:
    manifest = _store.read_manifest()
    if name not in manifest["models"]:
        raise ValueError(f"model must be one of {sorted(manifest['models'])}; got {name!r}")
    e = manifest["models"][name]
    return {"steps": tuple(int(s) for s in e.get("checkpoint_steps", ())), "final_step": e.get("final_step")}


def resolve_step(name: str, step) -> int | None:
    """``None`` for "final", else the checkpoint of ``name`` nearest at or before ``step``.

    The step menu lists the union of all models' checkpoints; a model trained to a different
    schedule answers with its own latest checkpoint not after the step asked for.
    """
    if step == "final":
        return None
    steps = checkpoint_steps(name)
    before = [s for s in steps if s <= int(step)]
    return before[-1] if before else steps[0]


@lru_cache(maxsize=None)
def _checkpoints(where: str, name: str) -> dict:
    """Every checkpoint of ``name``, from one read of its file (cached per models directory)."""
    return _model.load_checkpoints(name)


@lru_cache(maxsize=None)
def _loaded(where: str, name: str, step: int | None):
    if step is None:
        return _final(where, name).fold_norm()
    model = _checkpoints(where, name).get(step)
    if model is None:
        raise ValueError(f"step must be one of the checkpoint steps {list(checkpoint_steps(name))}; got {step}")
    return model.fold_norm()


@lru_cache(maxsize=None)
def _final(where: str, name: str):
    return _model.load(name)


def weights(name: str, step: int | None):
    """The folded model at checkpoint ``step`` (None: final weights), cached."""
    return _loaded(_where(), name, step)


#: The fixed, seeded batch path ablation is measured on: random tokens whose second half repeats
#: the first (so induction matters), another seed than the one that finds the heads.
EVAL_BATCH, EVAL_SEED = 32, 1


@lru_cache(maxsize=None)
def eval_tokens(d_vocab: int, n_ctx: int) -> np.ndarray:
    """The evaluation batch for any model of these shapes (read-only, computed once)."""
    toks = repeated_tokens(d_vocab, n_ctx, batch=EVAL_BATCH, seed=EVAL_SEED)
    toks.setflags(write=False)
    return toks


def eval_batch(name: str) -> np.ndarray:
    """``[32, n_ctx]`` int64 tokens for model ``name``: ``heads.repeated_tokens`` with seed 1."""
    cfg = _final(_where(), name).config
    return eval_tokens(cfg["d_vocab"], cfg["n_ctx"])


def model_scores(m, name: str, mode: str, metric: str) -> np.ndarray:
    """``metric`` (or ``"causal"``) for every pair of heads of the folded model ``m``, which may be a
    shipped model with its basis changed (``symmetry.transform_model``); ``name`` picks the batch
    path ablation runs on. [n_layers, n_heads, n_layers, n_heads], not cached."""
    if metric == CAUSAL:
        from headspace.causal import path_ablation
        return path_ablation(m, eval_batch(name), mode)
    kw = {}  # only the metrics that read the embeddings get them (a moved model computes them when read)
    if metric in ("token", "whitened"):  # the library's embedding, as ``Weights.composition_scores`` reads it
        kw["W_E"] = embedding_read(m.W_E, m.config.get("normalization_type"), m.eps)
    if metric == "token":
        kw["W_U"] = m.W_U
    return all_composition_scores(m.W_Q, m.W_K, m.W_V, m.W_O, mode, metric, **kw)


@lru_cache(maxsize=None)
def _scores(where: str, name: str, step: int | None, mode: str, metric: str) -> np.ndarray:
    out = None
    if metric == CAUSAL:  # precomputed for the shipped model files (``causal_table``)
        out = causal_lookup(where, name, step, mode)
    if out is None:
        out = model_scores(_loaded(where, name, step), name, mode, metric)
    out.setflags(write=False)
    return out


def later_pairs(s) -> np.ndarray:
    """The scores of the pairs whose reader is in a later layer than its writer, flattened (the
    only pairs that can compose; ``all_composition_scores`` is 0 elsewhere).

    >>> later_pairs(np.arange(16.0).reshape(2, 2, 2, 2)).tolist()
    [2.0, 3.0, 6.0, 7.0]
    """
    s = np.asarray(s)
    return s[later_mask(s.shape)]


def scores(name: str, step: int | None, mode: str, metric: str) -> np.ndarray:
    """``all_composition_scores`` of the folded weights, [n_layers, n_heads, n_layers, n_heads], cached;
    for ``metric="causal"``, ``causal.path_ablation`` on ``eval_batch(name)`` instead (read from the
    shipped ``causal_table.json`` when it was computed from these model files)."""
    return _scores(_where(), name, step, mode, metric)


# -- path ablation of the shipped model files, computed once (``causal_table``) and read here -------
#
# ``causal_lookup`` answers from the table only for a model whose files are the ones the table was
# computed from (the sha256 of its config, weights and checkpoints in the manifest) with the same
# evaluation batch; otherwise (a retrained model, another models directory) ``scores`` computes the
# row as before.

#: The table ``python -m headspace_site.figure.causal_table`` writes, package data of the wheel.
CAUSAL_TABLE = Path(__file__).with_name("causal_table.json")
#: The model files the numbers depend on (the training curve is not read by path ablation).
_FILES = ("config.json", "weights.npz", "checkpoints.npz")


def causal_key(step: int | None, mode: str) -> str:
    """A row's key in the table: ``"final/K"``, ``"600/Q"``."""
    return f"{'final' if step is None else int(step)}/{mode}"


def causal_fingerprint(entry: dict) -> dict:
    """What a model's rows depend on: its files' sha256 (from the manifest) and the batch."""
    return {"files": {f: entry["files"][f]["sha256"] for f in _FILES if f in entry.get("files", {})},
            "eval_batch": EVAL_BATCH, "eval_seed": EVAL_SEED}


@lru_cache(maxsize=None)
def _causal_table(where: str) -> dict:
    """``{model: (shape, rows)}`` for the models in ``where`` whose files the table was computed from;
    {} when this copy of the package lacks the file."""
    try:
        stored = json.loads(CAUSAL_TABLE.read_text())["models"]
        manifest = _store.read_manifest(where)["models"]
    except (OSError, ValueError, KeyError):
        return {}
    return {name: (tuple(m["shape"]), m["rows"]) for name, m in stored.items()
            if name in manifest and m["fingerprint"] == causal_fingerprint(manifest[name])}


def causal_lookup(where: str, name: str, step: int | None, mode: str) -> np.ndarray | None:
    """Path ablation [n_layers, n_heads, n_layers, n_heads] of ``name`` at ``step`` from the table,
    or None when the table has no row for exactly these model files."""
    shape, rows = _causal_table(where).get(name, (None, {}))
    row = rows.get(causal_key(step, mode))
    if row is None:
        return None
    out = np.zeros(shape)
    out[later_mask(shape)] = row
    return out


@lru_cache(maxsize=None)
def _roles(where: str, name: str):
    return find_pair(_loaded(where, name, None))


def roles(name: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """((layer, head) of the previous-token head, (layer, head) of the induction head), final weights."""
    return _roles(_where(), name)


@lru_cache(maxsize=None)
def _curve(where: str, name: str) -> dict:
    return _store.read_training_curve(name)


def curve(name: str) -> dict:
    """The model's ``training_curve.json`` (checked against the manifest's sha256), cached."""
    return _curve(_where(), name)


def head_label(layer: int, h: int, name: str) -> str:
    """``"L0H2"``, with the head's role appended when it has one: ``"L0H2 previous-token"``."""
    prev, ind = roles(name)
    role = {prev: " previous-token", ind: " induction"}.get((layer, h), "")
    return f"{head(layer, h)}{role}"


def parse_head(value: str, name: str) -> tuple[int, int]:
    """A head option (``"previous-token"``, ``"induction"`` or ``"L1H2"``) as (layer, head)."""
    if value == PREV:
        return roles(name)[0]
    if value == INDUCTION:
        return roles(name)[1]
    layer, h = value[1:].split("H")
    return int(layer), int(h)


# -- the controls every model demo shares, declared once ------------------------------------------

def model_param(help: str = "a shipped toy model: attention only, two layers"):
    """The model drop-down."""
    return Param("model", "Model", "select", DEFAULT_MODEL, options=MODEL_NAMES,
                 option_labels=tuple(model_words(n) for n in MODEL_NAMES), help=help)


def mode_param(label: str = "Composition", help: str = "which input of the later head reads the earlier head's output",
               **gate):
    """The Q/K/V drop-down: which input of the later head reads the writer (``gate``: ``active_when``
    and ``inactive``, see ``Param``)."""
    return Param("mode", label, "select", "K", options=MODES, help=help, **gate)


def step_param():
    """The training-checkpoint drop-down ("final" or a step)."""
    return Param("step", "Training step", "select", "final", options=STEP_OPTIONS,
                 help="final weights, or a training checkpoint (a model's latest checkpoint not after this step)")


#: The token demos open on ``DEFAULT_PREFIX`` seeded random tokens, then a ``DEFAULT_SPAN``-token span twice.
DEFAULT_PREFIX, DEFAULT_SPAN = 4, 10


def default_tokens() -> str:
    """The sequence the token demos open with, as the text box shows it."""
    return " ".join(str(int(t)) for t in repeated_span(D_VOCAB, DEFAULT_PREFIX, DEFAULT_SPAN, seed=0))


def tokens_param():
    """The token-sequence text box (ids 0 to d_vocab - 1, at most n_ctx of them)."""
    return Param("tokens", "Tokens", "tokens", default_tokens(), min=0, max=D_VOCAB - 1, shape=(N_CTX,),
                 help=f"token ids from 0 to {D_VOCAB - 1}, separated by spaces, at most {N_CTX}; "
                      "the button makes a random span and repeats it")


def sequence_params(position: str, label: str, last: int, help: str) -> list:
    """The controls of a demo that runs a model on the reader's sequence: the tokens, a position
    slider (0 to ``N_CTX + last``, starting inside the default sequence's repeat), model and step."""
    return [tokens_param(),
            Param(position, label, "range", DEFAULT_PREFIX + DEFAULT_SPAN + 4, min=0, max=N_CTX + last, step=1,
                  help=help),
            model_param(), step_param()]
