"""All-pair composition scores at Llama-2-7B shapes: time, memory and the bare-matmul floor.

    python bench/scale.py --out scale.json [--layers 32] [--floor-samples 8]

Seeded float32 random weights at 32 layers x 32 heads, d_model 4096, d_head 128 (the four weight
tensors are 8.6 GB), one mode (K), metric frobenius, the engine's default working-memory budget,
with a progress bar on stderr. Recorded: wall time; the peak of memory the call allocates beyond its
inputs (tracemalloc, which numpy reports to) and the growth of the process's peak RSS during the
call.

The floor. Every score needs the d_head x d_head blocks of inner products between an earlier head's
output directions and a later head's input directions; per (earlier layer, later layer) pair that is
one [n_heads*d_head, d_model] @ [d_model, n_heads*d_head] float32 matmul (4096^3, 137 GFLOP), and
there are n_layers*(n_layers-1)/2 = 496 pairs (68 TFLOP). Timing all of them would take as long as
the run, so a seeded sample of identical-shape matmuls is timed and multiplied by 496; the report
says so ("extrapolated", with the sample size).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from headspace.head_pairs import WORK_BYTES, all_composition_scores  # the venv's .pth: this checkout

SHAPES = dict(n_layers=32, n_heads=32, d_model=4096, d_head=128)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_weights(n_layers, n_heads, d_model, d_head, seed=0):
    rng = np.random.default_rng(seed)
    shape = (n_layers, n_heads, d_model, d_head)
    W = [rng.standard_normal(shape, dtype=np.float32) for _ in range(3)]
    W.append(rng.standard_normal((n_layers, n_heads, d_head, d_model), dtype=np.float32))
    for w in W:
        w *= 0.02
    return W


def floor_seconds(n_heads, d_model, d_head, samples, seed=1):
    """Best-of-2 time of one [H*d_head, d_model] @ [d_model, H*d_head] float32 matmul, over ``samples`` draws."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n_heads * d_head, d_model), dtype=np.float32)
    b = rng.standard_normal((d_model, n_heads * d_head), dtype=np.float32)
    out = np.empty((a.shape[0], b.shape[1]), dtype=np.float32)
    times = []
    for _ in range(samples):
        t = time.perf_counter()
        np.matmul(a, b, out=out)
        times.append(time.perf_counter() - t)
    return float(np.median(times)), times


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="scale.json")
    p.add_argument("--layers", type=int, default=SHAPES["n_layers"], help="fewer layers for a quick look")
    p.add_argument("--floor-samples", type=int, default=8)
    a = p.parse_args(argv)
    shapes = dict(SHAPES, n_layers=a.layers)
    L, H, d, dh = (shapes[k] for k in ("n_layers", "n_heads", "d_model", "d_head"))
    t = time.perf_counter()
    W = make_weights(L, H, d, dh)
    made = time.perf_counter() - t
    input_gb = sum(w.nbytes for w in W) / 2**30
    print(f"weights {L}x{H}, d_model {d}, d_head {dh}: {input_gb:.2f} GB float32, made in {made:.0f} s", file=sys.stderr)
    rss_before = rss_mb()
    tracemalloc.start()
    started = time.perf_counter()

    def bar(done, total):
        el = time.perf_counter() - started
        print(f"\rK-composition {done}/{total} blocks, {el:.0f} s, ~{el * (total - done) / done:.0f} s left ",
              end="", file=sys.stderr, flush=True)

    scores = all_composition_scores(*W, "K", progress=bar)
    seconds = time.perf_counter() - started
    traced_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rss_growth = rss_mb() - rss_before
    print(file=sys.stderr)
    pairs = L * (L - 1) // 2
    one, sample = floor_seconds(H, d, dh, a.floor_samples)
    floor = one * pairs
    flops = 2.0 * (H * dh) ** 2 * d * pairs
    report = {
        "shapes": shapes, "dtype": "float32", "mode": "K", "metric": "frobenius",
        "input_gb": input_gb, "work_bytes_budget": WORK_BYTES,
        "seconds": seconds, "peak_traced_mb_beyond_inputs": traced_mb, "peak_rss_growth_mb": rss_growth,
        "floor": {"seconds": floor, "extrapolated": True, "one_block_seconds": one, "sampled_blocks": sample,
                  "blocks": pairs, "tflop": flops / 1e12, "gflop_per_s": flops / floor / 1e9},
        "ratio_to_floor": seconds / floor,
        "nonzero_scores": int(np.count_nonzero(scores)), "max_score": float(scores.max()),
    }
    Path(a.out).write_text(json.dumps(report, indent=1))
    print(f"7B shapes ({L} layers): {seconds:.0f} s, peak {traced_mb:.0f} MB beyond the inputs "
          f"(RSS +{rss_growth:.0f} MB); floor {floor:.0f} s (extrapolated from {len(sample)} blocks), "
          f"ratio {seconds / floor:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
