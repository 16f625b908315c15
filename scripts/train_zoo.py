"""Train the benchmark zoo: small transformers, each made to need one kind of composition (torch, CPU).

Run through ``scripts/train_models --zoo``. Every configuration (task x normalisation x
MLPs x layers) is trained from five seeds; tasks are in ``headspace.tasks``. All models but the word-level ones (d_model 64, d_head 16): d_model 32, 4 heads of d_head 8, TransformerLens's architecture (``normalization_type``
None, "LN" or "RMS" before each attention layer, each MLP and the unembedding; ReLU MLPs
of width 128; standard learned positions, Gaussian at first or, where a configuration says so,
sinusoidal: ``Config.pos_init``). One process, one torch thread, deterministic:
a re-run writes the same files.

Writes ``zoo/`` at the top of the repository (outside the package, so the wheel stays
small): ``manifest.json`` (through ``headspace.store``: every file's sha256), per model
``config.json``, ``weights.npz`` (float32, TransformerLens keys) and ``training_curve.json``
(held-out loss every 50 steps, on all positions and on the task's circuit positions, and
the seconds it took), and ``eval/<task>.npz``: the held-out evaluation batches the
benchmark's ground truths run on (``tokens [n_batches, batch, seq]``, ``mask``).

    python scripts/train_zoo.py                  # train every model (tens of minutes)
    python scripts/train_zoo.py --only induction-rms --steps 300   # a quick trial

After training, ``headspace.mechanisms`` measures what each model does (attention to the positions
the task names, path effects of the designed path) and records it in the manifest
(``python -m headspace.mechanisms --zoo zoo --write``); ``main`` runs it at the end.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing as mp
import sys
import sysconfig
import time
from pathlib import Path

import numpy as np

from headspace import store
from headspace.tasks import CORPUS_TASKS, SHAPES, encode_text, task_batch

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "zoo"
N_EVAL_BATCHES, EVAL_BATCH = 20, 16


@dataclasses.dataclass(frozen=True)
class Config:
    """One configuration of the zoo; each is trained from ``SEEDS``."""
    task: str
    norm: str | None          # None, "LN", "RMS"
    mlp: bool
    n_layers: int
    steps: int = 500
    d_model: int = 32
    n_heads: int = 4
    d_head: int = 8
    d_mlp: int = 128
    batch: int = 32
    lr: float = 1e-2
    warmup: int = 100
    weight_decay: float = 0.01
    #: the learned positions' initial values: "random" (Gaussian, as the token embeddings) or
    #: "sinusoidal" (Vaswani et al. 2017's table, still learned), see ``build``
    pos_init: str = "random"
    #: the loss: the mean over the task's circuit positions plus ``all_weight`` times the mean over
    #: every position (see ``train``), or, where None, the mean over every position alone
    all_weight: float | None = 0.1
    #: the initial scale of the weights that write into the residual stream (W_O, and W_out where
    #: there are MLPs), relative to the others': below 1, every layer starts close to the identity
    out_init: float = 1.0
    #: table only, a curriculum: for this many first steps every training sequence's payload tokens are
    #: relabelled to the first ``TABLE_PAYLOADS`` of the pool (``canonical_payloads``), the first table's
    #: fixed payloads, from which the lookup formed within 1500 steps; the pool's other tokens and its
    #: per-sequence map come after (docs/decisions/0004, section 8)
    canonical_steps: int = 0
    #: where nonzero, the learning-rate schedule starts again at this step: the steps before it have their
    #: own warmup and cosine decay (as a run of this many steps would), and so do the steps after (``lr_factor``)
    lr_restart: int = 0

    @property
    def family(self) -> str:
        return (f"{self.task}-{(self.norm or 'none').lower()}-{'mlp' if self.mlp else 'attn'}-"
                f"{self.n_layers}l")


CONFIGS = [
    Config("induction", None, False, 2, steps=1500),
    # the first zoo's configurations: seeds 0-2 as the first zoo trained them, seeds 3 and 4 added for
    # issue 47 (docs/decisions/0004, section 6)
    Config("induction", "RMS", False, 2, steps=8000),
    Config("induction", "LN", True, 2, steps=16000, lr=3e-3),
    Config("induction", "RMS", False, 3, steps=3000),
    Config("reverse", "RMS", False, 2, steps=3000),
    Config("reverse", "LN", True, 2, steps=3000),
    # V-composition forced: a one-layer model cannot solve recall (the one-layer family is its control)
    Config("recall", None, False, 2, steps=2000, pos_init="sinusoidal"),
    Config("recall", None, False, 1, steps=2000, pos_init="sinusoidal"),
    Config("lookup", "RMS", False, 2, steps=6000, pos_init="sinusoidal"),
    Config("words", None, False, 2, steps=2500, d_model=64, n_heads=4, d_head=16, batch=16, all_weight=0.1,
           pos_init="sinusoidal"),
    Config("text", "LN", True, 2, steps=1500, lr=3e-3, all_weight=None),
    # characters of the same source, the most repetitive quarter of the windows, the recipe of plain
    # induction, twice as wide (docs/decisions/0004, section 7)
    Config("reptext", None, False, 2, steps=2000, d_model=64, d_head=16, pos_init="sinusoidal"),
]
SEEDS = (0, 1, 2, 3, 4)
#: families trained from fewer seeds than ``SEEDS``: none now (word-level text and two of the first zoo's
#: configurations had three until their seeds 3 and 4 were trained: docs/decisions/0004, section 6)
FEWER_SEEDS: dict[str, tuple[int, ...]] = {}
#: each family's torch and data seed of its seed 0 (seed s: this plus s). They are the seeds the models
#: on file were trained from: the first zoo's families kept theirs (1000 times their place in its list),
#: the families it did not have count from 101000.
SEED_BASE = {"induction-none-attn-2l": 1000, "induction-rms-attn-2l": 2000, "induction-ln-mlp-2l": 3000,
             "induction-rms-attn-3l": 4000, "reverse-rms-attn-2l": 5000, "reverse-ln-mlp-2l": 6000,
             "recall-none-attn-2l": 101000, "recall-none-attn-1l": 102000, "lookup-rms-attn-2l": 7000,
             "words-none-attn-2l": 104000, "text-ln-mlp-2l": 8000,
             "reptext-none-attn-2l": 105000,
             # its seeds were drawn on a branch that did not have reptext's
             "table-none-attn-2l": 105000, "table-none-attn-1l": 107000}
#: The first zoo's lookup configuration (in the repository's history up to the switch-over,
#: docs/decisions/0004-zoo-mechanisms.md), replaced by lookup for 6000 steps.
RETIRED = [
    Config("lookup", "RMS", False, 2, steps=3000, pos_init="sinusoidal"),
]
#: Configurations trained and measured but kept out of the zoo (``--only`` names them; train them into
#: their own ``--out``): lookup redesigned as a table whose cells hold only their payloads, drawn from a pool,
#: with the curriculum of fixed payloads first, each stage with its own learning-rate decay (``lr_restart``;
#: with one decay over both stages, ``--set lr_restart=0``, two of five seeds looked the entry up; with one per
#: stage, three: docs/decisions/0004, section 8), and its one-layer control (data seed 107000).
TRIALS = [
    Config("table", None, False, 2, steps=2500, pos_init="sinusoidal", canonical_steps=1500, lr_restart=1500),
    Config("table", None, False, 1, steps=2500, pos_init="sinusoidal", canonical_steps=1500, lr_restart=1500),
]
# the package's list of the families the benchmark scores (headspace.benchmark.FAMILIES) is this list's
# but the one-layer control (no pair of heads to score), in this order
from headspace.benchmark import FAMILIES  # noqa: E402
assert tuple(c.family for c in CONFIGS if c.n_layers > 1) == FAMILIES, (tuple(c.family for c in CONFIGS), FAMILIES)
assert set(SEED_BASE) == {c.family for c in CONFIGS + TRIALS}


def config_fields(c: Config, name: str, seed: int) -> dict:
    d_vocab, n_ctx = SHAPES[c.task]
    return {
        "model_name": name, "n_layers": c.n_layers, "d_model": c.d_model, "n_heads": c.n_heads,
        "d_head": c.d_head, "d_vocab": d_vocab, "d_vocab_out": d_vocab, "n_ctx": n_ctx,
        "attn_only": not c.mlp, "act_fn": "relu" if c.mlp else None, "d_mlp": c.d_mlp if c.mlp else None,
        "normalization_type": c.norm, "eps": 1e-5, "positional_embedding_type": "standard",
        "use_attn_scale": True, "default_prepend_bos": False, "tokenizer_name": None,
        "original_architecture": None, "init_weights": False, "seed": seed,
    }


# -- data ----------------------------------------------------------------------------

def text_corpus() -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) character ids: the Python standard library's own source on this machine
    (``sysconfig``'s stdlib directory, top-level ``*.py`` files, sorted); every fifth file held out."""
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    if len(files) < 20:
        raise ValueError(f"the standard library source must have at least 20 top-level .py files; "
                         f"found {len(files)} in {sysconfig.get_paths()['stdlib']}")
    train = [f.read_text(errors="replace") for i, f in enumerate(files) if i % 5]
    held = [f.read_text(errors="replace") for i, f in enumerate(files) if i % 5 == 0]
    return encode_text("\n".join(train)), encode_text("\n".join(held))


def words_corpus() -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out) word ids of the same files as ``text_corpus`` (``headspace.tasks.WordVocab``,
    its vocabulary counted on the training files only)."""
    from headspace.tasks import WordVocab
    files = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))
    train = "\n".join(f.read_text(errors="replace") for i, f in enumerate(files) if i % 5)
    held = "\n".join(f.read_text(errors="replace") for i, f in enumerate(files) if i % 5 == 0)
    vocab = WordVocab.fit(train)
    return vocab.encode(train), vocab.encode(held)


CORPORA = {"text": text_corpus, "words": words_corpus, "reptext": text_corpus}


def corpora_for(tasks) -> dict:
    """``{task: (train, held-out)}`` for the corpus tasks among ``tasks``."""
    return {t: CORPORA[t]() for t in dict.fromkeys(tasks) if t in CORPUS_TASKS}


def batches(task, seed, which, corpora):
    rng = np.random.default_rng([seed, {"train": 0, "probe": 1, "eval": 2}[which], 34])
    corpus = corpora[task][0 if which == "train" else 1] if task in CORPUS_TASKS else None
    return rng, corpus


# -- the model, TransformerLens's architecture ------------------------------------------

def sinusoidal(n_ctx: int, d_model: int):
    """Vaswani et al.'s positions, ``[n_ctx, d_model]``: sin and cos of ``p / 10000^(2i/d_model)``.

    With random Gaussian positions, attending to the previous position is a shift on 32 unrelated
    vectors, which a head of width 8 cannot express until training has given the positions some
    geometry; in the zoo's plateaus (induction, reverse copy) no first-layer head attended to the
    previous position more than chance. Here a shift by one is a rotation of each (sin, cos) pair.
    The table is only the starting point: the positions are learned like every other weight, and
    no head is told where to look. Entries have RMS 0.71, as the Gaussian's std of 0.7."""
    import torch
    p = torch.arange(n_ctx, dtype=torch.float64)[:, None]
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    out = torch.zeros(n_ctx, d_model, dtype=torch.float64)
    out[:, 0::2], out[:, 1::2] = torch.sin(p * freq), torch.cos(p * freq)
    return out.float()


def build(c: Config, seeds):
    """The seeds' models of configuration ``c`` as one module: every parameter has a leading seed axis.

    Each seed's parameters are drawn from its own ``torch.manual_seed`` and only ever meet its own
    data, so training the stack with the sum of the seeds' losses is training each seed on its
    own (AdamW works element by element); one set of operations serves the three models, about
    three times less overhead on a CPU for models this small."""
    import torch
    from torch import nn

    d_vocab, n_ctx = SHAPES[c.task]
    L, H, M, D, F = c.n_layers, c.n_heads, c.d_model, c.d_head, c.d_mlp
    std = 1 / math.sqrt(M)
    shapes = {"W_E": ((d_vocab, M), 0.7), "W_pos": ((n_ctx, M), 0.7),
              "W_Q": ((L, H, M, D), std), "W_K": ((L, H, M, D), std), "W_V": ((L, H, M, D), std),
              "W_O": ((L, H, D, M), std * c.out_init), "b_Q": ((L, H, D), 0), "b_K": ((L, H, D), 0), "b_V": ((L, H, D), 0),
              "b_O": ((L, M), 0), "W_U": ((M, d_vocab), std), "b_U": ((d_vocab,), 0)}
    if c.mlp:
        shapes.update(W_in=((L, M, F), std), b_in=((L, F), 0), W_out=((L, F, M), c.out_init / math.sqrt(F)),
                      b_out=((L, M), 0))
    if c.norm:
        shapes.update(ln1_w=((L, M), 1), ln2_w=((L, M), 1), lnf_w=((M,), 1))
        if c.norm == "LN":
            shapes.update(ln1_b=((L, M), 0), ln2_b=((L, M), 0), lnf_b=((M,), 0))

    def init(seed):
        torch.manual_seed(seed)
        out = {}
        for name, (shape, scale) in shapes.items():
            if name.startswith("W_"):
                out[name] = torch.randn(*shape) * scale
            else:
                out[name] = torch.full(shape, float(scale))
        if c.pos_init == "sinusoidal":
            out["W_pos"] = sinusoidal(n_ctx, M)
        return out

    per_seed = [init(seed) for seed in seeds]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            for name in shapes:
                setattr(self, name, nn.Parameter(torch.stack([p[name] for p in per_seed])))

        def norm(self, x, w, b):
            """x [S, ..., M]; w, b [S, M] (or None)."""
            if c.norm is None:
                return x
            if c.norm == "LN":
                x = x - x.mean(-1, keepdim=True)
            shape = (w.shape[0],) + (1,) * (x.dim() - 2) + (w.shape[-1],)
            x = x / (x.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * w.reshape(shape)
            return x if b is None else x + b.reshape(shape)

        def ln(self, which, l=None):
            if c.norm is None:
                return None, None
            w = getattr(self, f"{which}_w")
            b = getattr(self, f"{which}_b", None)
            return (w, b) if l is None else (w[:, l], None if b is None else b[:, l])

        def forward(self, tokens):
            """tokens [S, batch, seq] -> logits [S, batch, seq, d_vocab]."""
            S, T = tokens.shape[0], tokens.shape[2]
            resid = self.W_E[torch.arange(S)[:, None, None], tokens] + self.W_pos[:, None, :T]
            for l in range(L):
                x = self.norm(resid, *self.ln("ln1", l))[:, :, None]                 # [S, B, 1, T, M]
                q = x @ self.W_Q[:, l, None] + self.b_Q[:, l, None, :, None]          # [S, B, H, T, D]
                k = x @ self.W_K[:, l, None] + self.b_K[:, l, None, :, None]
                v = x @ self.W_V[:, l, None] + self.b_V[:, l, None, :, None]
                z_ = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                resid = resid + (z_ @ self.W_O[:, l, None]).sum(2) + self.b_O[:, l, None, None]
                if c.mlp:
                    y = self.norm(resid, *self.ln("ln2", l))
                    hidden = torch.relu(y @ self.W_in[:, l, None] + self.b_in[:, l, None, None])
                    resid = resid + hidden @ self.W_out[:, l, None] + self.b_out[:, l, None, None]
            return self.norm(resid, *self.ln("lnf")) @ self.W_U[:, None] + self.b_U[:, None, None]

        def state_dict_tl(self, i):
            """Seed ``i``'s weights under TransformerLens keys, float32 numpy."""
            g = lambda t: t[i].detach().cpu().numpy().astype(np.float32).copy()  # noqa: E731
            p = lambda name: getattr(self, name)  # noqa: E731
            out = {"embed.W_E": g(p("W_E")), "pos_embed.W_pos": g(p("W_pos"))}
            for l in range(L):
                for n in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"):
                    out[f"blocks.{l}.attn.{n}"] = g(p(n))[l]
                if c.mlp:
                    for n in ("W_in", "b_in", "W_out", "b_out"):
                        out[f"blocks.{l}.mlp.{n}"] = g(p(n))[l]
                if c.norm:
                    for ln in ("ln1", "ln2") if c.mlp else ("ln1",):
                        out[f"blocks.{l}.{ln}.w"] = g(p(f"{ln}_w"))[l]
                        if c.norm == "LN":
                            out[f"blocks.{l}.{ln}.b"] = g(p(f"{ln}_b"))[l]
            if c.norm:
                out["ln_final.w"] = g(p("lnf_w"))
                if c.norm == "LN":
                    out["ln_final.b"] = g(p("lnf_b"))
            out["unembed.W_U"], out["unembed.b_U"] = g(p("W_U")), g(p("b_U"))
            return out

    return Net()


def canonical_payloads(tokens: np.ndarray) -> np.ndarray:
    """``table`` sequences with each sequence's payload tokens relabelled to pool tokens 0, 1, ... in the order
    of their pool index, and its answers alike: the task with fixed payloads, as the first table had (the
    curriculum's first stage, ``Config.canonical_steps``).

    >>> from headspace.tasks import TABLE_ANSWER, TABLE_CELLS
    >>> tokens, mask = task_batch("table", np.random.default_rng(0), 2)
    >>> tokens[0, :6].tolist(), canonical_payloads(tokens)[0, :6].tolist()
    ([2, 4, 8, 10, 8, 10], [0, 1, 2, 3, 2, 3])
    >>> answers = canonical_payloads(tokens)[:, 1:][mask] - TABLE_ANSWER
    >>> bool(answers.min() >= 0 and answers.max() < 4)
    True
    """
    from headspace.tasks import TABLE_ANSWER, TABLE_CELLS, TABLE_POOL
    out = np.array(tokens, copy=True)
    for row in out:
        lut = np.arange(TABLE_POOL)
        present = np.unique(row[:TABLE_CELLS][row[:TABLE_CELLS] < TABLE_POOL])
        lut[present] = np.arange(len(present))
        cells, answers = row < TABLE_POOL, (row >= TABLE_ANSWER) & (row < TABLE_ANSWER + TABLE_POOL)
        cells[TABLE_CELLS:] = False
        row[cells] = lut[row[cells]]
        row[answers] = TABLE_ANSWER + lut[row[answers] - TABLE_ANSWER]
    return out


def lr_factor(c: Config, step: int) -> float:
    """The learning rate at ``step`` relative to ``c.lr``: a linear warmup over ``c.warmup`` steps, then a
    cosine decay to a tenth at ``c.steps``; with ``c.lr_restart``, the same over each of the two stages.

    >>> c = Config("table", None, False, 2, steps=2500, lr_restart=1500)
    >>> [round(lr_factor(c, s), 3) for s in (0, 99, 1499, 1500, 1599, 2499)]
    [0.01, 1.0, 0.1, 0.01, 1.0, 0.1]
    """
    start, end = 0, c.steps
    if c.lr_restart:
        start, end = (0, c.lr_restart) if step < c.lr_restart else (c.lr_restart, c.steps)
    step -= start
    if step < c.warmup:
        return (step + 1) / c.warmup
    t = (step - c.warmup) / max(end - start - c.warmup, 1)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t))


def seed_of(c: Config, s: int) -> int:
    """The torch and data seed of seed ``s`` of ``c``'s configuration (``SEED_BASE``)."""
    return SEED_BASE[c.family] + s


def train(c: Config, seeds, corpora, steps=None, lr=None) -> list[dict]:
    """Train configuration ``c`` from each of ``seeds`` (side by side, one stacked model)."""
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    c = dataclasses.replace(c, steps=steps or c.steps, lr=lr or c.lr)
    if c.canonical_steps and c.task != "table":
        raise ValueError(f"canonical_steps is a curriculum of the table task only; got {c.canonical_steps} for {c.task!r}")
    full = [seed_of(c, s) for s in seeds]
    model = build(c, full)
    streams = [batches(c.task, seed, "train", corpora) for seed in full]
    probes = [task_batch(c.task, prng, 128, pcorpus) for prng, pcorpus in
              (batches(c.task, seed, "probe", corpora) for seed in full)]
    probe = torch.tensor(np.stack([p[0] for p in probes]))
    probe_canonical = torch.tensor(np.stack([canonical_payloads(p[0]) for p in probes])) if c.canonical_steps else probe
    probe_mask = torch.tensor(np.stack([p[1] for p in probes]))
    decay = [p for n, p in model.named_parameters() if n.startswith("W_")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("W_")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=c.lr, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: lr_factor(c, i))
    curves = [{"step": [], "train_loss": [], "heldout_loss": [], "heldout_circuit_loss": []} for _ in seeds]
    started = time.perf_counter()

    def nll_of(tokens):
        logits = model(tokens)[:, :, :-1]
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1).transpose(1, 2), tokens[:, :, 1:].flatten(0, 1),
                                                 reduction="none").reshape(tokens.shape[0], tokens.shape[1], -1)

    for step in range(c.steps + 1):
        drawn = [task_batch(c.task, rng, c.batch, corpus) for rng, corpus in streams]
        if step < c.canonical_steps:
            drawn = [(canonical_payloads(toks), m) for toks, m in drawn]
        tokens = torch.tensor(np.stack([d[0] for d in drawn]))
        mask = torch.tensor(np.stack([d[1] for d in drawn]))
        nll = nll_of(tokens)                                                       # [S, batch, seq-1]
        # synthetic tasks: the circuit positions' loss plus a tenth of every position's (elsewhere
        # the next token is uniform noise, whose gradient delays the circuit: with equal weights
        # the induction models' circuit loss was still 3.0-3.4 nats at step 600 of 800, with a
        # tenth they solve it in about 500 steps; the tenth keeps the rest calibrated); text:
        # every position. Summed over seeds.
        per_seed = [nll[i].mean() if c.all_weight is None else c.all_weight * nll[i].mean() + nll[i][mask[i]].mean()
                    for i in range(len(seeds))]
        loss = torch.stack(per_seed).sum()
        if step % 50 == 0 or step == c.steps:
            with torch.no_grad():
                # during the curriculum's first stage the probe is relabelled as the training batches are
                held = nll_of(probe if step >= c.canonical_steps else probe_canonical)
            for i, curve in enumerate(curves):
                curve["step"].append(step)
                curve["train_loss"].append(round(per_seed[i].item(), 5))
                curve["heldout_loss"].append(round(held[i].mean().item(), 5))
                curve["heldout_circuit_loss"].append(round(held[i][probe_mask[i]].mean().item(), 5))
            if step % 200 == 0:
                losses = " ".join(f"{cu['heldout_circuit_loss'][-1]:.3f}" for cu in curves)
                print(f"  {c.family} step {step}: circuit loss {losses} ({time.perf_counter() - started:.0f} s)",
                      file=sys.stderr, flush=True)
        if step == c.steps:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    seconds = time.perf_counter() - started
    versions = {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0]}
    return [{"final": model.state_dict_tl(i), "curve": curves[i], "seconds": round(seconds / len(seeds), 1),
             "stack_seconds": round(seconds, 1), "seed": full[i], "config": c, "versions": versions}
            for i in range(len(seeds))]


_CORPORA = None


def _train_job(job):
    """One configuration's seeds in a worker process (the corpus is read once per process)."""
    global _CORPORA
    c, seeds, steps, lr = job
    if _CORPORA is None or (c.task in CORPUS_TASKS and c.task not in _CORPORA):
        _CORPORA = corpora_for(["text", c.task])
    return train(c, seeds, _CORPORA, steps, lr)


def write_eval(out: Path, corpora, configs=CONFIGS) -> None:
    """The held-out evaluation batches of every task (the same for every model of a task)."""
    (out / "eval").mkdir(parents=True, exist_ok=True)
    for task in dict.fromkeys(c.task for c in configs):
        rng, corpus = batches(task, 7, "eval", corpora)
        pairs = [task_batch(task, rng, EVAL_BATCH, corpus) for _ in range(N_EVAL_BATCHES)]
        store.save_npz(out / "eval" / f"{task}.npz", {"tokens": np.stack([p[0] for p in pairs]),
                                                      "mask": np.stack([p[1] for p in pairs])})


def with_fields(c: Config, settings: list[str]) -> Config:
    """``c`` with ``FIELD=VALUE`` settings applied (numbers as numbers, ``None`` as None)."""
    names = {f.name for f in dataclasses.fields(Config)}
    changes = {}
    for item in settings:
        field, sep, text = item.partition("=")
        if not sep or field not in names or field in ("task", "norm", "mlp", "n_layers"):
            raise ValueError(f"--set must be FIELD=VALUE with FIELD a training setting of Config; got {item!r}")
        changes[field] = None if text == "None" else type(getattr(c, field) if getattr(c, field) is not None
                                                               else 0.0)(text)
    return dataclasses.replace(c, **changes)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", help="train only the configurations whose family name starts with one of these "
                                   "(comma-separated)")
    ap.add_argument("--jobs", type=int, default=1, help="processes training side by side (one thread each)")
    ap.add_argument("--steps", type=int, help="override the number of steps (quick trials)")
    ap.add_argument("--seeds", type=int, nargs="*")
    ap.add_argument("--lr", type=float, help="override the learning rate (quick trials)")
    ap.add_argument("--no-mechanisms", action="store_true", help="skip measuring and recording each model's "
                                                                  "mechanism (headspace.mechanisms) at the end")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="override a field of the chosen configurations' Config (trials), e.g. --set warmup=1000")
    args = ap.parse_args(argv)
    configs, seeds_all = CONFIGS, SEEDS
    if args.only:
        configs = CONFIGS + [c for c in TRIALS if c.family.startswith(tuple(args.only.split(",")))]
    args.out = args.out or OUT
    fewer = FEWER_SEEDS
    seeds_of = {c.family: tuple(args.seeds) if args.seeds is not None else fewer.get(c.family, tuple(seeds_all))
                for c in configs}
    corpora = corpora_for(["text"] + [c.task for c in configs])
    args.out.mkdir(parents=True, exist_ok=True)
    write_eval(args.out, corpora, configs)
    jobs = [(with_fields(c, args.set), seeds_of[c.family], args.steps, args.lr) for c in configs
            if not args.only or c.family.startswith(tuple(args.only.split(",")))]
    # the slowest to learn first, so that a failure shows early
    first = ("reverse", "recall", "lookup", "table", "text", "reptext", "induction", "words")
    families = [c.family for c in configs]
    jobs.sort(key=lambda j: (first.index(j[0].task), families.index(j[0].family)))
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for (c, seeds, _, _), results in zip(jobs, pool.imap(_train_job, jobs)):
            for s, r in zip(seeds, results):
                name = f"{c.family}-s{s}"
                cu = r["curve"]
                store.write_model(
                    args.out, name, config_fields(r["config"], name, r["seed"]), r["final"],
                    # how the seconds were measured: the seeds of a configuration train side by side as
                    # one stacked model, and "seconds" is the stack's wall time divided by its seeds
                    training_curve={"model": name, "seconds": r["seconds"],
                                    "stack_seconds": r["stack_seconds"], "stack_seeds": len(seeds),
                                    "training": dataclasses.asdict(r["config"]),
                                    "probe": "128 held-out sequences of the task; heldout_circuit_loss averages the "
                                             "positions of the task's mask (headspace.tasks)", **cu},
                    description=f"{c.task} task, normalisation {c.norm or 'none'}, "
                                f"{'with MLPs' if c.mlp else 'attention only'}, {c.n_layers} layers, seed {s}",
                    task=c.task, family=c.family, seed=s, normalization_type=c.norm, steps=r["config"].steps,
                    train_seconds=r["seconds"], trained_with=r["versions"])
                print(f"{name}: {r['seconds']:.0f} s; held-out loss all {cu['heldout_loss'][-1]:.3f}, "
                      f"circuit {cu['heldout_circuit_loss'][-1]:.3f} (step 0: {cu['heldout_circuit_loss'][0]:.3f})",
                      flush=True)

    # the manifest in configuration order, whatever order the models finished in
    manifest = store.read_manifest(args.out)
    order = {f"{c.family}-s{s}": i for i, (c, s) in enumerate((c, s) for c in configs for s in seeds_all)}
    manifest["models"] = dict(sorted(manifest["models"].items(), key=lambda kv: order.get(kv[0], len(order))))
    manifest["description"] = "The benchmark zoo: trained by scripts/train_zoo.py (scripts/train_models --zoo)."
    (args.out / store.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    if not args.no_mechanisms:
        from headspace import mechanisms
        mechanisms.record(args.out, progress=print)


if __name__ == "__main__":
    main()
