"""Train the benchmark zoo: small transformers, each made to need one kind of composition (torch, CPU).

Run through ``scripts/train_models --zoo``. Every configuration (task x normalisation x
MLPs x layers) is trained from three seeds; tasks are in ``headspace.tasks``. All models:
d_model 32, 4 heads of d_head 8, TransformerLens's architecture (``normalization_type``
None, "LN" or "RMS" before each attention layer, each MLP and the unembedding; ReLU MLPs
of width 128; standard learned positions). One process, one torch thread, deterministic:
a re-run writes the same files.

Writes ``zoo/`` at the top of the repository (outside the package, so the wheel stays
small): ``manifest.json`` (through ``headspace.store``: every file's sha256), per model
``config.json``, ``weights.npz`` (float32, TransformerLens keys) and ``training_curve.json``
(held-out loss every 50 steps, on all positions and on the task's circuit positions, and
the seconds it took), and ``eval/<task>.npz``: the held-out evaluation batches the
benchmark's ground truths run on (``tokens [n_batches, batch, seq]``, ``mask``).

    python scripts/train_zoo.py                  # train every model (about 10 minutes on 2 cores)
    python scripts/train_zoo.py --only induction-ln  --steps 300   # a quick trial
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
from headspace.tasks import SHAPES, encode_text, task_batch

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
    steps: int = 1000
    d_model: int = 32
    n_heads: int = 4
    d_head: int = 8
    d_mlp: int = 128
    batch: int = 32
    lr: float = 1e-2
    warmup: int = 100
    weight_decay: float = 0.01

    @property
    def family(self) -> str:
        return (f"{self.task}-{(self.norm or 'none').lower()}-{'mlp' if self.mlp else 'attn'}-"
                f"{self.n_layers}l")


CONFIGS = [
    Config("induction", None, False, 2),
    Config("induction", "LN", False, 2),
    Config("induction", "RMS", False, 2),
    Config("induction", "LN", True, 2),
    Config("induction", "RMS", False, 3),
    Config("reverse", "RMS", False, 2),
    Config("reverse", "LN", True, 2),
    Config("lookup", "RMS", False, 2, steps=1500),
    Config("text", "LN", True, 2, steps=1500, lr=3e-3),
]
SEEDS = (0, 1, 2)


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


def batches(task, seed, which, corpora):
    rng = np.random.default_rng([seed, {"train": 0, "probe": 1, "eval": 2}[which], 34])
    corpus = corpora[0 if which == "train" else 1] if task == "text" else None
    return rng, corpus


# -- the model, TransformerLens's architecture ------------------------------------------

def build(c: Config, seed: int):
    import torch
    from torch import nn

    d_vocab, n_ctx = SHAPES[c.task]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            L, H, M, D = c.n_layers, c.n_heads, c.d_model, c.d_head
            std = 1 / math.sqrt(M)
            p = lambda *shape, scale=std: nn.Parameter(torch.randn(*shape) * scale)  # noqa: E731
            z = lambda *shape: nn.Parameter(torch.zeros(*shape))  # noqa: E731
            o = lambda *shape: nn.Parameter(torch.ones(*shape))  # noqa: E731
            self.W_E, self.W_pos = p(d_vocab, M, scale=0.7), p(n_ctx, M, scale=0.7)
            self.W_Q, self.W_K, self.W_V, self.W_O = p(L, H, M, D), p(L, H, M, D), p(L, H, M, D), p(L, H, D, M)
            self.b_Q, self.b_K, self.b_V, self.b_O = z(L, H, D), z(L, H, D), z(L, H, D), z(L, M)
            self.W_U, self.b_U = p(M, d_vocab), z(d_vocab)
            if c.mlp:
                self.W_in, self.b_in = p(L, M, c.d_mlp), z(L, c.d_mlp)
                self.W_out, self.b_out = p(L, c.d_mlp, M, scale=1 / math.sqrt(c.d_mlp)), z(L, M)
            if c.norm:
                self.ln1_w, self.ln2_w, self.lnf_w = o(L, M), o(L, M), o(M)
                if c.norm == "LN":
                    self.ln1_b, self.ln2_b, self.lnf_b = z(L, M), z(L, M), z(M)

        def norm(self, x, w, b):
            if c.norm is None:
                return x
            if c.norm == "LN":
                x = x - x.mean(-1, keepdim=True)
                return x / (x.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * w + b
            return x / (x.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * w

        def ln(self, which, l=None):
            if c.norm is None:
                return None, None
            w = getattr(self, f"{which}_w")
            b = getattr(self, f"{which}_b", None)
            return (w, b) if l is None else (w[l], None if b is None else b[l])

        def forward(self, tokens):
            S = tokens.shape[1]
            resid = self.W_E[tokens] + self.W_pos[:S]
            for l in range(c.n_layers):
                x = self.norm(resid, *self.ln("ln1", l))[:, None]
                q = x @ self.W_Q[l] + self.b_Q[l][:, None]
                k = x @ self.W_K[l] + self.b_K[l][:, None]
                v = x @ self.W_V[l] + self.b_V[l][:, None]
                z_ = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                resid = resid + (z_ @ self.W_O[l]).sum(1) + self.b_O[l]
                if c.mlp:
                    y = self.norm(resid, *self.ln("ln2", l))
                    resid = resid + torch.relu(y @ self.W_in[l] + self.b_in[l]) @ self.W_out[l] + self.b_out[l]
            return self.norm(resid, *self.ln("lnf")) @ self.W_U + self.b_U

        def state_dict_tl(self):
            g = lambda t: t.detach().cpu().numpy().astype(np.float32).copy()  # noqa: E731
            out = {"embed.W_E": g(self.W_E), "pos_embed.W_pos": g(self.W_pos)}
            for l in range(c.n_layers):
                for n in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"):
                    out[f"blocks.{l}.attn.{n}"] = g(getattr(self, n)[l])
                if c.mlp:
                    for n in ("W_in", "b_in", "W_out", "b_out"):
                        out[f"blocks.{l}.mlp.{n}"] = g(getattr(self, n)[l])
                if c.norm:
                    for ln in ("ln1", "ln2") if c.mlp else ("ln1",):
                        out[f"blocks.{l}.{ln}.w"] = g(getattr(self, f"{ln}_w")[l])
                        if c.norm == "LN":
                            out[f"blocks.{l}.{ln}.b"] = g(getattr(self, f"{ln}_b")[l])
            if c.norm:
                out["ln_final.w"] = g(self.lnf_w)
                if c.norm == "LN":
                    out["ln_final.b"] = g(self.lnf_b)
            out["unembed.W_U"], out["unembed.b_U"] = g(self.W_U), g(self.b_U)
            return out

    torch.manual_seed(seed)
    return Net()


def lr_factor(c: Config, step: int) -> float:
    if step < c.warmup:
        return (step + 1) / c.warmup
    t = (step - c.warmup) / max(c.steps - c.warmup, 1)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t))


def seed_of(c: Config, s: int) -> int:
    """The torch and data seed of seed ``s`` of ``c``'s configuration (its family's place in CONFIGS)."""
    return 1000 * ([x.family for x in CONFIGS].index(c.family) + 1) + s


def train(c: Config, s: int, corpora, steps=None, lr=None) -> dict:
    import torch
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    c = dataclasses.replace(c, steps=steps or c.steps, lr=lr or c.lr)
    seed = seed_of(c, s)
    model = build(c, seed)
    rng, corpus = batches(c.task, seed, "train", corpora)
    prng, pcorpus = batches(c.task, seed, "probe", corpora)
    probe, probe_mask = (torch.tensor(a) for a in task_batch(c.task, prng, 128, pcorpus))
    decay = [p for n, p in model.named_parameters() if n.startswith("W_")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("W_")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=c.lr, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: lr_factor(c, i))
    d_vocab = SHAPES[c.task][0]
    curve = {"step": [], "train_loss": [], "heldout_loss": [], "heldout_circuit_loss": []}
    started = time.perf_counter()
    for step in range(c.steps + 1):
        tokens, mask = (torch.tensor(a) for a in task_batch(c.task, rng, c.batch, corpus))
        nll = torch.nn.functional.cross_entropy(model(tokens)[:, :-1].transpose(1, 2), tokens[:, 1:], reduction="none")
        # synthetic tasks: every position's loss plus the circuit positions' again (elsewhere the
        # next token is uniform noise: weighting the circuit's positions up halves the steps the
        # circuit takes to form, and the rest stays calibrated); text: every position
        loss = nll.mean() if c.task == "text" else nll.mean() + nll[mask].mean()
        if step % 50 == 0 or step == c.steps:
            with torch.no_grad():
                nll = torch.nn.functional.cross_entropy(model(probe)[:, :-1].transpose(1, 2), probe[:, 1:],
                                                        reduction="none")
            curve["step"].append(step)
            curve["train_loss"].append(round(loss.item(), 5))
            curve["heldout_loss"].append(round(nll.mean().item(), 5))
            curve["heldout_circuit_loss"].append(round(nll[probe_mask].mean().item(), 5))
            if step % 250 == 0:
                print(f"  {c.family} seed {s} step {step}: circuit loss {curve['heldout_circuit_loss'][-1]:.3f} "
                      f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)
        if step == c.steps:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    seconds = time.perf_counter() - started
    return {"final": model.state_dict_tl(), "curve": curve, "seconds": round(seconds, 1), "seed": seed,
            "config": c, "versions": {"torch": torch.__version__, "numpy": np.__version__,
                                      "python": sys.version.split()[0]}}


_CORPORA = None


def _train_job(job):
    """One (config, seed) in a worker process (the corpus is read once per process)."""
    global _CORPORA
    if _CORPORA is None:
        _CORPORA = text_corpus()
    c, s, steps, lr = job
    return train(c, s, _CORPORA, steps, lr)


def write_eval(out: Path, corpora) -> None:
    """The held-out evaluation batches of every task (the same for every model of a task)."""
    (out / "eval").mkdir(parents=True, exist_ok=True)
    for task in dict.fromkeys(c.task for c in CONFIGS):
        rng, corpus = batches(task, 7, "eval", corpora)
        pairs = [task_batch(task, rng, EVAL_BATCH, corpus) for _ in range(N_EVAL_BATCHES)]
        store.save_npz(out / "eval" / f"{task}.npz", {"tokens": np.stack([p[0] for p in pairs]),
                                                      "mask": np.stack([p[1] for p in pairs])})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--only", help="train only the configurations whose family name starts with one of these "
                                   "(comma-separated)")
    ap.add_argument("--jobs", type=int, default=1, help="processes training side by side (one thread each)")
    ap.add_argument("--steps", type=int, help="override the number of steps (quick trials)")
    ap.add_argument("--seeds", type=int, nargs="*", default=list(SEEDS))
    ap.add_argument("--lr", type=float, help="override the learning rate (quick trials)")
    args = ap.parse_args(argv)
    corpora = text_corpus()
    args.out.mkdir(parents=True, exist_ok=True)
    write_eval(args.out, corpora)
    jobs = [(c, s, args.steps, args.lr) for s in args.seeds for c in CONFIGS     # every config's first seed first
            if not args.only or c.family.startswith(tuple(args.only.split(",")))]
    with mp.get_context("spawn").Pool(args.jobs) as pool:
        for (c, s, _, _), r in zip(jobs, pool.imap(_train_job, jobs)):
            name = f"{c.family}-s{s}"
            cu = r["curve"]
            store.write_model(
                args.out, name, config_fields(r["config"], name, r["seed"]), r["final"],
                training_curve={"model": name, "seconds": r["seconds"], "training": dataclasses.asdict(r["config"]),
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
    order = {f"{c.family}-s{s}": i for i, (c, s) in enumerate((c, s) for c in CONFIGS for s in SEEDS)}
    manifest["models"] = dict(sorted(manifest["models"].items(), key=lambda kv: order.get(kv[0], len(order))))
    manifest["description"] = "The benchmark zoo: trained by scripts/train_zoo.py (scripts/train_models --zoo)."
    (args.out / store.MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
