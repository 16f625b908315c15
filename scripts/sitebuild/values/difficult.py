"""The numbers site/content/posts/why-measuring-composition-is-difficult.md states
(``{{< value "difficult.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

import functools

import numpy as np

from headspace_site.demos import REGISTRY
from headspace_site.figure.outputs import head

from ._shared import _holds, _outputs, _power_of_ten


SYMMETRY_SEEDS = range(10)  # the seeds of norm-symmetry's slider: every direction the reader can pick


#: Path ablation for the rank correlations of "Why difficult": EVAL_BATCHES independent batches
#: (heads.repeated_tokens, seeds 1 to EVAL_BATCHES) of BATCH_SEQUENCES sequences each. Twenty is
#: the fewest the bootstrap needs; eight sequences a batch keep both models' 20 path ablations
#: cheap enough for every build (docs/decisions/0002-timings.md). The correlation is the one of the mean effect
#: over all batches; its interval resamples batches (headspace.stats).
EVAL_BATCHES, BATCH_SEQUENCES = 20, 8


#: The central share of the bootstrap that an interval reports.
LEVEL = 0.95


@functools.lru_cache(maxsize=None)
def batch_effects(name: str, mode: str = "K") -> np.ndarray:
    """``[EVAL_BATCHES, n_pairs]``: path ablation of shipped model ``name`` on each batch, later pairs."""
    from headspace.causal import path_ablation
    from headspace_site.figure import shipped as _shipped
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
    from headspace_site.figure import shipped as _shipped
    from headspace.head_pairs import all_composition_scores

    toks = _shipped.eval_tokens(m.config["d_vocab"], m.config["n_ctx"])      # the evaluation batch
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
    from headspace_site.figure import shipped as _shipped
    from headspace_site.demos import norm_symmetry as ns
    from headspace_site.demos import residual_basis as rbasis
    from headspace_site.demos.residual_basis import mean_loss
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
    plain_curves = [np.stack([_shipped.later_pairs(ns.frobenius_after(m, ns.stretch_matrix(d, "all directions", 10.0 ** lc, s), "K"))
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
    frames = _frames(plain, fro_before, eff_plain)

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
            sc = _shipped.later_pairs(ns.frobenius_after(r, ns.stretch_matrix(d, "shrink one direction", cond, s), "K"))
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
        # the same change for every random frame of the figure at its default condition number
        **frames,
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


def _frames(plain: str, fro_before, effects) -> dict:
    """The change of Frobenius's Spearman with path ablation (K, plain model) under the residual-basis
    figure's T for each of its random frames (its seed slider) at the default condition number.

    Per frame: the paired interval over batches (``rho_plain_change`` is frame 0's). Over frames: the
    lowest and highest estimate, how many frames' intervals lie wholly below zero (a loss) and wholly
    above (a gain), and the interval of the change when the frame and the batches are both drawn at
    random (each frame's bootstrap draws, same batch resamples, pooled with equal weight)."""
    from headspace.stats import RESAMPLES, spearman_along

    effects = np.asarray(effects)
    means = effects[np.random.default_rng(0).integers(0, len(effects), (RESAMPLES, len(effects)))].mean(1)
    seeds = next(p for p in REGISTRY["residual-basis"].params if p.name == "seed")
    changes, pooled = [], []
    for seed in range(int(seeds.min), int(seeds.max) + 1):
        after = _shipped_later(_outputs("residual-basis", model=plain, metric="frobenius", seed=seed)["scores_after"])
        d = _diff("d", after, fro_before, effects)
        changes.append((d["d"], d["d_lo"], d["d_hi"]))
        pooled.append(spearman_along(after[None], means) - spearman_along(np.asarray(fro_before)[None], means))
    lo, hi = np.quantile(np.concatenate(pooled), [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return {"n_frames": len(changes), "rho_frames_min": min(c[0] for c in changes),
            "rho_frames_max": max(c[0] for c in changes),
            "n_frames_loss": sum(c[2] < 0 for c in changes), "n_frames_gain": sum(c[1] > 0 for c in changes),
            "rho_any_T_lo": float(lo), "rho_any_T_hi": float(hi)}


def _shipped_later(scores) -> np.ndarray:
    from headspace_site.figure import shipped as _shipped
    return _shipped.later_pairs(scores)


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
