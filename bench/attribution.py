"""Edge attribution patching's cost per zoo model, beside exact path patching on the same batch.

Per model of the zoo: seconds for ``attribution.edge_attribution`` (one forward and one backward
pass, every path in Q, K and V) and for ``ground_truth.path_effects`` (one run per pair and mode),
on the first evaluation batch, measured side by side in one process; and the Spearman of the two
over the model's later pairs in its task's mode (how far the first order is from the exact patch).
Also the scorecard (headspace.scorecard, 1000 draws) of the whole zoo. Writes JSON to --out.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from headspace import benchmark, scorecard
from headspace.attribution import edge_attribution
from headspace.ground_truth import ground_truth, path_effects
from headspace.stats import spearman_along
from headspace.tasks import MODE_OF_TASK

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--zoo", default=str(ROOT / "zoo"))
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "attribution.json")
    args = ap.parse_args()
    rows = []
    for name, e in benchmark.scored_models(args.zoo).items():       # one-layer models have no pair to score
        model = benchmark.load_zoo_model(args.zoo, name)
        toks, mask = benchmark.eval_batches(args.zoo, e["task"])
        toks, mask = toks[0], mask[0]
        t0 = time.perf_counter()
        eap = edge_attribution(model, toks, "QKV", "resample", mask)
        t1 = time.perf_counter()
        exact = ground_truth(path_effects(model, toks, "QKV", "resample"), mask)
        t2 = time.perf_counter()
        L, H = model.config["n_layers"], model.config["n_heads"]
        idx = benchmark.later_pairs(L, H)
        m = "QKV".index(MODE_OF_TASK[e["task"]])
        rho = float(spearman_along(eap[m].ravel()[idx], exact[m].ravel()[idx]))
        rows.append({"model": name, "eap_seconds": t1 - t0, "path_patching_seconds": t2 - t1,
                     "ratio": (t2 - t1) / (t1 - t0), "spearman_task_mode": rho, "pairs": int(idx.size)})
        print(f"{name}: EAP {t1 - t0:.3f} s, path patching {t2 - t1:.2f} s ({(t2 - t1) / (t1 - t0):.0f}x), "
              f"Spearman {rho:.2f}")
    t0 = time.perf_counter()
    data = scorecard.zoo_data(args.zoo)
    t1 = time.perf_counter()
    scorecard.scorecard(data)
    t2 = time.perf_counter()
    out = {"models": rows, "zoo_scoring_seconds": t1 - t0, "scorecard_seconds": t2 - t1,
           "median_ratio": float(np.median([r["ratio"] for r in rows]))}
    print(f"scorecard: zoo read and scored in {t1 - t0:.1f} s, statistics in {t2 - t1:.1f} s; "
          f"EAP is {out['median_ratio']:.0f}x faster than path patching (median over models)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
