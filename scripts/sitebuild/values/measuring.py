"""The numbers site/content/posts/measuring-composition.md states
(``{{< value "measuring.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

from fractions import Fraction
import inspect

import numpy as np

from headspace_site.demos import REGISTRY
from headspace_site.figure.outputs import head

from ._shared import GPT2_SMALL, _outputs


#: Draws for a second estimate of the random baseline, to give the default estimate's precision (an
#: input: more draws only narrow the standard error).
BASELINE_CHECK_SAMPLES = 2000


def _head(pair) -> str:
    """A head as the articles name it: ``(1, 2)`` -> ``"L1H2"`` (layer 1, head 2), as every figure does."""
    return head(*pair)


def _later(s) -> np.ndarray:
    """Every earlier-later pair of a two-layer score array [2, n_heads, 2, n_heads], flattened."""
    return np.asarray(s)[0, :, 1, :].ravel()


def _prev_by_query(m, toks, l: int, h: int) -> np.ndarray:
    """Head (l, h)'s mean attention to the previous token, by query position: entry k is query k + 1."""
    return np.diagonal(m.attention_patterns(toks)[:, l, h], offset=-1, axis1=-2, axis2=-1).mean(0)


def _prev_limits(per_query: np.ndarray) -> tuple[int, int]:
    """(the last query position where the head still works, >= 90%; the first of the tail where it
    fails, <= 15%, from there on) of a ``_prev_by_query`` curve."""
    return int(np.argmax(per_query < 0.9)), int(np.nonzero(per_query > 0.15)[0].max()) + 2


#: Training sequences whose demand for a previous-token description is counted: the first
#: TRAINING_SEQUENCES the shipped training script drew (scripts/train_models.py, copying_batch with
#: its data rng), 32 optimiser steps of 32.
TRAINING_SEQUENCES = 1024


def _training_demand(spec_index: int = 0) -> np.ndarray:
    """``[n_ctx]``: for each position q, the share of training sequences in which the bigram ending
    at q (tokens q - 1, q) comes back later, so that an induction head finds the copy by the key at
    q, which only a description of the token before q lets it match."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "train_models.py"
    spec = importlib.util.spec_from_file_location("train_models", path)
    tm = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("train_models", tm)           # its dataclasses look their module up
    spec.loader.exec_module(sys.modules["train_models"])
    tm = sys.modules["train_models"]
    s = tm.SPECS[spec_index]
    x = tm.copying_batch(np.random.default_rng([s.seed, 0]), TRAINING_SEQUENCES, s.n_ctx, s.d_vocab, s.p_copy)
    n = s.n_ctx
    used = np.zeros((x.shape[0], n), dtype=bool)
    for q in range(1, n - 1):
        later = (x[:, q:n - 1] == x[:, [q - 1]]) & (x[:, q + 1:] == x[:, [q]])   # (j-1, j) for j > q
        used[:, q] = later.any(axis=1)
    return used.mean(axis=0)


def measuring() -> dict:
    """site/content/posts/measuring-composition.md"""
    from headspace.composition import METRICS, random_baseline
    from headspace_site.figure import shipped as _shipped
    from headspace_site.demos.metric_agreement import agreement
    from headspace.heads import head_scores

    plain, rms = _shipped.MODEL_NAMES
    cfg = _shipped.weights(plain, None).config
    (l1, h1), (l2, h2) = prev, ind = _shipped.roles(plain)
    over = _outputs("composition-over-training", model=plain, mode="K")
    steps, fro = over["steps"], over["scores"]["frobenius"]
    peak = int(np.argmax(fro))
    curve = _shipped.curve(plain)
    at = lambda step: curve["repeated_half_loss"][curve["step"].index(step)]  # noqa: E731
    final_k = np.asarray(_outputs("composition-scores", model=plain, mode="K")["scores"])
    rows = final_k[0, :, 1, :]
    others = np.delete(rows, h1, axis=0)
    order = np.argsort(-rows[h1])
    base = _outputs("composition-scores", model=plain, mode="K", metric="frobenius_baseline")
    base_rows = np.asarray(base["scores"])[0, :, 1, :]
    top = _outputs("composition-scores", model=plain, mode="K")["top_pair"]
    q_v = {m: _outputs("composition-over-training", model=plain, mode=m)["scores"]["frobenius"] for m in "QV"}
    q_v_base = {m: _later(_outputs("composition-scores", model=plain, mode=m, metric="frobenius_baseline")["scores"])
                for m in "QV"}
    prev_scores, ind_scores = head_scores(_shipped.weights(plain, None))
    # the previous-token head by query position: on the evaluation batch (second half repeats the
    # first) and on as many sequences of random tokens that never repeat on purpose
    pm = _shipped.weights(plain, None)
    toks = _shipped.eval_batch(plain)
    noise = np.random.default_rng(2).integers(0, cfg["d_vocab"], toks.shape)
    by_query, by_query_noise = _prev_by_query(pm, toks, l1, h1), _prev_by_query(pm, noise, l1, h1)
    good_until, fails_from = _prev_limits(by_query)      # on random sequences: tests/site/test_claims.py
    demand = _training_demand()
    r_prev, r_ind = _shipped.roles(rms)
    rms_prev_scores, _ = head_scores(_shipped.weights(rms, None))
    runner_up = sorted(range(cfg["n_heads"]), key=lambda h: -rms_prev_scores[0, h])[1]
    rms_over = _outputs("composition-over-training", model=rms, mode="K")
    d_param = next(p for p in REGISTRY["identity-paradox"].params if p.name == "d")
    corrected = [abs(_outputs("identity-paradox", d=d)["frobenius_baseline"]) for d in d_param.options if d >= 8]
    # the faithful token path over training: copying fraction of the pair at each checkpoint
    copying = [_outputs("token-path", model=plain, step=s)["copying_fraction"] for s in steps]
    if _outputs("token-path", model=plain)["copying_fraction"] != 1.0:
        raise ValueError("measuring: the prose says the final diagonal wins in every row of the token path")
    first_full = next(s for s, c in zip(steps, copying) if c == 1.0)
    other_writers = [_outputs("token-path", model=plain, head1=head(0, h))["copying_fraction"]
                     for h in range(cfg["n_heads"]) if h != h1]
    token_k = _later(_outputs("composition-scores", model=plain, mode="K", metric="token")["scores"])
    causal = {m: np.asarray(_outputs("composition-scores", model=plain, mode=m, metric="causal")["scores"])
              for m in "QKV"}
    ck = causal["K"][0, :, 1, :]
    pair_causal = over["scores"]["causal"]
    out = {
        # model shape
        "d_model": cfg["d_model"], "d_head": cfg["d_head"], "d_vocab": cfg["d_vocab"],
        "one_over_sqrt_d_head": f"1/{int(round(cfg['d_head'] ** 0.5))}",
        # untrained model (step 0): range of the K frobenius scores over every pair
        "init_min": float(_later(_outputs("composition-scores", model=plain, mode="K", step=0)["scores"]).min()),
        "init_max": float(_later(_outputs("composition-scores", model=plain, mode="K", step=0)["scores"]).max()),
        # the random baseline: samples, for our heads' shapes, for GPT-2 small's
        "baseline_samples": inspect.signature(random_baseline).parameters["samples"].default,
        "baseline_ours": random_baseline((cfg["d_model"],) * 2, (cfg["d_model"],) * 2,
                                         ranks=(cfg["d_head"], cfg["d_head"]))[0],
        # its standard error, and the same estimate from many more draws (a check of the default's precision)
        "baseline_ours_se": random_baseline((cfg["d_model"],) * 2, (cfg["d_model"],) * 2,
                                            ranks=(cfg["d_head"], cfg["d_head"]))[1],
        "baseline_check_samples": BASELINE_CHECK_SAMPLES,
        "baseline_ours_check": random_baseline((cfg["d_model"],) * 2, (cfg["d_model"],) * 2,
                                               ranks=(cfg["d_head"], cfg["d_head"]), samples=BASELINE_CHECK_SAMPLES)[0],
        "baseline_ours_check_se": random_baseline((cfg["d_model"],) * 2, (cfg["d_model"],) * 2,
                                                  ranks=(cfg["d_head"], cfg["d_head"]), samples=BASELINE_CHECK_SAMPLES)[1],
        "baseline_gpt2": random_baseline((GPT2_SMALL["d_model"],) * 2, (GPT2_SMALL["d_model"],) * 2,
                                         ranks=(GPT2_SMALL["d_head"], GPT2_SMALL["d_head"]))[0],
        "gpt2_d_model": GPT2_SMALL["d_model"], "gpt2_d_head": GPT2_SMALL["d_head"],
        # largest |baseline-corrected identity score| from d = 8 on (identity-paradox figure)
        "identity_corrected_max": max(corrected),
        # the probe's repeated-half loss at step 0 and at the end; the phase-change band
        "loss_init": curve["repeated_half_loss"][0], "loss_final": curve["repeated_half_loss"][-1],
        "phase_lo": curve["phase_change_steps"][0], "phase_hi": curve["phase_change_steps"][1],
        # the two heads: names and attention scores
        "prev": _head(prev), "ind": _head(ind), "prev_attention": float(prev_scores[l1, h1]),
        # the previous-token head by query position (entry k is query k + 1): where it works and
        # where it fails, on the evaluation batch and on random sequences without a repeat
        "prev_good_until": good_until, "prev_fails_from": fails_from,
        "prev_good_lo": float(by_query[:good_until].min()), "prev_good_hi": float(by_query[:good_until].max()),
        "prev_tail_max": float(by_query[fails_from - 1:].max()),
        "prev_noise_good_lo": float(by_query_noise[:good_until].min()),
        "prev_noise_tail_max": float(by_query_noise[fails_from - 1:].max()),
        # training data: the share of training sequences that need a previous-token description at a
        # position (its bigram recurs later), at its most, and at the first position where the head fails;
        # the share of all such needs that lie in the failing tail
        "training_sequences": TRAINING_SEQUENCES,
        "demand_peak": float(demand.max()), "demand_peak_at": int(demand.argmax()),
        "demand_at_fail": float(demand[fails_from]),
        "demand_tail_share": float(demand[fails_from:].sum() / demand.sum()),
        "induction_lo": float(ind_scores[1].min()), "induction_hi": float(ind_scores[1].max()),
        # the pair's K frobenius over training: start, peak, end, and the loss at those steps
        "k_step0": fro[0], "k_peak": fro[peak], "k_peak_step": steps[peak], "k_final": fro[-1],
        "k_final_step": steps[-1], "loss_at_peak": at(steps[peak]),
        # the final K heatmap: the previous-token head's row against every other row
        "prev_row_lo": float(rows[h1].min()), "prev_row_hi": float(rows[h1].max()),
        "other_rows_lo": float(others.min()), "other_rows_hi": float(others.max()),
        "labelled_rank": int(np.where(order == h2)[0][0]) + 1, "n_pairs": int(rows.size),
        "top_pair": f"{_head(top[:2])} and {_head(top[2:])}",
        "best_corrected": float(base_rows.max()), "labelled_corrected": float(base_rows[h1, h2]),
        # the pair's Q and V frobenius from step 0 to the end; baseline-corrected at the end
        "q_step0": q_v["Q"][0], "q_final": q_v["Q"][-1], "v_step0": q_v["V"][0], "v_final": q_v["V"][-1],
        "qv_corrected_final": float(np.mean([q_v_base["Q"][h1 * cfg["n_heads"] + h2],
                                             q_v_base["V"][h1 * cfg["n_heads"] + h2]])),
        # the normalised model
        "rms_prev": _head((r_prev)), "rms_ind": _head(r_ind), "rms_runner_up": head(0, runner_up),
        "rms_prev_attention": float(rms_prev_scores[r_prev]), "rms_runner_up_attention": float(rms_prev_scores[0, runner_up]),
        "rms_k_step0": rms_over["scores"]["frobenius"][0], "rms_k_final": rms_over["scores"]["frobenius"][-1],
        # other metrics of the pair over training (plain model, K)
        "subspace_step0": over["scores"]["subspace"][0], "subspace_final": over["scores"]["subspace"][-1],
        "subspace_chance": str(Fraction(cfg["d_head"], cfg["d_model"])),
        "svd_step0": over["scores"]["svd_bound"][0], "svd_peak": max(over["scores"]["svd_bound"]),
        "svd_final": over["scores"]["svd_bound"][-1],
        # the faithful token path of the pair (K): copying fraction over training
        "copy_step0": copying[0], "copy_first_full": first_full,
        "copy_other_max": max(other_writers),
        "copy_rms_final": _outputs("token-path", model=rms)["copying_fraction"],
        # the normalised token score does not single the pair out by its value
        "token_pair": float(token_k[h1 * cfg["n_heads"] + h2]), "token_best": float(token_k.max()),
        "token_pair_rank": int(np.sum(token_k > token_k[h1 * cfg["n_heads"] + h2])) + 1,
        # path ablation (nats) on the eval batch
        "eval_batch": _shipped.EVAL_BATCH, "eval_seq": cfg["n_ctx"],
        "causal_pair_final": pair_causal[-1], "causal_pair_peak_step": pair_causal[peak],
        "causal_prev_row_lo": float(ck[h1].min()), "causal_other_rows_max": float(np.abs(np.delete(ck, h1, 0)).max()),
        "causal_q_max": float(np.abs(causal["Q"]).max()), "causal_v_max": float(np.abs(causal["V"]).max()),
        "causal_rms_pair_final": rms_over["scores"]["causal"][-1],
        # the normalised model's largest V path (the plain model's is causal_v_max)
        "causal_rms_v_max": float(np.abs(_outputs("composition-scores", model=rms, mode="V", metric="causal")["scores"]).max()),
    }
    for model, tag in ((plain, "plain"), (rms, "rms")):
        for mode in "QKV":
            for metric, rho in agreement(model, None, mode).items():
                if metric != "frobenius_baseline":          # ranks exactly as frobenius
                    out[f"rho_{tag}_{mode}_{metric}"] = rho
    # the plain model's V column of the table: lowest and highest (its effects are as small as those called noise)
    plain_v = [v for k, v in out.items() if k.startswith("rho_plain_V_")]
    out["rho_plain_V_min"], out["rho_plain_V_max"] = min(plain_v), max(plain_v)
    # the lowest K rank correlation of any score with path ablation after the phase change, both models
    after = []
    for model in (plain, rms):
        agree = _outputs("metric-agreement", model=model, mode="K")
        late = [i for i, s in enumerate(agree["steps"]) if s >= out["phase_hi"]]
        after += [agree["rank_correlation"][m][i] for m in METRICS for i in late]
    out["rho_k_after_min"] = min(after)
    # the copying fraction at the first three checkpoints from the start of the phase change
    during = [s for s in steps if s >= out["phase_lo"]][:3]
    for i, step in enumerate(during):
        out[f"copy_step_{i}"], out[f"copy_at_{i}"] = step, copying[steps.index(step)]
    return out
