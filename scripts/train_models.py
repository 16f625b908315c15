"""Train the toy transformers shipped with headspace and export them (torch, CPU).

Run through ``scripts/train_models``, which sets up the pinned training venv.
Two-layer attention-only transformers, in TransformerLens's architecture, on
synthetic sequences of uniform random tokens in which random spans are
repeated later in the sequence. The only way to beat ln(d_vocab) is to copy
in context, which rewards a previous-token head in layer 0 composing with an
induction head in layer 1.

Both variants train in parallel, one process and one torch thread each, from
fixed seeds, with deterministic algorithms: a re-run on the same machine
writes byte-identical files (the .npz files carry fixed zip timestamps).

Writes through ``headspace.store`` into the package's ``headspace/models/``
(format documented in its README.md): ``manifest.json`` and per model
``config.json``, ``weights.npz``, ``checkpoints.npz`` and
``training_curve.json``; torch's outputs on fixed tokens, a test fixture, go
to ``tests/data/reference/<name>.npz``.

    python scripts/train_models.py                 # train both, write the files
    python scripts/train_models.py --check-transformer-lens   # load them into HookedTransformer
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

from headspace import store
from headspace.heads import probe_scores, repeated_tokens

ROOT = Path(__file__).resolve().parents[1]
OUT = store.SHIPPED
REFERENCES = ROOT / "tests" / "data" / "reference"


@dataclasses.dataclass(frozen=True)
class Spec:
    """One model to train: architecture (TransformerLens config fields) and training recipe."""

    name: str
    description: str
    normalization_type: str | None  # None or "RMS" (learned scale, TransformerLens's RMSNorm)
    seed: int
    n_layers: int = 2
    d_model: int = 64
    n_heads: int = 4
    d_head: int = 16
    d_vocab: int = 128
    n_ctx: int = 64
    steps: int = 3000
    p_copy: float = 0.6        # probability that a segment of the training data is a copy
    batch: int = 32
    lr: float = 3e-3
    lr_final: float = 0.1      # fraction of lr left at the end of the cosine decay
    warmup: int = 100
    weight_decay: float = 0.01
    embed_std: float = 0.7     # init scale of W_E and W_pos
    log_every: int = 10        # evaluate and record the curve every this many steps
    n_checkpoints: int = 18    # exported checkpoints, step 0 and the last step included

    def config(self) -> dict:
        """The HookedTransformerConfig fields (TransformerLens 2.x/3.x) for this model."""
        return {
            "model_name": self.name,
            "n_layers": self.n_layers,
            "d_model": self.d_model,
            "n_heads": self.n_heads,
            "d_head": self.d_head,
            "d_vocab": self.d_vocab,
            "d_vocab_out": self.d_vocab,
            "n_ctx": self.n_ctx,
            "attn_only": True,
            "act_fn": None,
            "d_mlp": None,
            "normalization_type": self.normalization_type,
            "eps": 1e-5,
            "positional_embedding_type": "standard",
            "use_attn_scale": True,
            "default_prepend_bos": False,
            "tokenizer_name": None,
            "original_architecture": None,
            "init_weights": False,
            "seed": self.seed,
        }


SPECS = [
    Spec("attn-only-2l", "2 layers x 4 heads, attention only, no normalisation: the residual stream "
         "has the full GL(d_model) symmetry", None, seed=1),
    Spec("attn-only-2l-rms", "2 layers x 4 heads, attention only, RMSNorm with a learned scale before "
         "each attention layer and the unembedding: symmetry reduced to orthogonal times a scalar",
         "RMS", seed=2),
]


# -- data ----------------------------------------------------------------------

def copying_batch(rng: np.random.Generator, batch: int, n_ctx: int, d_vocab: int, p_copy: float = 0.6) -> np.ndarray:
    """Uniform random tokens with repeated spans, in two kinds of sequence (half each).

    * periodic: 0 to 16 fresh random tokens, then a fresh random span of 8 to
      n_ctx/2 tokens repeated until the sequence is full;
    * segments: segment by segment, with probability ``p_copy`` (once 8 tokens
      exist) a copy of a random earlier span of 8 to n_ctx/2 tokens, else 1 to
      16 fresh random tokens.

    Span lengths, sources and offsets vary, so copying at a fixed offset does
    not work: to predict a copied token the model must find the earlier
    occurrence of the current token and predict what followed it (induction).
    Fresh tokens are unpredictable: their loss stays at ln(d_vocab).
    """
    out = np.empty((batch, n_ctx), dtype=np.int64)
    for b in range(batch):
        if rng.random() < 0.5:
            filler = rng.integers(0, d_vocab, int(rng.integers(0, 17))).tolist()
            span = rng.integers(0, d_vocab, int(rng.integers(8, n_ctx // 2 + 1))).tolist()
            seq = filler + span * (n_ctx // len(span) + 1)
        else:
            seq = []
            while len(seq) < n_ctx:
                if len(seq) >= 8 and rng.random() < p_copy:
                    length = int(rng.integers(8, min(len(seq), n_ctx // 2) + 1))
                    start = int(rng.integers(0, len(seq) - length + 1))
                    seq.extend(seq[start:start + length])
                else:
                    seq.extend(rng.integers(0, d_vocab, int(rng.integers(1, 17))).tolist())
        out[b] = seq[:n_ctx]
    return out


# -- the model, in TransformerLens's architecture ------------------------------

def build(spec: Spec):
    import torch
    from torch import nn

    class AttnOnly(nn.Module):
        """HookedTransformer with attn_only=True, standard positions, no norm or RMS (learned scale).

        Parameters are stacked over layers; ``state_dict_tl`` slices them into
        TransformerLens's per-block keys.
        """

        def __init__(self, s: Spec):
            super().__init__()
            self.s = s
            L, H, M, D, V, C = s.n_layers, s.n_heads, s.d_model, s.d_head, s.d_vocab, s.n_ctx
            # Embeddings give a residual stream of root-mean-square about 1 at every
            # position, with or without norm; the other matrices keep that scale.
            std = 1 / math.sqrt(M)
            p = lambda *shape, scale=std: nn.Parameter(torch.randn(*shape) * scale)  # noqa: E731
            z = lambda *shape: nn.Parameter(torch.zeros(*shape))  # noqa: E731
            self.W_E, self.W_pos = p(V, M, scale=s.embed_std), p(C, M, scale=s.embed_std)
            self.W_Q, self.W_K, self.W_V, self.W_O = p(L, H, M, D), p(L, H, M, D), p(L, H, M, D), p(L, H, D, M)
            self.b_Q, self.b_K, self.b_V, self.b_O = z(L, H, D), z(L, H, D), z(L, H, D), z(L, M)
            self.W_U, self.b_U = p(M, V), z(V)
            if s.normalization_type == "RMS":
                self.ln1_w, self.ln_final_w = nn.Parameter(torch.ones(L, M)), nn.Parameter(torch.ones(M))
            self.register_buffer("future", torch.triu(torch.ones(C, C, dtype=torch.bool), diagonal=1))

        def norm(self, x, w):
            if self.s.normalization_type is None:
                return x
            return x / (x.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() * w

        def forward(self, tokens, patterns: bool = False):
            S = tokens.shape[1]
            resid = self.W_E[tokens] + self.W_pos[:S]
            pats = []
            for l in range(self.s.n_layers):
                x = self.norm(resid, self.ln1_w[l] if self.s.normalization_type else None)
                x = x[:, None]                                              # [batch, 1, seq, d_model]
                q = x @ self.W_Q[l] + self.b_Q[l][:, None]                  # [batch, n_heads, seq, d_head]
                k = x @ self.W_K[l] + self.b_K[l][:, None]
                v = x @ self.W_V[l] + self.b_V[l][:, None]
                if patterns:  # explicit, to return the pattern
                    scores = (q @ k.transpose(-1, -2)) / math.sqrt(self.s.d_head)
                    pattern = scores.masked_fill(self.future[:S, :S], float("-inf")).softmax(-1)
                    z = pattern @ v
                    pats.append(pattern)
                else:  # the same maths in one fused call, about twice as fast for training
                    z = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
                resid = resid + (z @ self.W_O[l]).sum(1) + self.b_O[l]
            logits = self.norm(resid, self.ln_final_w if self.s.normalization_type else None) @ self.W_U + self.b_U
            return (logits, torch.stack(pats, 1)) if patterns else logits

        def state_dict_tl(self) -> dict[str, np.ndarray]:
            """Weights under TransformerLens state-dict keys and shapes, as float32 numpy arrays."""
            g = lambda t: t.detach().cpu().numpy().astype(np.float32).copy()  # noqa: E731
            out = {"embed.W_E": g(self.W_E), "pos_embed.W_pos": g(self.W_pos)}
            for l in range(self.s.n_layers):
                for n in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"):
                    out[f"blocks.{l}.attn.{n}"] = g(getattr(self, n)[l])
                if self.s.normalization_type == "RMS":
                    out[f"blocks.{l}.ln1.w"] = g(self.ln1_w[l])
            if self.s.normalization_type == "RMS":
                out["ln_final.w"] = g(self.ln_final_w)
            out["unembed.W_U"], out["unembed.b_U"] = g(self.W_U), g(self.b_U)
            return out

        def load_tl(self, state: dict[str, np.ndarray]) -> None:
            """Inverse of state_dict_tl (any float dtype in, float32 parameters)."""
            t = lambda a: torch.tensor(np.asarray(a, dtype=np.float32))  # noqa: E731
            with torch.no_grad():
                self.W_E.copy_(t(state["embed.W_E"]))
                self.W_pos.copy_(t(state["pos_embed.W_pos"]))
                for l in range(self.s.n_layers):
                    for n in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"):
                        getattr(self, n)[l].copy_(t(state[f"blocks.{l}.attn.{n}"]))
                    if self.s.normalization_type == "RMS":
                        self.ln1_w[l].copy_(t(state[f"blocks.{l}.ln1.w"]))
                if self.s.normalization_type == "RMS":
                    self.ln_final_w.copy_(t(state["ln_final.w"]))
                self.W_U.copy_(t(state["unembed.W_U"]))
                self.b_U.copy_(t(state["unembed.b_U"]))

    return AttnOnly(spec)


# -- measurements ----------------------------------------------------------------

def measure(model, probe) -> dict:
    """Loss on the random first half and the repeated second half of ``probe``, and head scores.

    ``probe`` is [batch, 2T] with the second half a copy of the first. The
    first-half loss averages the predictions of tokens 1..T-1, the repeated-half
    loss those of tokens T+1..2T-1 (token T, the first of the repeat, cannot be
    predicted). Per head: previous-token score = mean attention from position
    i to i-1 (i >= 1); induction score = mean attention from position i >= T
    to i-T+1, the token after the previous occurrence of the current token.
    """
    import torch

    with torch.no_grad():
        logits, pats = model(probe, patterns=True)
        T = probe.shape[1] // 2
        nll = torch.nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), probe[:, 1:], reduction="none")
        first, second = nll[:, : T - 1].mean().item(), nll[:, T:].mean().item()
        prev, induction = probe_scores(pats.mean(0))  # the scores heads.head_scores gives, on torch tensors
    r = lambda x: round(float(x), 5)  # noqa: E731
    return {"first_half_loss": r(first), "repeated_half_loss": r(second),
            "previous_token_score": [[r(x) for x in row] for row in prev.tolist()],
            "induction_score": [[r(x) for x in row] for row in induction.tolist()]}


def choose_checkpoints(curve_steps, induction, snapshot_steps, n):
    """Pick ``n`` of ``snapshot_steps``: step 0, the last step, and most of the rest around the phase change.

    ``induction`` is the best induction score of any head at each curve step.
    The phase change is where it rises from 10% to 90% of the way from its
    first to its last value; two thirds of the picks go in that window
    (widened by half its width on each side), the rest spread over the run.
    """
    score = np.asarray(induction)
    lo, hi = score[0], score[-1]
    t10 = curve_steps[int(np.argmax(score > lo + 0.1 * (hi - lo)))]
    t90 = curve_steps[int(np.argmax(score > lo + 0.9 * (hi - lo)))]
    pad = max((t90 - t10) // 2, 2 * (snapshot_steps[1] - snapshot_steps[0]))
    last = snapshot_steps[-1]
    dense = np.linspace(max(t10 - pad, 0), min(t90 + pad, last), (2 * n) // 3)
    sparse = np.linspace(0, last, n - len(dense))
    snaps = np.asarray(snapshot_steps)
    picks = {int(snaps[np.abs(snaps - t).argmin()]) for t in np.concatenate([dense, sparse])}
    while len(picks) < n:  # fill up with the snapshots furthest from any pick
        picks.add(max(snapshot_steps, key=lambda x: min(abs(x - p) for p in picks)))
    return sorted(picks), (int(t10), int(t90))


# -- training ----------------------------------------------------------------------

def lr_factor(spec: Spec, step: int) -> float:
    """Linear warmup over ``warmup`` steps, then a cosine from 1 down to ``lr_final``."""
    if step < spec.warmup:
        return (step + 1) / spec.warmup
    t = (step - spec.warmup) / max(spec.steps - spec.warmup, 1)
    return spec.lr_final + (1 - spec.lr_final) * 0.5 * (1 + math.cos(math.pi * t))


def train(spec: Spec, position: int = 0) -> dict:
    """Train one model; returns its final weights, checkpoints, curve and reference outputs."""
    import torch
    from tqdm import tqdm

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(spec.seed)
    model = build(spec)
    data_rng = np.random.default_rng([spec.seed, 0])
    probe = torch.tensor(repeated_tokens(spec.d_vocab, spec.n_ctx, batch=64, seed=[spec.seed, 1]))
    decay = [p for n, p in model.named_parameters() if n.startswith("W_")]
    rest = [p for n, p in model.named_parameters() if not n.startswith("W_")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": spec.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=spec.lr, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: lr_factor(spec, s))

    curve = {"step": [], "train_loss": [], "first_half_loss": [], "repeated_half_loss": [],
             "previous_token_score": [], "induction_score": []}
    snapshots = {}
    started = time.perf_counter()
    bar = tqdm(range(spec.steps + 1), desc=f"{spec.name:>17}", position=position, leave=True,
               ncols=100, mininterval=0.5, file=sys.stderr)
    for step in bar:
        tokens = torch.tensor(copying_batch(data_rng, spec.batch, spec.n_ctx, spec.d_vocab, spec.p_copy))
        logits = model(tokens)
        loss = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, spec.d_vocab), tokens[:, 1:].reshape(-1))
        if step % spec.log_every == 0:
            snapshots[step] = model.state_dict_tl()
            m = measure(model, probe)
            curve["step"].append(step)
            curve["train_loss"].append(round(loss.item(), 5))
            for k, v in m.items():
                curve[k].append(v)
            bar.set_postfix_str(f"loss {loss.item():.3f} first {m['first_half_loss']:.2f} "
                                f"repeat {m['repeated_half_loss']:.2f}")
        if step == spec.steps:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    bar.close()
    seconds = time.perf_counter() - started

    best_induction = [max(max(row) for row in scores[1:]) for scores in curve["induction_score"]]
    steps, window = choose_checkpoints(curve["step"], best_induction, sorted(snapshots), spec.n_checkpoints)
    final = model.state_dict_tl()
    ref_tokens = np.concatenate([copying_batch(np.random.default_rng([spec.seed, 2]), 1, spec.n_ctx, spec.d_vocab),
                                 repeated_tokens(spec.d_vocab, spec.n_ctx, batch=1, seed=[spec.seed, 3])])
    with torch.no_grad():
        logits32, _ = model(torch.tensor(ref_tokens), patterns=True)
        model64 = build(spec).double()
        model64.load_tl(final)  # float32 weights, float64 arithmetic: the exact forward of the shipped weights
        model64 = model64.double()
        logits64, pats64 = model64(torch.tensor(ref_tokens), patterns=True)
    return {
        "spec": dataclasses.asdict(spec),
        "final": final,
        "checkpoints": {s: snapshots[s] for s in steps},
        "curve": curve,
        "phase_change": window,
        "seconds": seconds,
        "reference": {"tokens": ref_tokens.astype(np.int64), "logits": logits64.numpy(),
                      "attention_patterns": pats64.numpy().astype(np.float32), "logits_float32": logits32.numpy()},
        "versions": {"torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0]},
    }


def _train_worker(args):
    spec, position = args
    return train(spec, position)


# -- export ------------------------------------------------------------------------

def export(results: list[dict], out: Path, references: Path = REFERENCES) -> None:
    """Write each model through ``headspace.store`` (files plus manifest sha256) and torch's
    reference outputs, a test fixture, under ``references``."""
    out.mkdir(parents=True, exist_ok=True)
    references.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(
        {"format_version": 1, "description": "Toy transformers trained by scripts/train_models; formats in README.md.",
         "models": {}}, indent=1) + "\n")
    for r in results:
        spec = Spec(**r["spec"])
        training = {k: v for k, v in r["spec"].items() if k not in ("name", "description", "normalization_type")}
        store.write_model(
            out, spec.name, spec.config(), r["final"],
            checkpoints=r["checkpoints"],
            training_curve={
                "model": spec.name,
                "probe": f"64 sequences of {spec.n_ctx // 2} uniform random tokens repeated once; "
                         "first_half_loss predicts tokens 1..T-1, repeated_half_loss tokens T+1..2T-1 (T = n_ctx/2); "
                         "scores are [n_layers][n_heads]",
                "training": dict(training, optimizer="AdamW(betas=(0.9, 0.98)), linear warmup, weight decay on W_* only",
                                 data="copying_batch in scripts/train_models.py"),
                "phase_change_steps": r["phase_change"],
                "checkpoint_steps": sorted(r["checkpoints"]),
                **r["curve"],
            },
            description=spec.description, normalization_type=spec.normalization_type,
            checkpoint_steps=sorted(r["checkpoints"]), final_step=spec.steps, trained_with=r["versions"])
        store.save_npz(references / f"{spec.name}.npz", r["reference"])


# -- TransformerLens check -----------------------------------------------------------

def check_transformer_lens(out: Path) -> None:
    """Load each shipped model into a HookedTransformer and compare logits with the reference outputs."""
    import torch
    from transformer_lens import HookedTransformer, HookedTransformerConfig

    for name in store.read_manifest(out)["models"]:
        d = out / name
        cfg = HookedTransformerConfig(**store.read_config(d))
        model = HookedTransformer(cfg)
        state = {k: torch.tensor(v) for k, v in np.load(d / "weights.npz").items()}
        missing, unexpected = model.load_state_dict(state, strict=False)
        missing = [k for k in missing if not k.endswith((".mask", ".IGNORE"))]  # buffers, not weights
        assert not missing and not unexpected, (missing, unexpected)
        ref = np.load(REFERENCES / f"{name}.npz")
        with torch.no_grad():
            logits32 = model(torch.tensor(ref["tokens"])).numpy()
            logits64 = model.to(torch.float64)(torch.tensor(ref["tokens"])).numpy()
        d32 = np.abs(logits32 - ref["logits"]).max()
        d64 = np.abs(logits64 - ref["logits"]).max()
        print(f"{name}: HookedTransformer logits vs reference: max |diff| float32 {d32:.2e}, float64 {d64:.2e}")
        assert d64 < 1e-9 and d32 < 1e-4


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help="where to write the models (default: %(default)s)")
    ap.add_argument("--steps", type=int, help="override the number of training steps (for quick trials)")
    ap.add_argument("--only", help="train only this model")
    ap.add_argument("--check-transformer-lens", action="store_true",
                    help="load the models in --out into TransformerLens's HookedTransformer and compare")
    args = ap.parse_args(argv)
    if args.check_transformer_lens:
        return check_transformer_lens(args.out)
    specs = [s for s in SPECS if args.only in (None, s.name)]
    if args.steps:
        specs = [dataclasses.replace(s, steps=args.steps) for s in specs]
    started = time.perf_counter()
    with mp.get_context("spawn").Pool(len(specs)) as pool:
        results = pool.map(_train_worker, [(s, i) for i, s in enumerate(specs)])
    export(results, args.out)
    total = time.perf_counter() - started
    print(file=sys.stderr)
    for r in results:
        c = r["curve"]
        print(f"{r['spec']['name']}: {r['seconds']:.0f} s; step 0 first/repeated half loss "
              f"{c['first_half_loss'][0]:.3f}/{c['repeated_half_loss'][0]:.3f}, final "
              f"{c['first_half_loss'][-1]:.3f}/{c['repeated_half_loss'][-1]:.3f}; phase change at steps "
              f"{r['phase_change'][0]}-{r['phase_change'][1]}; checkpoints {sorted(r['checkpoints'])}")
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"wrote {args.out} ({size / 1e6:.2f} MB) in {total:.0f} s")


if __name__ == "__main__":
    main()
