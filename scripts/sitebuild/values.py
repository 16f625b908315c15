"""Every number an article states, computed by the library at build time.

One function per article returns ``{name: value}``; ``compute()`` gathers them
under the article's key and scripts/sitebuild/prerender.py writes the result to
site/data/values.json. An article prints one with the ``value`` shortcode
(site/layouts/_shortcodes/value.html), which fails the build on an unknown key:

    {{< value "subspaces.gpt2_d_model" >}}             768
    {{< value key="subspaces.chain_10" digits=2 >}}    0.78

A value is a number or a short string. It is never a result typed in by hand:
each one calls ``headspace`` (mostly a registry demo, run exactly as the page
runs it), so the prose cannot drift from the code. The few inputs that come
from outside the library are named constants with their source. Where the
prose makes a claim about a whole range (the same transmission at every
angle), the function checks the claim and fails the build if it breaks. It checks only claims
that are exact (counts, identities, orders of weights); a claim about noisy estimates (a rank
correlation with path ablation on data) holds within an interval, which the build reports
(``headspace.stats``) and tests/site/test_claims.py checks.

tests/site/test_numbers.py fails on a bare number in an article's prose and
on a value that no article uses. To state a new number: add one line to the
article's function below, with a comment saying what it is, and write
``{{< value "article.name" >}}`` where the number goes.
"""

from __future__ import annotations

import functools
import inspect
import math
from fractions import Fraction

import numpy as np

from headspace import axioms, optics
from headspace.demos import REGISTRY
from headspace.demos._outputs import head, path_label

# GPT-2 small's shape (Radford et al. 2019; TransformerLens's "gpt2" config): an input, not a result.
GPT2_SMALL = {"d_model": 768, "d_head": 64}


def _outputs(demo: str, **params) -> dict:
    """The outputs of one registry demo, run as the page runs it."""
    return REGISTRY[demo].run(params)["outputs"]


def _the_same(name: str, values):
    """The one value every item of ``values`` has (to 1e-12), or fail the build naming ``name``."""
    values = list(values)
    if max(values) - min(values) > 1e-12:
        raise ValueError(f"{name}: the prose says these are all equal, but they range "
                         f"from {min(values)} to {max(values)}")
    return values[0]


def _power_of_ten(x: float) -> str:
    """``x``'s order of magnitude (its power of ten in scientific notation) as text, e.g. 3.9e-16 -> '10⁻¹⁶'."""
    exponent = math.floor(math.log10(abs(x)))
    return "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _chain(steps: int) -> float:
    """Share of the light leaving a polariser at 0° that also leaves ``steps`` more, in equal steps to 90°."""
    filters = [optics.jones_polarizer(90 * k / steps) for k in range(steps + 1)]
    return optics.transmission(filters) / optics.transmission(filters[:1])


def polariser() -> dict:
    """site/content/posts/polariser.md"""
    theta = next(p for p in REGISTRY["polarizer"].params if p.name == "theta")
    angles = np.arange(theta.min, theta.max + theta.step, theta.step)
    return {
        # fraction of unpolarised light a polariser passes, the same at every angle of the slider
        "transmission": _the_same("polariser.transmission",
                                  [_outputs("polarizer", theta=float(a))["transmission"] for a in angles]),
    }


#: Seeded pairs of random subspaces behind the expected smallest angle, drawn in blocks (the
#: figure's own 20 draws are one block; the spread of block means shows why one block misleads).
RANDOM_SUBSPACE_DRAWS, RANDOM_SUBSPACE_BLOCK = 1000, 20


def _smallest_random_angles(n: int, k: int) -> np.ndarray:
    """The smallest principal angle (degrees) between two random k-dim subspaces of R^n, for each of
    RANDOM_SUBSPACE_DRAWS seeded draws. A Gaussian subspace is uniform and the angles do not change
    under a rotation, so one of the two may as well be the first k coordinates: the cosine is the
    largest singular value of the first k rows of Q_R, by batched QR (a pair at a time through
    ``axioms.principal_angles`` took seconds on a loaded machine; the build checks two draws against it)."""
    rng = np.random.default_rng(0)
    out = []
    for _ in range(RANDOM_SUBSPACE_DRAWS // RANDOM_SUBSPACE_BLOCK):
        R = rng.standard_normal((RANDOM_SUBSPACE_BLOCK, n, k))
        cos = np.linalg.svd(np.linalg.qr(R)[0][:, :k], compute_uv=False)[:, 0]
        out.append(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
        if len(out) == 1:
            _holds(np.allclose(out[0][:2], [axioms.principal_angles(np.eye(n)[:, :k], R[i])[0] for i in range(2)],
                               atol=1e-9), "subspaces: the batched smallest angle is principal_angles'")
    return np.concatenate(out)


def subspaces() -> dict:
    """site/content/posts/composition-and-subspaces.md"""
    ruler = next(t for t in REGISTRY["projection-1d-2d"].run({})["figure"]["data"] if t.get("name") == "values y")
    three = _outputs("three-polarizers")
    crossed = REGISTRY["three-polarizers"].resolve({})
    best_middle = max(range(crossed["theta1"], crossed["theta3"] + 1),
                      key=lambda a: _outputs("three-polarizers", theta2=a)["transmission"])
    # two writers 30 degrees apart, each reader at right angles to the other writer
    w1, w2 = 0, 30
    apart = _outputs("communication", pairs="two", write1=w1, write2=w2, read1=w2 + 90, read2=w1 + 90)
    if max(apart["crosstalk"]) > 1e-12:
        raise ValueError("subspaces.separated_gain: the readers should hear no crosstalk")
    aligned = _outputs("communication", pairs="two", write1=0, write2=60, read1=0, read2=60)
    # the random-subspaces figure opens at GPT-2 small's widths, as its caption says
    rs = REGISTRY["random-subspaces"].resolve({})
    _holds((rs["n"], rs["k"]) == (GPT2_SMALL["d_model"], GPT2_SMALL["d_head"]),
           "the random-subspaces figure opens at GPT-2 small's d_model and d_head")
    smallest = _smallest_random_angles(GPT2_SMALL["d_model"], GPT2_SMALL["d_head"])
    blocks = smallest.reshape(-1, RANDOM_SUBSPACE_BLOCK).mean(axis=1)
    return {
        # points on the ruler of y values in the projection-1d-2d figure
        "ruler_points": len(ruler["x"]),
        # rank of the bottleneck u d^T at the figure's defaults
        "bottleneck_rank": _outputs("bottleneck")["rank"],
        # its rank once d (or u) is set to zero
        "bottleneck_rank_zero": _the_same("subspaces.bottleneck_rank_zero",
                                          [_outputs("bottleneck", d1=0.0, d2=0.0)["rank"],
                                           _outputs("bottleneck", u1=0.0, u2=0.0)["rank"]]),
        # field length leaving polarisers at 0, 45, 90 degrees from horizontal light of unit length
        "three_field": float(np.hypot(*np.asarray(three["matrix"])[:, 0])),
        # intensity leaving those three polarisers, as a fraction of what left the first
        "three_transmission": three["transmission"],
        # the middle polariser's angle (whole degrees between 0 and 90) that lets most light through
        "best_middle": best_middle,
        # share of light surviving 2, 10 and 50 equal steps from 0 to 90 degrees
        "chain_2": _chain(2),
        "chain_10": _chain(10),
        "chain_50": _chain(50),
        # order of magnitude of hidden-symmetry's max_output_change at its defaults (rounding error)
        "output_change_order": _power_of_ten(_outputs("hidden-symmetry")["max_output_change"]),
        # gain of each clean link when the two writers are 30 degrees apart
        "separated_gain": _the_same("subspaces.separated_gain", np.abs(np.diag(apart["transfer"]))),
        # singular values of T, writers and readers both at 0 and 60 degrees
        "aligned_sv1": aligned["singular_values"][0],
        "aligned_sv2": aligned["singular_values"][1],
        # GPT-2 small's residual stream and head widths
        "gpt2_d_model": GPT2_SMALL["d_model"],
        "gpt2_d_head": GPT2_SMALL["d_head"],
        # expected mean cos^2 of the principal angles between random head-sized subspaces: k / n
        "gpt2_random_cos2": str(Fraction(GPT2_SMALL["d_head"], GPT2_SMALL["d_model"])),
        # expected smallest principal angle (degrees) between random head-sized subspaces of GPT-2's
        # stream: the mean over the draws, its standard error, the spread of single draws, and the
        # lowest and highest mean of a block of RANDOM_SUBSPACE_BLOCK draws
        "gpt2_random_smallest_angle": float(smallest.mean()),
        "gpt2_random_smallest_se": float(smallest.std(ddof=1) / np.sqrt(smallest.size)),
        "gpt2_random_smallest_sd": float(smallest.std(ddof=1)),
        "gpt2_random_block_min": float(blocks.min()), "gpt2_random_block_max": float(blocks.max()),
        "random_subspace_draws": RANDOM_SUBSPACE_DRAWS, "random_subspace_block": RANDOM_SUBSPACE_BLOCK,
    }


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

    path = Path(__file__).resolve().parents[1] / "train_models.py"
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
    from headspace.demos import _shipped
    from headspace.demos.metric_agreement import agreement
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
    }
    for model, tag in ((plain, "plain"), (rms, "rms")):
        for mode in "QKV":
            for metric, rho in agreement(model, None, mode).items():
                if metric != "frobenius_baseline":          # ranks exactly as frobenius
                    out[f"rho_{tag}_{mode}_{metric}"] = rho
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


def _lab(**changes) -> dict:
    """The metric lab's scores at its default dials, with the ``changes`` the article asks the reader to make."""
    return _outputs("metric-lab", **changes)["scores"]


def _holds(claim: bool, what: str) -> None:
    """Fail the build when a claim an article makes in words no longer holds."""
    if not claim:
        raise ValueError(f"an article says {what}, but the library no longer agrees")


#: What the article's prose says each score meets, all by proof. The table itself is drawn from the
#: metric lab's own output (site/layouts/_shortcodes/axiom-table.html); this only guards the prose.
_PROSE_MEETS = {"frobenius": {"2"}, "frobenius_baseline": set(), "svd_bound": {"2"},
                "subspace": {"1-strict", "2", "3"}, "token": {"2", "4"}, "whitened": {"2", "4"}}


def _reader_swap(d_model: int = 6, seed: int = 0):
    """The article's basis change that keeps a rank-1 writer and swaps two rank-1 QK readers.

    Row convention: writer ``A = x w^T``, readers ``B = r y^T`` and ``D = r2 y^T`` with ``w.r2 = w.r``.
    ``S = I + (r2 - r)(f - g)^T`` with f, g orthogonal to x and y, ``f.r = g.r2 = 1``, ``f.r2 = g.r = 0``.
    Checks ``S S = I`` and, with ``T = S``: ``T^-1 A T = A``, ``T^-1 B T^-T = D``, ``T^-1 D T^-T = B``.
    Returns ``(A, B, D)``.
    """
    rng = np.random.default_rng(seed)
    x, y, w, r, r2 = rng.standard_normal((5, d_model))
    r2 = r2 * (w @ r) / (w @ r2)
    dual = np.linalg.pinv(np.stack([x, y, r, r2], axis=1))       # rows: covectors dual to x, y, r, r2
    S = np.eye(d_model) + np.outer(r2 - r, dual[2] - dual[3])
    A, B, D = np.outer(x, w), np.outer(r, y), np.outer(r2, y)
    Si = np.linalg.inv(S)
    _holds(np.allclose(S @ S, np.eye(d_model)) and np.allclose(Si @ A @ S, A)
           and np.allclose(Si @ B @ Si.T, D) and np.allclose(Si @ D @ Si.T, B),
           "the basis change S keeps the writer and swaps the two readers")
    return A, B, D


def formalising() -> dict:
    """site/content/posts/formalising-composition.md"""
    from headspace.axioms import axiom_3_as_posed_counterexample, axiom_4, axiom_table, inclusion_swap
    from headspace.composition import METRICS, composition_score
    from headspace.demos import _shipped
    from headspace.demos.metric_lab import D_MODEL

    out = {}
    # the axiom table (drawn in the article by the axiom-table shortcode from the metric lab's output)
    table = axiom_table()
    for metric, row in table.items():
        meets = {k for k, v in row.items() if v["meets"]}
        _holds(meets == _PROSE_MEETS[metric] and all(row[k]["known"] == "proved" for k in meets),
               f"{metric} meets exactly {sorted(_PROSE_MEETS[metric])}, by proof")
    _holds(table == REGISTRY["metric-lab"].run({})["outputs"]["axioms"], "the table is the metric lab's")
    # seeded trials per kind of case, and the condition number of Axiom 4's random basis changes
    out["trials"] = inspect.signature(axiom_table).parameters["trials"].default
    out["axiom_4_condition"] = inspect.signature(axiom_4).parameters["condition"].default
    # the basis change that moves a writer from inside one reader's read space to inside the other's
    for name, phi in (("swap", 45.0), ("swap_wide", 60.0)):
        ex = inclusion_swap(phi)
        _holds(np.allclose(ex["angles_before"], (0, phi)) and np.allclose(ex["angles_after"], (phi, 0)),
               "the basis change swaps the two angles exactly")
        out[f"{name}_phi"], out[f"{name}_condition"] = phi, ex["condition"]
        # the smallest stretch that puts the writer inside D's read space: condition tan(45 + phi/2),
        # and the writer's angle to B's read space after it (below phi: not inside, strict A1 breaks)
        low = inclusion_swap(phi, smallest=True)
        _holds(low["angles_after"][1] == 0.0 and 0 < low["angles_after"][0] < phi
               and abs(low["condition"] - math.tan(math.radians(45 + phi / 2))) < 1e-9
               and low["condition"] < ex["condition"],
               "the smallest stretch, tan(45 + phi/2), puts the writer inside D and not inside B")
        out[f"{name}_smallest_condition"], out[f"{name}_smallest_angle"] = low["condition"], low["angles_after"][0]
    # the basis change that keeps a rank-1 writer and swaps two readers (no value: the article proves
    # with it that a score of two heads meeting Axiom 4 must tie them); frobenius, svd_bound and
    # subspace tell the two readers apart, so the change reverses their order
    A, B, D = _reader_swap()
    _holds(all(abs(composition_score(A, B, m) - composition_score(A, D, m)) > 1e-3
               for m in ("frobenius", "svd_bound", "subspace")), "the two swapped readers score differently")
    # Axiom 3 as first posed: the angle of the second writer's tilted direction is 90 - delta degrees
    ex = axiom_3_as_posed_counterexample()
    out["posed_delta"] = 90.0 - ex["limit_angles"][1]
    _holds(ex["angles_1"] == (0.0, 90.0) and ex["angles_2"] == (0.0, ex["limit_angles"][1])
           and ex["limit_angles"][0] == 0.0,
           "the writers' angles are (0, 90) and (0, 90 - delta), the limits' 0 and 90 - delta")
    # the Frobenius score of two heads sharing a d_head-dimensional channel evenly (a projection with itself)
    cfg = _shipped.weights(_shipped.DEFAULT_MODEL, None).config
    out["d_head"] = cfg["d_head"]
    channel = np.diag((np.arange(cfg["d_model"]) < cfg["d_head"]).astype(float))
    even = composition_score(channel, channel)
    out["even_channel"] = f"1/{round(1 / even)}" if abs(1 / even - round(1 / even)) < 1e-9 else even
    # svd_bound of diag(2, 1) with diag(1, 2): same basis, opposite orders
    out["reversed_example"] = composition_score(np.diag([2.0, 1.0]), np.diag([1.0, 2.0]), "svd_bound")
    # the old token score through W_U W_E, on the shipped model: a reader that reads only what the
    # writer leaves out (A B = 0 up to rounding) still scored well above 0
    m = _shipped.weights(_shipped.DEFAULT_MODEL, None)
    _holds(m.config.get("normalization_type") is None, "the trap pair comes from the model without normalisation")
    (l1, h1), (l2, h2) = _shipped.roles(_shipped.DEFAULT_MODEL)
    A = m.W_V[l1, h1] @ m.W_O[l1, h1]
    W = np.linalg.svd(A)[2][: cfg["d_head"]]                          # rows: the write space
    kernel = np.eye(cfg["d_model"]) - W.T @ W
    B = kernel @ (m.W_Q[l2, h2] @ m.W_K[l2, h2].T)                     # reads only what A cannot write
    E, U = _shipped.embedding_seen(m), m.W_U
    old_writer, old_reader = E @ A @ U, E @ B @ E.T                    # the old formula, written out
    out["trap_product_order"] = _power_of_ten(np.linalg.norm(A @ B) / (np.linalg.norm(A) * np.linalg.norm(B)))
    out["trap_old_token"] = float(np.linalg.norm(old_writer @ old_reader)
                                  / (np.linalg.norm(old_writer) * np.linalg.norm(old_reader)))
    faithful = composition_score(A, B, "token", W_E=E, mode="Q")
    _holds(faithful < 1e-12, "the faithful token score of this pair is 0 up to rounding")
    out["trap_new_token_order"] = _power_of_ten(faithful) if faithful > 0 else "0"
    # the metric lab at the settings the text walks through (every other dial at its default):
    # its stream width, and its default angle (the "turned" pair; the "aligned" pair has angle 0)
    out["lab_d_model"] = D_MODEL
    aligned, turned = _lab(angle=0), _lab()
    out["lab_turned_angle"] = REGISTRY["metric-lab"].resolve({})["angle"]
    _holds(abs(aligned["svd_bound"] - 1) < 1e-12 and abs(aligned["subspace"] - 1) < 1e-12
           and aligned["frobenius"] < 1 - 1e-3, "at angle 0 svd_bound and subspace read 1 and frobenius does not")
    reversed_ = _lab(angle=0, order="reversed")
    _holds(reversed_["svd_bound"] < 1 - 1e-3 and abs(reversed_["subspace"] - 1) < 1e-12,
           "reversing the orders lowers svd_bound and leaves subspace at 1")
    # svd_bound at angle 0 with reversed orders and a steep decay (a value of the decay slider)
    out["lab_steep_decay"] = 2
    steep = _lab(angle=0, order="reversed", decay=out["lab_steep_decay"])
    out["lab_reversed_steep_svd"] = steep["svd_bound"]
    _holds(abs(steep["subspace"] - 1) < 1e-12, "subspace stays at 1 with the steep reversed decay")
    # a condition number offered by the stretch dial
    out["lab_stretch"] = 100
    stretched = _lab(angle=0, order="reversed", decay=out["lab_steep_decay"], stretch=out["lab_stretch"])
    _holds(all((abs(stretched[k] - steep[k]) < 1e-9) == (k in ("token", "whitened")) for k in METRICS),
           "the basis change moves every score but token and whitened")
    # the order of the aligned and the turned pair under subspace, before and after the basis change
    turned_t, aligned_t = _lab(stretch=out["lab_stretch"]), _lab(angle=0, stretch=out["lab_stretch"])
    out["lab_sub_turned"], out["lab_sub_turned_t"], out["lab_sub_aligned_t"] = (
        turned["subspace"], turned_t["subspace"], aligned_t["subspace"])
    _holds(out["lab_sub_aligned_t"] < out["lab_sub_turned_t"] and aligned["subspace"] > turned["subspace"],
           "the stretch reverses the subspace order of the aligned and the turned pair")
    # token's score of the turned pair: the same before and after the basis change
    out["lab_token_turned"] = _the_same("formalising.lab_token_turned", [turned["token"], turned_t["token"]])
    # token's score of the aligned pair, below the turned pair's: turning W onto R lowers it (Axiom 3)
    out["lab_token_aligned"] = _the_same("formalising.lab_token_aligned", [aligned["token"], aligned_t["token"]])
    _holds(out["lab_token_aligned"] < out["lab_token_turned"], "token scores the aligned pair below the turned one")
    return out

SYMMETRY_SEEDS = range(10)  # the seeds of norm-symmetry's slider: every direction the reader can pick

#: Path ablation for the rank correlations of "Why difficult": EVAL_BATCHES independent batches
#: (heads.repeated_tokens, seeds 1 to EVAL_BATCHES) of BATCH_SEQUENCES sequences each. Twenty is
#: the fewest the bootstrap needs; eight sequences a batch keep both models' 20 path ablations to
#: about a second (32 a batch took 7 s a model). The correlation is the one of the mean effect
#: over all batches; its interval resamples batches (headspace.stats).
EVAL_BATCHES, BATCH_SEQUENCES = 20, 8
#: The central share of the bootstrap that an interval reports.
LEVEL = 0.95


@functools.lru_cache(maxsize=None)
def batch_effects(name: str, mode: str = "K") -> np.ndarray:
    """``[EVAL_BATCHES, n_pairs]``: path ablation of shipped model ``name`` on each batch, later pairs."""
    from headspace.causal import path_ablation
    from headspace.demos import _shipped
    from headspace.heads import repeated_tokens

    m = _shipped.weights(name, None)
    cfg = m.config
    return np.stack([_shipped.later_pairs(path_ablation(
        m, repeated_tokens(cfg["d_vocab"], cfg["n_ctx"], batch=BATCH_SEQUENCES, seed=seed), mode))
        for seed in range(1, EVAL_BATCHES + 1)])


def _rho(prefix: str, scores, effects) -> dict:
    """``{prefix: rho, prefix_lo: .., prefix_hi: ..}``: Spearman of ``scores`` with the mean of
    ``effects`` over batches, and its bootstrap interval over batches."""
    from headspace.stats import spearman_interval

    r = spearman_interval(scores, effects, level=LEVEL)
    return {prefix: r.estimate, f"{prefix}_lo": r.lo, f"{prefix}_hi": r.hi}


def _diff(prefix: str, a, b, effects) -> dict:
    """The paired interval of Spearman(a) - Spearman(b) over the same batch resamples."""
    from headspace.stats import spearman_difference

    d = spearman_difference(a, b, effects, level=LEVEL)
    return {prefix: d.estimate, f"{prefix}_lo": d.lo, f"{prefix}_hi": d.hi}


def _lead(scores) -> tuple[int, int, float, float]:
    """(index of the top score, of the runner-up, their values) of a flat score array."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    return int(order[0]), int(order[1]), float(scores[order[0]]), float(scores[order[1]])


def activation_whitened(m, mode: str = "K") -> np.ndarray:
    """``whitened`` for every later pair of the folded model ``m``, with ``gram`` the covariance of
    what layer 1's heads read (the residual stream after layer 0, through the norm if the model has
    one) over every position of the evaluation batch: the runtime-statistics way out."""
    from headspace.demos import _shipped
    from headspace.head_pairs import all_composition_scores

    toks = _shipped._eval_batch(m.config["d_vocab"], m.config["n_ctx"])      # the evaluation batch
    resid = m.embed(toks)
    x = m.layer_input(resid, 0)
    _, out = m.attend(0, x, x, x)
    read = m.layer_input(resid + out.sum(axis=1) + m.b_O[0], 1).reshape(-1, m.config["d_model"])
    gram = np.cov(read, rowvar=False)
    return _shipped.later_pairs(all_composition_scores(m.W_Q, m.W_K, m.W_V, m.W_O, mode, "whitened", gram=gram))


def difficult() -> dict:
    """site/content/posts/why-measuring-composition-is-difficult.md"""
    from headspace import symmetry
    from headspace.axioms import ordering_flips
    from headspace.causal import path_ablation
    from headspace.demos import _shipped
    from headspace.demos import norm_symmetry as ns
    from headspace.demos import residual_basis as rbasis
    from headspace.demos.residual_basis import mean_loss
    from headspace.heads import repeated_tokens
    from headspace.model import cross_entropy
    from headspace.stats import spearman, spearman_difference, spearman_interval

    plain, rms = _shipped.MODEL_NAMES
    cfg = _shipped.weights(plain, None).config
    n_heads = cfg["n_heads"]
    rb = {m: _outputs("residual-basis", model=plain, metric=m) for m in _shipped.SCORE_OPTIONS}
    flips = {m: ordering_flips(_shipped.later_pairs(o["scores_before"]), _shipped.later_pairs(o["scores_after"]))
             for m, o in rb.items()}
    n_pairs = _shipped.later_pairs(rb["frobenius"]["scores_before"]).size
    default_log = next(p for p in REGISTRY["residual-basis"].params if p.name == "log_condition").default
    for m in ("token", "whitened", _shipped.CAUSAL):
        _holds(flips[m] == 0, f"difficult: {m} keeps every ordering under the default T")
    # the rounding of a forward pass in the new basis (the demo takes the plain model's function as
    # unchanged, an exact symmetry; every metric shares the one basis of the defaults)
    defaults = REGISTRY["residual-basis"].resolve({})
    loss_after, worst_logit = rbasis.symmetry_rounding(
        (plain, *(defaults[k] for k in ("rotation", "log_condition", "shear", "permute", "seed"))))
    worst = abs(loss_after - rb["frobenius"]["loss_before"])

    # -- the plain model: a stretch over all directions, where the top K pair first changes, per frame
    m = _shipped.weights(plain, None)
    d = cfg["d_model"]
    (_, h1), _ = _shipped.roles(plain)
    plain_curves = [np.stack([_shipped.later_pairs(ns._frobenius(m, ns.stretch_matrix(d, "all directions", 10.0 ** lc, s), "K"))
                              for lc in ns.FINE]) for s in SYMMETRY_SEEDS]
    plain_first = [ns.first_reorder(c) for c in plain_curves]
    plain_moved = [c for c in plain_first if c is not None]
    top, second, top_score, second_score = _lead(plain_curves[0][0])
    _holds(top // n_heads == h1 and second // n_heads == h1,
           "difficult: the plain model's two highest K scores are both readers of the previous-token head")
    # every top, at every condition up to 100 and in every frame, is a reader of the previous-token head
    _holds(all(np.all(c.argmax(axis=1) // n_heads == h1) for c in plain_curves),
           "difficult: under the stretch the plain model's top K pair stays in the previous-token head's row")
    # what does degrade: the rank agreement with path ablation (path ablation itself is invariant)
    eff_plain = batch_effects(plain)
    fro_before = _shipped.later_pairs(rb["frobenius"]["scores_before"])
    fro_after = _shipped.later_pairs(rb["frobenius"]["scores_after"])

    # -- the RMS model: a rotation times a scalar moves the loss only through the norm's eps
    r = _shipped.weights(rms, None)
    (_, rh1), _ = _shipped.roles(rms)
    base, _ = mean_loss(r, rms)
    scaled, _ = mean_loss(symmetry.transform_model(r, 2.5 * symmetry.rotation(d, 40.0, seed=1)), rms)
    rotated, _ = mean_loss(symmetry.transform_model(r, symmetry.rotation(d, 40.0, seed=1)), rms)
    toks = _shipped.eval_batch(rms)
    half = toks.shape[1] // 2                       # loss positions half.. predict the repeated half

    def losses(model) -> tuple[float, float]:
        """(mean loss over every position, over the repeated half) on the site's batch: one pass."""
        ce = cross_entropy(model.logits(toks), toks)
        return float(ce.mean()), float(ce[:, half:].mean())

    base_all, base_repeat = losses(r)
    _holds(abs(base_all - base) < 1e-12, "difficult: the RMS model's loss is the figure's")

    def first_reorders(stretch, mode):
        """norm-symmetry's first_reorder_condition for each seed (its own functions: the demo's
        output would also compute a loss curve per seed, 21 forward passes, that no value needs)."""
        return [ns.first_reorder(ns.score_curve(rms, stretch, s, mode)) for s in SYMMETRY_SEEDS]

    shrink_curves = [ns.score_curve(rms, "shrink one direction", s, "K") for s in SYMMETRY_SEEDS]

    def loss_at_reorders(stretch, firsts):
        """The loss change (every position) exactly where the top pair changes, per moved direction."""
        return [mean_loss(symmetry.transform_model(r, ns.stretch_matrix(d, stretch, f, s)), rms)[0] - base
                for s, f in zip(SYMMETRY_SEEDS, firsts) if f]

    shrink_k = [ns.first_reorder(c) for c in shrink_curves]
    grow_k, all_k = first_reorders("grow one direction", "K"), first_reorders("all directions", "K")
    shrink_q = first_reorders("shrink one direction", "Q")
    shrink_v = first_reorders("shrink one direction", "V")
    _holds(all(f is not None for f in shrink_k), "difficult: shrinking one direction reorders the top K pair for every seed")
    # shrinking: the loss change over the slider's whole range and where the top pair changes, over
    # every position and over the repeated half (where the induction circuit acts)
    change_all, change_repeat = [], []
    for s, f in zip(SYMMETRY_SEEDS, shrink_k):
        for cond in [10.0 ** lc for lc in ns.GRID] + [f]:
            a, rep = losses(symmetry.transform_model(r, ns.stretch_matrix(d, "shrink one direction", cond, s)))
            change_all.append(abs(a - base_all))
            change_repeat.append(abs(rep - base_repeat))
    shrink_max = max(change_all)
    # where the top pair first changes under shrinking: is the new top another reader of the same writer?
    rms_fro = _shipped.later_pairs(_shipped.scores(rms, None, "K", "frobenius"))
    rtop, rsecond, rtop_score, rsecond_score = _lead(rms_fro)
    _holds(rtop // n_heads == rh1 and rsecond // n_heads == rh1,
           "difficult: the RMS model's two highest K scores are both readers of its previous-token head")

    def new_top_row(curve):
        """The writer of the pair that first takes the top along a score curve that reorders."""
        tops = curve.reshape(len(curve), -1).argmax(axis=1)          # flat [layer, head, layer, head]
        return int(np.unravel_index(tops[np.flatnonzero(tops != tops[0])[0]], curve.shape[1:])[1])

    same_row = sum(new_top_row(c) == rh1 for c in shrink_curves)
    # the rank agreement with path ablation after shrinking, at the median first-reorder condition
    # and at 100, for each direction; judged against the unshrunk model's path ablation
    eff_rms = batch_effects(rms)
    shrink_median = float(np.median(shrink_k))
    def shrunk(cond):
        rhos, drops = [], 0
        for s in SYMMETRY_SEEDS:
            sc = _shipped.later_pairs(ns._frobenius(r, ns.stretch_matrix(d, "shrink one direction", cond, s), "K"))
            rhos.append(spearman_interval(sc, eff_rms, level=LEVEL))
            drops += spearman_difference(sc, rms_fro, eff_rms, level=LEVEL).hi < 0
        return rhos, drops

    rho_med, drops_med = shrunk(shrink_median)
    rho_100, drops_100 = shrunk(100.0)
    # the shrunk model's own path ablation (condition 100, the first batch) ranks the pairs as the
    # unshrunk model's does, within this rank correlation
    batch1 = repeated_tokens(cfg["d_vocab"], cfg["n_ctx"], batch=BATCH_SEQUENCES, seed=1)
    own_agreement = min(spearman(_shipped.later_pairs(path_ablation(
        symmetry.transform_model(r, ns.stretch_matrix(d, "shrink one direction", 100.0, s)), batch1, "K")),
        eff_rms[0]) for s in SYMMETRY_SEEDS)

    # -- three ways forward: K rank agreement with path ablation, final weights, both models
    tok_plain = _shipped.later_pairs(_shipped.scores(plain, None, "K", "token"))
    _holds(np.allclose(tok_plain, _shipped.later_pairs(_shipped.scores(plain, None, "K", "whitened")), rtol=1e-9),
           "difficult: for K-composition whitened equals token")
    tok_rms = _shipped.later_pairs(_shipped.scores(rms, None, "K", "token"))
    per_batch_fro = [spearman(fro_before, e) for e in eff_plain]
    # the runtime-statistics route: whitened with gram = the covariance of what layer 1 reads on the
    # evaluation batch; it moves with the basis (recomputed on a transformed model, it gives the same scores)
    act_plain, act_rms = activation_whitened(m), activation_whitened(r)
    moved = symmetry.transform_model(m, symmetry.rotation(d, 40.0, seed=1) @ ns.stretch_matrix(d, "all directions", 10.0, 0))
    _holds(np.allclose(activation_whitened(moved), act_plain, rtol=1e-7, atol=1e-12),
           "difficult: whitened with the activation covariance is unchanged by a change of basis")
    tr = _outputs("transform-rules")
    return {
        "d_model": d, "n_pairs": n_pairs, "comparisons": n_pairs * (n_pairs - 1) // 2,
        "n_seeds": len(SYMMETRY_SEEDS),
        # residual-basis at its defaults on the plain model
        "default_condition": 10.0 ** default_log,
        "loss": rb["frobenius"]["loss_before"],
        "worst_loss_change": _power_of_ten(max(worst, 1e-300)),
        "worst_logit_change": _power_of_ten(worst_logit),
        "flips_frobenius": flips["frobenius"], "flips_svd_bound": flips["svd_bound"],
        "flips_subspace": flips["subspace"], "flips_baseline": flips["frobenius_baseline"],
        # a stretch over all directions of the plain model; its top two K pairs before the stretch
        "plain_top_moves": len(plain_moved), "plain_top_smallest": min(plain_moved),
        "plain_prev": head(0, h1), "plain_top_score": top_score, "plain_second_score": second_score,
        "plain_top_lead": top_score / second_score - 1,
        # Spearman of frobenius with path ablation (K, plain model), before and after the default T,
        # and the paired interval of the change
        **_rho("rho_plain_identity", fro_before, eff_plain),
        **_rho("rho_plain_default", fro_after, eff_plain),
        **_diff("rho_plain_change", fro_after, fro_before, eff_plain),
        # the RMS model
        "rms_loss": base, "rms_repeat_loss": base_repeat,
        "rms_first_half_loss": float(cross_entropy(r.logits(toks), toks)[:, :half - 1].mean()),
        "rms_rotation_change": _power_of_ten(max(abs(rotated - base), 1e-300)),
        "rms_scale_change": abs(scaled - base),
        "rms_prev": head(0, rh1), "rms_top_score": rtop_score, "rms_second_score": rsecond_score,
        "rms_top_lead": rtop_score / rsecond_score - 1, "shrink_same_row": same_row,
        "shrink_median": shrink_median,
        "shrink_smallest": min(f for f in shrink_k if f),
        "shrink_max_loss": shrink_max, "shrink_max_pct": shrink_max / base_all,
        "shrink_max_repeat_pct": max(change_repeat) / base_repeat,
        "shrink_q_reorders": sum(f is not None for f in shrink_q),
        "shrink_v_reorders": sum(f is not None for f in shrink_v),
        "grow_reorders": sum(f is not None for f in grow_k), "grow_min_loss": min(loss_at_reorders("grow one direction", grow_k)),
        "all_reorders": sum(f is not None for f in all_k), "all_min_loss": min(loss_at_reorders("all directions", all_k)),
        # Spearman of frobenius with path ablation (K, RMS model): unshrunk, and after shrinking one
        # direction (lowest and highest estimate over the directions, lowest lo and highest hi)
        **_rho("rho_rms_frobenius", rms_fro, eff_rms),
        "rho_shrink_med_min": min(x.estimate for x in rho_med), "rho_shrink_med_max": max(x.estimate for x in rho_med),
        "rho_shrink_med_lo": min(x.lo for x in rho_med), "rho_shrink_med_hi": max(x.hi for x in rho_med),
        "rho_shrink_100_min": min(x.estimate for x in rho_100), "rho_shrink_100_max": max(x.estimate for x in rho_100),
        "rho_shrink_100_lo": min(x.lo for x in rho_100), "rho_shrink_100_hi": max(x.hi for x in rho_100),
        "shrink_med_drops": int(drops_med), "shrink_100_drops": int(drops_100),
        "shrunk_own_agreement": own_agreement,
        # the batches behind every interval
        "eval_batches": EVAL_BATCHES, "batch_sequences": BATCH_SEQUENCES, "interval_level": LEVEL,
        # rank agreement with path ablation, K, final weights: token (= whitened for K) and frobenius,
        # both models, with the paired interval of their difference
        **_rho("rho_token", tok_plain, eff_plain),
        **_diff("rho_plain_token_minus_frobenius", tok_plain, fro_before, eff_plain),
        **_rho("rho_rms_token", tok_rms, eff_rms),
        **_diff("rho_rms_token_minus_frobenius", tok_rms, rms_fro, eff_rms),
        # whitened with gram = the activation covariance (layer 1's input, evaluation batch), K, both
        # models, and its paired differences with frobenius and with token
        **_rho("rho_activation", act_plain, eff_plain),
        **_diff("rho_plain_activation_minus_frobenius", act_plain, fro_before, eff_plain),
        **_diff("rho_plain_activation_minus_token", act_plain, tok_plain, eff_plain),
        **_rho("rho_rms_activation", act_rms, eff_rms),
        **_diff("rho_rms_activation_minus_frobenius", act_rms, rms_fro, eff_rms),
        **_diff("rho_rms_activation_minus_token", act_rms, tok_rms, eff_rms),
        # frobenius's Spearman on single batches of the plain model: lowest and highest
        "rho_plain_batch_min": min(per_batch_fro), "rho_plain_batch_max": max(per_batch_fro),
        # transform-rules at its defaults
        "toy_before": tr["frobenius_before"], "toy_after": tr["frobenius_after"],
        **_grown(),
    }


def _grown() -> dict:
    """norm-symmetry at its defaults, shrinking one direction and growing it: the loss each costs."""
    shrink = _outputs("norm-symmetry", stretch="shrink one direction")
    grow = _outputs("norm-symmetry", stretch="grow one direction")
    _holds(grow["loss_change"] > 100 * shrink["loss_change"], "difficult: at the figure's condition number, "
           "growing one direction costs the model far more loss than shrinking it")
    # the residual-basis figure on the RMS model (why-measuring-composition-is-difficult.md): a rotation
    # alone keeps the loss and every rank; a stretch moves both
    turned = _outputs("residual-basis", model="attn-only-2l-rms", rotation=40, log_condition=0.0)
    stretched = _outputs("residual-basis", model="attn-only-2l-rms", rotation=40, log_condition=1.0)
    _holds(not turned["order_changed"] and abs(turned["loss_after"] - turned["loss_before"]) < 1e-9,
           "difficult: on the RMS model a rotation keeps the loss and every Frobenius rank")
    _holds(stretched["order_changed"] and stretched["loss_after"] - stretched["loss_before"] > 0.01,
           "difficult: on the RMS model a stretch moves the ranks and the loss")
    return {"shrink_default_loss": shrink["loss_change"], "grow_default_loss": grow["loss_change"]}


def virtual_head_effects(name: str) -> dict:
    """Path expansion of shipped model ``name`` on its evaluation batch (``_shipped.eval_batch``):
    the repeated-half loss with every term in place (``"none"``), and the increase when each term,
    or all virtual-head terms together (``"all virtual"``), is removed, patterns held fixed.
    tests/unit/test_paths.py checks the same numbers."""
    from headspace.demos import _shipped
    from headspace.model import cross_entropy
    from headspace.paths import VIRTUAL, ablated_losses, path_terms

    m, toks = _shipped.weights(name, None), _shipped.eval_batch(name)
    T = toks.shape[1] // 2
    terms = path_terms(m, toks)
    losses = ablated_losses(m, toks, positions=slice(T, None), terms=terms)
    base = losses.pop("none")
    out = {k: v - base for k, v in losses.items()}
    virtual = sum(v for k, v in terms.items() if VIRTUAL in k)
    out["all virtual"] = float(cross_entropy(sum(terms.values()) - virtual, toks)[:, T:].mean()) - base
    out["none"] = base
    return out


def primer() -> dict:
    """site/content/posts/transformer-circuits-primer.md"""
    from headspace.causal import path_ablation
    from headspace.circuits import diagonal_top_fraction
    from headspace.demos import _shipped
    from headspace.demos.token_path import path_matrix
    from headspace.heads import head_scores
    from headspace.model import cross_entropy
    from headspace.paths import BIAS, DIRECT, VIRTUAL, path_terms

    plain, rms = _shipped.MODEL_NAMES
    m = _shipped.weights(plain, None)
    cfg = m.config
    (l1, h1), (l2, h2) = _shipped.roles(plain)
    pair = f"{l1}.{h1}{VIRTUAL}{l2}.{h2}"
    prev, ind = head_scores(m)
    _holds(l1 == 0 and l2 == 1, "primer: the previous-token head is in layer 0 and the induction head in layer 1")
    # the explorer at its defaults: a random prefix, then a span twice
    ex = _outputs("attention-explorer")
    first_copy, span = _shipped.DEFAULT_PREFIX, _shipped.DEFAULT_SPAN
    loss = ex["loss"]  # position i predicts token i + 1: the repeat is predictable from first_copy + span on
    # circuits of every head
    circ = {(l, h): _outputs("circuits", head=head(l, h)) for l in range(cfg["n_layers"]) for h in range(cfg["n_heads"])}
    layer1 = [circ[1, h] for h in range(cfg["n_heads"])]
    # the path expansion on the evaluation batch
    fx = virtual_head_effects(plain)
    others = {k: v for k, v in fx.items() if VIRTUAL in k and k != pair}
    runner_up = max(others, key=others.get)
    _holds(fx[pair] > max(others.values()), "primer: on attn-only-2l, removing the induction pair's virtual head "
                                             "raises the repeated-half loss more than removing any other")
    fr = virtual_head_effects(rms)
    (r1, rh1), (r2, rh2) = _shipped.roles(rms)
    rpair = f"{r1}.{rh1}{VIRTUAL}{r2}.{rh2}"
    rothers = {k: v for k, v in fr.items() if VIRTUAL in k and k != rpair}
    _holds(fr[rpair] < max(rothers.values()), "primer: on the RMS model another virtual head matters more than the pair's")
    _holds(fx["all virtual"] < 0, "primer: removing every virtual-head term lowers attn-only-2l's repeated-half loss")
    singles = [fx[f"1.{h}"] for h in range(cfg["n_heads"])]
    toks = _shipped.eval_batch(plain)
    T = toks.shape[1] // 2
    terms = path_terms(m, toks)
    logits = m.logits(toks)
    sum_error = float(np.abs(sum(terms.values()) - logits).max() / np.abs(logits).max())
    _holds(sum_error < 1e-9, "primer: the path terms add up to the logits")
    direct_only = float(cross_entropy(terms[DIRECT] + terms[BIAS], toks)[:, :T - 1].mean())
    k_path = path_matrix(plain, None, "K", (l1, h1), (l2, h2))
    ablation = path_ablation(m, toks, "QKV", positions=slice(T, None))   # mean-ablation, repeated half
    _holds(others and min(others.values()) < 0, "primer: some virtual heads lower the loss when removed")
    virtual = sum(v for k, v in terms.items() if VIRTUAL in k)
    all_virtual_first = float(cross_entropy(logits - virtual, toks)[:, :T - 1].mean())
    # where the previous-token head stops working: its mean attention to the previous token, by query
    per_query = np.diagonal(m.attention_patterns(toks)[:, l1, h1], offset=-1, axis1=-2, axis2=-1).mean(0)
    # per_query[k] is query position k + 1: the head works (>= 90%) up to prev_good_until and fails
    # (<= 15%) from prev_fails_from on, with a few mixed positions between
    prev_good_until = int(np.argmax(per_query < 0.9))                # the last good query position
    prev_fails_from = int(np.nonzero(per_query > 0.15)[0].max()) + 2  # the first query of the failing tail
    _holds(prev_fails_from - prev_good_until <= 5, "primer: the previous-token head stops working within a few positions")
    late_start = prev_fails_from

    def repeat_loss(start: int, span: int = _shipped.DEFAULT_SPAN, batch: int = 32) -> float:
        """Mean loss on the second copy of a span whose first copy starts at ``start`` (seeded random
        tokens elsewhere); the first token of the second copy is not counted (it cannot be foreseen)."""
        rng = np.random.default_rng(7)
        seqs = rng.integers(0, cfg["d_vocab"], (batch, start + 2 * span))
        seqs[:, start + span:] = seqs[:, start:start + span]
        return float(cross_entropy(m.logits(seqs), seqs)[:, start + span:].mean())

    _holds(repeat_loss(late_start) > math.log(cfg["d_vocab"]) > 5 * repeat_loss(4),
           "primer: a repeat starting after the previous-token head's range is not predicted")
    return {
        "n_layers": cfg["n_layers"], "n_heads": cfg["n_heads"], "d_model": cfg["d_model"], "d_head": cfg["d_head"],
        "d_vocab": cfg["d_vocab"], "n_ctx": cfg["n_ctx"], "uniform_loss": math.log(cfg["d_vocab"]),
        "n_virtual": cfg["n_heads"] ** 2, "n_terms": len(terms),
        # the seeded probe of heads.head_scores
        "prev_head": head(l1, h1), "induction_head": head(l2, h2),
        "prev_score": float(prev[l1, h1]), "prev_next": float(np.sort(prev[0])[-2]),
        "ind_min": float(ind[1].min()), "ind_max": float(ind[1].max()), "ind_layer0_max": float(ind[0].max()),
        # the explorer's default sequence
        "explorer_prefix": first_copy, "explorer_span": span,
        "explorer_prev": ex["prev_token_scores"][l1][h1],
        "explorer_loss_before": float(np.mean(loss[:first_copy + span])),
        "explorer_loss_repeat": float(np.mean(loss[first_copy + span:])),
        # circuits
        "copy_prev": circ[l1, h1]["copying_score"],
        "copy_layer1_min": min(c["copying_score"] for c in layer1),
        "ov_diag_layer1_min": min(c["ov_diag_rank"] for c in layer1),
        "ov_diag_layer1_max": max(c["ov_diag_rank"] for c in layer1),
        "qk_diag_induction": circ[l2, h2]["qk_diag_rank"],
        "k_path_diagonal": diagonal_top_fraction(k_path),
        # path expansion, repeated half of the evaluation batch
        "sum_error": _power_of_ten(sum_error),
        "eval_batch": toks.shape[0], "repeat_loss": fx["none"],
        "single_min": min(singles), "single_max": max(singles),
        "pair_virtual": fx[pair], "runner_up": path_label(runner_up), "runner_up_virtual": others[runner_up],
        "all_virtual_drop": -fx["all virtual"],
        "k_ablation": float(ablation[1, l1, h1, l2, h2]), "v_ablation": float(ablation[2, l1, h1, l2, h2]),
        "most_negative_virtual": -min(fx[k] for k in others), "n_virtual_helping": sum(v < 0 for v in others.values()),
        "all_virtual_first_rise": all_virtual_first - float(cross_entropy(logits, toks)[:, :T - 1].mean()),
        "prev_good_until": prev_good_until, "prev_fails_from": prev_fails_from,
        "early_repeat_loss": repeat_loss(4), "late_repeat_loss": repeat_loss(late_start),
        "direct_only_first": direct_only,
        "first_half_loss": float(cross_entropy(logits, toks)[:, :T - 1].mean()),
        # the RMS model
        "rms_pair": path_label(rpair), "rms_pair_virtual": fr[rpair],
        "rms_top": path_label(max(rothers, key=rothers.get)), "rms_top_virtual": max(rothers.values()),
        **_stream(plain),
    }


def _stream(name: str) -> dict:
    """The residual-stream schematic at the top of the primer: what the induction head reads through its key."""
    from headspace.demos import _shipped
    from headspace.demos.residual_stream import head_name

    (l1, h1), (l2, h2) = _shipped.roles(name)
    prev, ind = head_name(l1, h1), head_name(l2, h2)
    reads = _outputs("residual-stream", head=ind, input="key", model=name)["reads"]
    others = {k: v for k, v in reads.items() if k != prev}
    _holds(reads[prev] > max(others.values()), "primer: through its key, the induction head reads the "
                                               "previous-token head more than any other writer")
    values = _outputs("residual-stream", head=ind, input="value", model=name)["reads"]
    _holds(values[prev] == min(values.values()), "primer: through its value, the induction head reads the "
                                                 "previous-token head least of all its writers")
    return {"stream_induction": ind, "stream_prev": prev, "stream_key_prev": reads[prev],
            "stream_key_other": max(others.values()), "stream_value_prev": values[prev]}


def _bench_row(t: dict, group: str, mode: str, gt: str, score: str) -> dict:
    from headspace.demos.score_benchmark import row
    return row(score, gt, group, mode)


def _indistinguishable(t: dict, group: str, mode: str, gt: str, score: str) -> list[str]:
    """The scores whose Spearman with ``gt`` the benchmark cannot tell apart from ``score``'s."""
    for g, m, truth, matrix in t["comparisons"]:
        if (g, m, truth) == (group, mode, gt):
            i = t["scores"].index(score)
            return [s for j, s in enumerate(t["scores"]) if j != i and not matrix[i][j]]
    raise ValueError(f"no comparison for {group}, {mode}, {gt}")


def _reverse_attention_to_answer() -> float:
    """The reverse-copy models' second layer at the circuit's positions: the share of attention its
    most attentive head puts on the answer's own position (the token before the earlier occurrence
    of the current one), the median over the zoo's reverse-copy models, on the first evaluation batch."""
    from pathlib import Path

    from headspace import benchmark as bench
    from headspace.tasks import PARTNER
    zoo = Path(__file__).resolve().parents[2] / "zoo"
    tokens, mask = bench.eval_batches(zoo, "reverse")
    tokens, mask = tokens[0], mask[0]
    b, t = np.nonzero(mask)
    j = np.array([np.flatnonzero(tokens[i, :q] == tokens[i, q] - PARTNER)[-1] for i, q in zip(b, t)])
    shares = []
    for name, e in bench.zoo_models(zoo).items():
        if e["task"] == "reverse":
            pattern = bench.load_zoo_model(zoo, name).attention_patterns(tokens)     # [batch, L, H, seq, seq]
            shares.append(pattern[b, 1, :, t, j - 1].mean(0).max())
    return float(np.median(shares))


def benchmark() -> dict:
    """site/content/posts/which-composition-score.md"""
    # The composition-score benchmark on the zoo. Every statistic is read from the benchmark table
    # (headspace.benchmark, shipped as headspace/models/benchmark.json) that the page's figure
    # reads; which score has the highest point estimate is reported together with the scores the
    # paired bootstrap cannot tell from it, and no inequality between two estimates is asserted.
    from headspace.benchmark import CIRCUIT_EFFECT, LEVEL, MIN_EFFECT, REL_EFFECT, circuit_present, read_table, solves
    t = read_table()
    models = t["models"]
    out = {"n_models": len(models), "n_families": len(t["families"]),
           # the level of every interval (percentile bootstrap, headspace.benchmark)
           "level": LEVEL,
           "n_seeds": min(sum(m["family"] == f for m in models) for f in t["families"]),
           "n_batches": t["n_batches"], "batch": t["batch"], "resamples": t["resamples"],
           "min_effect": MIN_EFFECT, "rel_effect": REL_EFFECT, "n_scores": len(t["scores"]),
           # the width of every model's residual stream and heads (the zoo's one shape)
           "d_model": _the_same("benchmark.d_model", [m["d_model"] for m in models]),
           "d_head": _the_same("benchmark.d_head", [m["d_head"] for m in models])}
    secs = np.array([m["train_seconds"] for m in models], float)
    out.update(train_seconds_median=float(np.median(secs)), train_seconds_min=float(secs.min()),
               train_seconds_max=float(secs.max()))
    out.update(steps_min=min(m["steps"] for m in models), steps_max=max(m["steps"] for m in models),
               circuit_effect=CIRCUIT_EFFECT)
    own_mode = {task: t["modes"].index(t["mode_of_task"][task]) for task in t["tasks"]}

    def top(m, mode=None):
        """The model's largest path (mean ablation, circuit positions) in ``mode`` (default: its task's)."""
        return max(m["ground_truth"]["mean-circuit"][own_mode[m["task"]] if mode is None else mode])

    def solved(m):
        return solves(m["task"], m["heldout_circuit_loss"], m["circuit_loss_at_step_0"])

    def formed(m):
        return circuit_present(m["task"], m["ground_truth"]["mean-circuit"])

    out["n_solved"] = sum(map(solved, models))
    out["n_formed"] = sum(map(formed, models))
    for task in t["tasks"]:
        ms = [m for m in models if m["task"] == task]
        # held-out loss at the circuit's positions: the worst model of the task, and at step 0
        out[f"loss_{task}_max"] = max(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{task}_min"] = min(m["heldout_circuit_loss"] for m in ms)
        out[f"loss_{task}_step0"] = min(m["circuit_loss_at_step_0"] for m in ms)
        out[f"n_{task}"] = len(ms)
        out[f"solved_{task}"] = sum(map(solved, ms))
        out[f"formed_{task}"] = sum(map(formed, ms))
        out[f"steps_{task}_max"] = max(m["steps"] for m in ms)
        out[f"top_{task}_max"] = max(map(top, ms))
    # reverse copy: every model solves it; how many reach a V path of CIRCUIT_EFFECT, and how the
    # largest Q path compares with the largest V path (a model can find the answer's own position)
    rev = [m for m in models if m["task"] == "reverse"]
    q_mode, v_mode = t["modes"].index("Q"), t["modes"].index("V")
    out["top_reverse_min"] = min(map(top, rev))
    out["top_reverse_q_min"] = min(top(m, q_mode) for m in rev)
    out["top_reverse_q_max"] = max(top(m, q_mode) for m in rev)
    out["n_reverse_q_over_v"] = sum(top(m, q_mode) > top(m, v_mode) for m in rev)
    out["reverse_attention_to_answer"] = _reverse_attention_to_answer()
    _holds(all(map(solved, rev)), "every reverse-copy model solves its task")
    _holds(out["n_reverse_q_over_v"] > len(rev) / 2, "in most reverse-copy models the largest Q path outweighs the "
                                                      "largest V path")
    # the induction models by normalisation: how many of the normalised ones formed their circuit
    normed = [m for m in models if m["task"] == "induction" and m["normalization_type"]]
    out["n_induction_normed"], out["formed_induction_normed"] = len(normed), sum(map(formed, normed))
    # lookup: every model's largest Q path (the task leaves ln 4 nats to any model that reads the two
    # cues apart, headspace.tasks), and the largest V path beside it
    lookup = [m for m in models if m["task"] == "lookup"]
    out["lookup_q_min"], out["lookup_q_max"] = min(map(top, lookup)), max(map(top, lookup))
    out["lookup_v_max"] = max(top(m, v_mode) for m in lookup)
    _holds(all(map(solved, lookup)) and all(map(formed, lookup)),
           "every lookup model solves its task and has a Q path of the threshold's size")
    # agreement of the ground truths with each other, in each model's own mode: median and lowest over models
    own = [t["mode_of_task"][m["task"]] for m in models]
    for a, b, key in (("mean-all", "mean-circuit", "all_circuit"), ("mean-circuit", "resample-circuit", "mean_resample"),
                      ("mean-all", "resample-all", "mean_resample_all")):
        rhos = np.array([agree[f"{mode}:{a}|{b}"][0] for agree, mode in zip(t["agreement"], own)], float)
        rhos = rhos[np.isfinite(rhos)]
        out[f"agree_{key}_median"] = float(np.median(rhos))
        out[f"agree_{key}_min"] = float(rhos.min())
    # the main table: all models, each in its task's mode
    for gt in ("mean-circuit", "resample-circuit", "mean-all"):
        tag = gt.replace("-", "_")
        rows = {s: _bench_row(t, "all", "task", gt, s) for s in t["scores"]}
        for s, r in rows.items():
            for f in ("spearman", "spearman_lo", "spearman_hi", "auroc", "auroc_lo", "auroc_hi"):
                if gt == "mean-circuit" or f in ("spearman", "spearman_lo", "spearman_hi"):
                    out[f"{tag}_{s}_{f}"] = float("nan") if r[f] is None else r[f]
        best = max(rows, key=lambda s: rows[s]["spearman"])
        worst = min(rows, key=lambda s: rows[s]["spearman"])
        out[f"{tag}_best"], out[f"{tag}_best_rho"] = best, rows[best]["spearman"]
        out[f"{tag}_worst"], out[f"{tag}_worst_rho"] = worst, rows[worst]["spearman"]
        out[f"{tag}_best_ties"] = len(_indistinguishable(t, "all", "task", gt, best))
    # every score ranks worse against mean ablation over all positions than over the circuit's
    _holds(all(_bench_row(t, "all", "task", "mean-all", s)["spearman"]
               < _bench_row(t, "all", "task", "mean-circuit", s)["spearman"] for s in t["scores"]),
           "every score's correlation falls against mean ablation over all positions")
    # how large the circuit's paths are: per model the largest path effect in its own mode (mean
    # ablation, circuit positions), the median over each task's models
    for task in t["tasks"]:
        tops = [max(m["ground_truth"]["mean-circuit"][t["modes"].index(t["mode_of_task"][task])])
                for m in models if m["task"] == task]
        out[f"{task}_top_effect_median"] = float(np.median(tops))
    # scores that rank alike by construction: the same Spearman in every row of the table (exact,
    # not a noisy comparison: frobenius_baseline is frobenius minus a constant per mode and shape;
    # projection_kernel is d_head times subspace minus a constant when every head has full rank)
    for a, b in (("frobenius_baseline", "frobenius"), ("projection_kernel", "subspace")):
        fields = t["row_fields"]
        same = [dict(zip(fields, r)) for r in t["rows"]]
        by = {(r["group"], r["mode"], r["ground_truth"], r["score"]): r["spearman"] for r in same}
        pairs = [(v, by[k[:3] + (b,)]) for k, v in by.items() if k[3] == a]
        _holds(all(x == y for x, y in pairs), f"{a} ranks as {b} in every row of the benchmark")
    # the families whose circuit formed in every seed: the plain induction models get the article's
    # second table; the three-layer RMSNorm induction models, the reverse-copy models with MLPs and
    # the lookup models a sentence each
    formed_families = (("formed", "induction-none-attn-2l"), ("formed3l", "induction-rms-attn-3l"),
                       ("formedrev", "reverse-ln-mlp-2l"), ("formedlookup", "lookup-rms-attn-2l"))
    all_formed = [f for f in t["families"] if all(formed(m) for m in models if m["family"] == f)]
    _holds(all_formed == [f for _, f in formed_families],
           "the plain and the three-layer induction families, the reverse-copy models with MLPs and the lookup "
           "models, and only they, formed their circuit in every seed")
    for tag, family in formed_families:
        rows = {s_: _bench_row(t, family, "task", "mean-circuit", s_) for s_ in t["scores"]}
        if tag == "formed":
            for s_, r in rows.items():
                for f in ("spearman", "spearman_lo", "spearman_hi", "auroc", "auroc_lo", "auroc_hi"):
                    out[f"formed_{s_}_{f}"] = r[f]
        best = max(rows, key=lambda s_: rows[s_]["spearman"])
        out[f"{tag}_best"] = best
        out[f"{tag}_best_rho"] = rows[best]["spearman"]
        out[f"{tag}_best_lo"], out[f"{tag}_best_hi"] = rows[best]["spearman_lo"], rows[best]["spearman_hi"]
        out[f"{tag}_best_distinguished"] = len(t["scores"]) - 1 - len(
            _indistinguishable(t, family, "task", "mean-circuit", best))
        tops = [top(m) for m in models if m["family"] == family]
        out[f"{tag}_top_min"], out[f"{tag}_top_max"] = min(tops), max(tops)
    out["n_other_scores"] = len(t["scores"]) - 1
    # which scores find the circuit's pairs: an AUROC whose interval lies above one half
    found = {family: [s_ for s_ in t["scores"] if (_bench_row(t, family, "task", "mean-circuit", s_)["auroc_lo"] or 0) > 0.5]
             for _, family in formed_families}
    out["n_found"] = sum(len(found[f]) for _, f in formed_families if f != "reverse-ln-mlp-2l")
    out["n_found_total"] = len(t["scores"]) * (len(formed_families) - 1)
    rev_auroc = [_bench_row(t, "reverse-ln-mlp-2l", "task", "mean-circuit", s_)["auroc"] for s_ in t["scores"]]
    out["formedrev_auroc_min"], out["formedrev_auroc_max"] = min(rev_auroc), max(rev_auroc)
    _holds(not found["reverse-ln-mlp-2l"], "on the reverse-copy models with MLPs no score's AUROC interval lies above "
                                           "one half")
    _holds(out["n_found"] > out["n_found_total"] / 2, "on the other families whose circuit formed most scores find it")
    out["n_formed_families"] = len(formed_families)
    out["n_formed_others"] = len(formed_families) - 1
    _holds(len({out[f"{tag}_best"] for tag, _ in formed_families}) == len(formed_families),
           "a different score comes first on each of the families whose circuit formed")
    _holds(all(out[f"{tag}_best_distinguished"] < out["n_other_scores"] for tag, _ in formed_families),
           "on no family whose circuit formed is the first score separated from all the others")
    _holds(out["formed3l_best_distinguished"] == 0,
           "on the three-layer induction models the first score cannot be told apart from any other")
    _holds(all(_bench_row(t, "induction-rms-attn-3l", "task", "mean-circuit", s_)["spearman"]
               < _bench_row(t, "induction-none-attn-2l", "task", "mean-circuit", s_)["spearman"] for s_ in t["scores"]),
           "every score ranks the three-layer induction models' pairs worse than the plain ones'")
    _holds(not any(formed(m) for m in models if m["family"] == "induction-ln-mlp-2l"),
           "none of the induction models with LayerNorm and MLPs formed its circuit")
    for task in t["tasks"]:
        rows = {s: _bench_row(t, task, "task", "mean-circuit", s) for s in t["scores"]}
        best = max(rows, key=lambda s: rows[s]["spearman"])
        out[f"{task}_best"] = best
        out[f"{task}_best_rho"] = rows[best]["spearman"]
        out[f"{task}_best_lo"] = rows[best]["spearman_lo"]
        out[f"{task}_best_hi"] = rows[best]["spearman_hi"]
        out[f"{task}_best_ties"] = len(_indistinguishable(t, task, "task", "mean-circuit", best))
        out[f"{task}_frobenius_rho"] = rows["frobenius"]["spearman"]
        out[f"{task}_frobenius_lo"] = rows["frobenius"]["spearman_lo"]
        out[f"{task}_frobenius_hi"] = rows["frobenius"]["spearman_hi"]
    # computed for the checks above, or for every task alike where the article states some
    checked_only = {"formed3l_best_distinguished", "formed_best_hi", "formed_best_lo", "formed_best_rho",
                    "formed_top_max", "formed_top_min", "mean_circuit_worst", "resample_circuit_best_rho",
                    "resample_circuit_worst", "resample_circuit_worst_rho", "loss_lookup_step0",
                    "loss_reverse_step0", "solved_induction", "solved_lookup", "solved_reverse", "solved_text",
                    "steps_induction_max", "steps_lookup_max", "steps_reverse_max", "steps_text_max", "top_induction_max",
                    "top_lookup_max", "top_reverse_max"}
    return {k: v for k, v in out.items() if k not in checked_only}


ARTICLES = {"primer": primer, "polariser": polariser, "subspaces": subspaces, "measuring": measuring, "difficult": difficult,
            "formalising": formalising, "benchmark": benchmark}


def compute() -> dict:
    """``{article: {name: value}}`` for every article, as site/data/values.json holds it."""
    out = {}
    for article, fn in ARTICLES.items():
        values = fn()
        for name, value in values.items():
            ok = isinstance(value, str) and len(value) <= 40 or \
                isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
                and math.isfinite(value)
            if not ok:
                raise ValueError(f"{article}.{name}: a value is a finite number or a short string; got {value!r}")
        out[article] = {name: value.item() if isinstance(value, np.generic) else value
                        for name, value in values.items()}
    return out


if __name__ == "__main__":
    import json
    print(json.dumps(compute(), indent=1, ensure_ascii=False))
