"""All-pair composition scores at GPT-2-small shapes: headspace vs TransformerLens vs a bare matmul.

    python bench/composition.py --out composition.json

Peak memory: each contender alone in its own subprocess. Time: the floor and ours interleaved in one
subprocess (best of --repeats rounds each), so both see the same load on a shared machine; then
TransformerLens. All on the same seeded float32 weights: 12 layers, 12 heads, d_model 768, d_head 64; modes
Q, K and V; metric frobenius. Writes a JSON report and prints the ratios.

TransformerLens and torch are benchmark-only dependencies (requirements-bench.lock). Without them
the TransformerLens entry records why and the rest still runs.

The floor. Every score of one mode needs, for its (earlier, later) head pair, the d_head x d_head
block of inner products between the earlier head's d_head output directions (rows of W_O) and the
later head's d_head input directions (columns of W_Q, W_K or W_V), each a length-d_model dot
product. Stacked over all heads that is one matmul
    [n_layers * n_heads * d_head, d_model] @ [d_model, n_layers * n_heads * d_head]
(9216 x 768 x 9216, 130 GFLOP): the Gram matrix between every head's write directions and every
head's read directions. It is the unavoidable size of computing these blocks; only the pairs with
layer2 > layer1 are needed (66 of 144 layer pairs), so the three modes together multiply
3 * 66/144 = 1.375 times its flops. The time of that one bare float32 matmul is the floor; our
target is under 2x it, for all three modes together.

Llama-2-7B shapes (--llama7b adds this section to the report, --llama7b-only runs just it): seeded
float32 random weights at 32 layers x 32 heads, d_model 4096, d_head 128 (the four tensors are 8.6 GB,
filled layer by layer in place), one call all_composition_scores(..., "K") at the engine's default
working-memory budget with a progress bar on stderr, in a fresh process. Recorded: wall time; the
peak of what the call allocates beyond its inputs (tracemalloc, which numpy reports to); the growth
of the process's peak RSS during the call (ru_maxrss after minus before, the inputs already
resident). The floor is the same Gram blocks as above, per (earlier layer, later layer) pair: one
[n_heads*d_head, d_model] @ [d_model, n_heads*d_head] float32 matmul (4096^3, 137 GFLOP) of the
earlier layer's W_O rows against the later layer's W_K columns, 496 pairs, 68 TFLOP. Timing all of
them takes as long as the run itself, so after the run a seeded sample of those pairs (--floor-samples)
is timed and the median multiplied by 496; the report labels it extrapolated, with the sample size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

SHAPES = dict(n_layers=12, n_heads=12, d_model=768, d_head=64)
MODES = ("Q", "K", "V")
LLAMA7B = dict(n_layers=32, n_heads=32, d_model=4096, d_head=128)


def make_weights(path, seed=0):
    import numpy as np
    L, H, d, dh = (SHAPES[k] for k in ("n_layers", "n_heads", "d_model", "d_head"))
    rng = np.random.default_rng(seed)
    # GPT-2's initialisation scale; the scores do not depend on it
    w = {name: (0.02 * rng.standard_normal(shape, dtype=np.float32))
         for name, shape in (("W_Q", (L, H, d, dh)), ("W_K", (L, H, d, dh)), ("W_V", (L, H, d, dh)),
                             ("W_O", (L, H, dh, d)))}
    np.savez(path, **w)


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


# --------------------------------------------------------------------------- workers (subprocesses)

def work_ours(weights, out, repeats):
    """Three calls, one per mode (as TransformerLens is called), and one call with mode="QKV"
    (the same numbers, sharing the work on the earlier heads)."""
    import tracemalloc

    import numpy as np

    from headspace.composition import all_composition_scores
    w = dict(np.load(weights))
    args = (w["W_Q"], w["W_K"], w["W_V"], w["W_O"])
    base_rss = peak_rss_mb()
    times, fused_times, scores = [], [], None
    for r in range(repeats):
        if r == 0:
            tracemalloc.start()
        t = time.perf_counter()
        scores = {m: all_composition_scores(*args, m) for m in MODES}
        times.append(time.perf_counter() - t)
        if r == 0:
            traced = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.reset_peak()
        t = time.perf_counter()
        fused = all_composition_scores(*args, "".join(MODES))
        fused_times.append(time.perf_counter() - t)
        if r == 0:
            traced_fused = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
    same = all(np.array_equal(fused[i], scores[m]) for i, m in enumerate(MODES))
    np.savez(out, **scores)
    return {"seconds": min(times), "seconds_all": times, "fused_seconds": min(fused_times),
            "fused_seconds_all": fused_times, "fused_equals_separate": bool(same),
            "peak_rss_mb": peak_rss_mb(), "rss_before_mb": base_rss, "traced_peak_mb": traced,
            "fused_traced_peak_mb": traced_fused}


def work_transformerlens(weights, out, repeats):
    import numpy as np
    import torch
    import transformer_lens
    from transformer_lens import HookedTransformer, HookedTransformerConfig
    w = dict(np.load(weights))
    cfg = HookedTransformerConfig(n_layers=SHAPES["n_layers"], d_model=SHAPES["d_model"],
                                  n_heads=SHAPES["n_heads"], d_head=SHAPES["d_head"], n_ctx=8, d_vocab=8,
                                  attn_only=True, normalization_type=None, act_fn=None, device="cpu",
                                  dtype=torch.float32, seed=0)
    model = HookedTransformer(cfg)
    with torch.no_grad():
        for l, block in enumerate(model.blocks):
            for name in ("W_Q", "W_K", "W_V", "W_O"):
                getattr(block.attn, name).copy_(torch.from_numpy(w[name][l]))
    base_rss = peak_rss_mb()
    times, scores = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        with torch.no_grad():
            scores = {m: model.all_composition_scores(m).numpy() for m in MODES}
        times.append(time.perf_counter() - t)
    np.savez(out, **scores)
    version = getattr(transformer_lens, "__version__", None)
    if version is None:
        from importlib.metadata import version as v
        version = v("transformer_lens")
    return {"seconds": min(times), "seconds_all": times, "peak_rss_mb": peak_rss_mb(),
            "rss_before_mb": base_rss, "transformer_lens": version, "torch": torch.__version__,
            "torch_threads": torch.get_num_threads()}


def work_floor(weights, out, repeats):
    import numpy as np
    L, H, d, dh = (SHAPES[k] for k in ("n_layers", "n_heads", "d_model", "d_head"))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((L * H * dh, d), dtype=np.float32)
    b = rng.standard_normal((d, L * H * dh), dtype=np.float32)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t)
    return {"seconds": min(times), "seconds_all": times, "shape": [L * H * dh, d, L * H * dh],
            "gflop": 2 * (L * H * dh) ** 2 * d / 1e9, "peak_rss_mb": peak_rss_mb()}


def work_timing(weights, out, repeats):
    """Floor and ours, interleaved in one process (floor, ours x3 modes, ours fused, floor, ...), so
    that both see the same background load; the best time of each is kept."""
    import numpy as np

    from headspace.composition import all_composition_scores
    w = dict(np.load(weights))
    args = (w["W_Q"], w["W_K"], w["W_V"], w["W_O"])
    L, H, d, dh = (SHAPES[k] for k in ("n_layers", "n_heads", "d_model", "d_head"))
    rng = np.random.default_rng(1)
    a = rng.standard_normal((L * H * dh, d), dtype=np.float32)
    b = rng.standard_normal((d, L * H * dh), dtype=np.float32)
    floor, sep, fused = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        a @ b
        floor.append(time.perf_counter() - t)
        t = time.perf_counter()
        for m in MODES:
            all_composition_scores(*args, m)
        sep.append(time.perf_counter() - t)
        t = time.perf_counter()
        all_composition_scores(*args, "".join(MODES))
        fused.append(time.perf_counter() - t)
    return {"floor_seconds": min(floor), "floor_seconds_all": floor, "seconds": min(sep), "seconds_all": sep,
            "fused_seconds": min(fused), "fused_seconds_all": fused,
            "ratio_best": min(sep) / min(floor), "fused_ratio_best": min(fused) / min(floor),
            "ratio_median_of_rounds": float(np.median(np.array(sep) / np.array(floor)))}


def current_rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed_and_traced(call):
    """``call()``'s result, its wall seconds and the peak MB it allocated (tracemalloc, which numpy reports to)."""
    import tracemalloc
    tracemalloc.start()
    try:
        t = time.perf_counter()
        out = call()
        return out, time.perf_counter() - t, tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def work_llama7b(n_layers, floor_samples):
    """All-pair K-composition scores at Llama-2-7B shapes (fewer layers if asked): time, memory beyond
    the inputs, and the extrapolated bare-matmul floor."""
    import numpy as np

    from headspace.head_pairs import WORK_BYTES, all_composition_scores
    shapes = dict(LLAMA7B, n_layers=n_layers)
    L, H, d, dh = (shapes[k] for k in ("n_layers", "n_heads", "d_model", "d_head"))
    t = time.perf_counter()
    rng = np.random.default_rng(0)
    W = [np.empty((L, H, d, dh), dtype=np.float32) for _ in range(3)]
    W.append(np.empty((L, H, dh, d), dtype=np.float32))
    for w in W:                                     # in place, a layer at a time: no temporaries
        for l in range(L):
            rng.standard_normal(dtype=np.float32, out=w[l])
            w[l] *= 0.02
    made = time.perf_counter() - t
    inputs_gb = sum(w.nbytes for w in W) / 1e9
    rss_inputs, peak_before = current_rss_mb(), peak_rss_mb()
    print(f"weights {L} x {H}, d_model {d}, d_head {dh}: {inputs_gb:.1f} GB float32 in {made:.0f} s; "
          f"RSS {rss_inputs:.0f} MB", file=sys.stderr)
    calls, shown = [], [0.0]
    started = time.perf_counter()

    def bar(done, total):
        now = time.perf_counter() - started
        calls.append(done)
        if now - shown[0] > 2 or done == total:
            shown[0] = now
            print(f"\r  K-composition: {done:,}/{total:,} head pairs ({100 * done / total:.0f}%), {now:.0f} s, "
                  f"about {now * (total - done) / done:.0f} s left   ", end="", file=sys.stderr, flush=True)

    load_before = os.getloadavg()[0]
    scores, seconds, traced = timed_and_traced(lambda: all_composition_scores(*W, "K", progress=bar))
    growth = peak_rss_mb() - peak_before
    print(file=sys.stderr)
    # the floor: a seeded sample of the run's own (earlier layer, later layer) Gram blocks
    pairs = [(l1, l2) for l1 in range(L) for l2 in range(l1 + 1, L)]
    pick = np.random.default_rng(1).choice(len(pairs), size=min(floor_samples, len(pairs)), replace=False)
    out = np.empty((H * dh, H * dh), dtype=np.float32)
    times = []
    for i in pick:
        l1, l2 = pairs[i]
        a = W[3][l1].reshape(H * dh, d)                                     # earlier heads' W_O rows
        b = np.ascontiguousarray(np.moveaxis(W[1][l2], 1, 0).reshape(d, H * dh))   # later heads' W_K columns
        t = time.perf_counter()
        np.matmul(a, b, out=out)
        times.append(time.perf_counter() - t)
    one = float(np.median(times))
    flop = 2.0 * (H * dh) ** 2 * d * len(pairs)
    return {"shapes": shapes, "dtype": "float32", "mode": "K", "metric": "frobenius", "inputs_gb": inputs_gb,
            "work_bytes_budget": WORK_BYTES, "seconds": seconds, "weights_made_seconds": made,
            "traced_peak_mb": traced, "rss_inputs_mb": rss_inputs, "peak_rss_growth_mb": growth,
            "progress_calls": len(calls), "progress_monotone": calls == sorted(calls),
            "floor": {"seconds": one * len(pairs), "extrapolated": True, "sampled_blocks": len(times),
                      "total_blocks": len(pairs), "block_seconds_median": one, "block_seconds_min": min(times),
                      "block_seconds_all": times, "block_shape": [H * dh, d, H * dh], "tflop": flop / 1e12,
                      "gflop_per_s": flop / (one * len(pairs)) / 1e9},
            "ratio_ours_over_floor": seconds / (one * len(pairs)),
            "load_average_before_after": [load_before, os.getloadavg()[0]],
            "nonzero_scores": int(np.count_nonzero(scores)), "max_score": float(scores.max())}


def run_llama7b(n_layers, floor_samples):
    """The 7B section in a fresh interpreter (its RSS is the inputs' and ours); progress shows on stderr."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "llama7b", "--llama7b-layers", str(n_layers),
           "--floor-samples", str(floor_samples)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return {"error": f"exit status {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


WORKERS = {"ours": work_ours, "transformerlens": work_transformerlens, "floor": work_floor,
           "timing": work_timing}


def run_worker(name, weights, out, repeats):
    """Run one contender in a fresh interpreter; returns its dict or {'error': ...}."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--weights", weights,
           "--scores", out, "--repeats", str(repeats)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        return {"error": " | ".join(tail) or f"exit status {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=False, default="composition-bench.json")
    p.add_argument("--repeats", type=int, default=5, help="interleaved rounds of floor and ours (best is kept)")
    p.add_argument("--tl-repeats", type=int, default=1, help="timed runs of TransformerLens (slow)")
    p.add_argument("--llama7b", action="store_true",
                   help="also score Llama-2-7B shapes (8.6 GB of weights; about 15 min on 2 cores)")
    p.add_argument("--llama7b-only", action="store_true", help="only the Llama-2-7B section")
    p.add_argument("--llama7b-layers", type=int, default=LLAMA7B["n_layers"], help="fewer layers for a quick look")
    p.add_argument("--floor-samples", type=int, default=16, help="7B Gram blocks timed for the floor")
    p.add_argument("--worker", choices=sorted(WORKERS) + ["llama7b"], help=argparse.SUPPRESS)
    p.add_argument("--weights", help=argparse.SUPPRESS)
    p.add_argument("--scores", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker == "llama7b":
        print(json.dumps(work_llama7b(a.llama7b_layers, a.floor_samples)))
        return 0
    if a.worker:
        print(json.dumps(WORKERS[a.worker](a.weights, a.scores, a.repeats)))
        return 0

    import numpy as np
    if a.llama7b_only:
        report = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                              "python": platform.python_version(), "numpy": np.__version__},
                  "llama7b": run_llama7b(a.llama7b_layers, a.floor_samples)}
        with open(a.out, "w") as f:
            json.dump(report, f, indent=2)
        print_llama7b(report["llama7b"])
        print("wrote", a.out)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "weights.npz")
        make_weights(weights)
        res = {}
        # peak memory: each contender alone in a fresh process
        res["floor"] = run_worker("floor", weights, os.path.join(tmp, "floor.npz"), 1)
        res["ours"] = run_worker("ours", weights, os.path.join(tmp, "ours.npz"), 1)
        # time: floor and ours interleaved in one process, best of --repeats rounds each
        res["timing"] = run_worker("timing", weights, os.path.join(tmp, "timing.npz"), a.repeats)
        if "error" not in res["timing"] and "error" not in res["ours"]:
            for key in ("seconds", "seconds_all", "fused_seconds", "fused_seconds_all"):
                res["ours"][key] = res["timing"][key]
            res["floor"]["seconds"] = res["timing"]["floor_seconds"]
            res["floor"]["seconds_all"] = res["timing"]["floor_seconds_all"]
        res["load_average"] = os.getloadavg()
        res["transformerlens"] = run_worker("transformerlens", weights, os.path.join(tmp, "tl.npz"),
                                            a.tl_repeats)
        ours = dict(np.load(os.path.join(tmp, "ours.npz"))) if "error" not in res["ours"] else None
        tl = dict(np.load(os.path.join(tmp, "tl.npz"))) if "error" not in res["transformerlens"] else None

    report = {"shapes": SHAPES, "modes": list(MODES), "metric": "frobenius", "dtype": "float32",
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "numpy": np.__version__},
              **res}
    ratios = {}
    if ours is not None:
        ratios["ours_over_floor"] = res["ours"]["seconds"] / res["floor"]["seconds"]
        ratios["ours_fused_over_floor"] = res["ours"]["fused_seconds"] / res["floor"]["seconds"]
        if "error" not in res["timing"]:
            ratios["ours_over_floor_median_of_rounds"] = res["timing"]["ratio_median_of_rounds"]
    if tl is not None and ours is not None:
        ratios["transformerlens_over_ours"] = res["transformerlens"]["seconds"] / res["ours"]["seconds"]
        ratios["transformerlens_over_ours_fused"] = (res["transformerlens"]["seconds"]
                                                     / res["ours"]["fused_seconds"])
        rel = {}
        for m in MODES:
            mask = tl[m] != 0
            assert np.array_equal(mask, ours[m] != 0), f"zero pattern differs in mode {m}"
            rel[m] = float(np.max(np.abs(ours[m][mask].astype(np.float64) / tl[m][mask] - 1)))
        report["max_relative_difference"] = rel
        report["same_numbers_to_1e-5"] = max(rel.values()) < 1e-5
    report["ratios"] = ratios
    if a.llama7b:
        report["llama7b"] = run_llama7b(a.llama7b_layers, a.floor_samples)
    with open(a.out, "w") as f:
        json.dump(report, f, indent=2)

    print(f"load average {res['load_average'][0]:.1f} on {os.cpu_count()} cpus (other processes share them)")
    print(f"floor   {res['floor'].get('seconds', float('nan')):8.3f} s  one float32 matmul "
          f"{res['floor'].get('shape')} ({res['floor'].get('gflop', 0):.0f} GFLOP)")
    if ours is not None:
        print(f"ours    {res['ours']['seconds']:8.3f} s  Q+K+V   peak RSS {res['ours']['peak_rss_mb']:.0f} MB "
              f"(traced numpy peak {res['ours']['traced_peak_mb']:.0f} MB)   {ratios['ours_over_floor']:.2f}x floor")
        print(f"ours    {res['ours']['fused_seconds']:8.3f} s  mode='QKV' in one call (same numbers: "
              f"{res['ours']['fused_equals_separate']})   {ratios['ours_fused_over_floor']:.2f}x floor")
    else:
        print("ours    failed:", res["ours"]["error"])
    if tl is not None:
        print(f"TL      {res['transformerlens']['seconds']:8.3f} s  Q+K+V   peak RSS "
              f"{res['transformerlens']['peak_rss_mb']:.0f} MB   "
              f"TL/ours {ratios['transformerlens_over_ours']:.1f}x (fused "
              f"{ratios['transformerlens_over_ours_fused']:.1f}x)   max rel diff "
              f"{max(report['max_relative_difference'].values()):.2e}")
    else:
        print("TL      unavailable:", res["transformerlens"]["error"])
    if a.llama7b:
        print_llama7b(report["llama7b"])
    print("wrote", a.out)
    return 0


def print_llama7b(r):
    if "error" in r:
        print("7B      failed:", r["error"])
        return
    f = r["floor"]
    print(f"7B      {r['seconds']:8.1f} s  K  peak beyond inputs {r['traced_peak_mb']:.0f} MB traced, "
          f"RSS +{r['peak_rss_growth_mb']:.0f} MB   floor {f['seconds']:.1f} s (extrapolated from "
          f"{f['sampled_blocks']} of {f['total_blocks']} blocks, {f['gflop_per_s']:.0f} GFLOP/s)   "
          f"{r['ratio_ours_over_floor']:.2f}x floor")


if __name__ == "__main__":
    sys.exit(main())
