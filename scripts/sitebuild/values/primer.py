"""The numbers site/content/posts/transformer-circuits-primer.md states
(``{{< value "primer.name" >}}``), and the claims in its prose this checks."""

from __future__ import annotations

import math

import numpy as np

from headspace_site.figure.outputs import head, path_label

from ._shared import _holds, _outputs, _power_of_ten


def virtual_head_effects(name: str) -> dict:
    """Path expansion of shipped model ``name`` on its evaluation batch (``_shipped.eval_batch``):
    the repeated-half loss with every term in place (``"none"``), and the increase when each term,
    or all virtual-head terms together (``"all virtual"``), is removed, patterns held fixed.
    tests/unit/test_paths.py checks the same numbers."""
    from headspace_site.figure import shipped as _shipped
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
    from headspace_site.figure import shipped as _shipped
    from headspace_site.demos.token_path import path_matrix
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
    from headspace_site.figure import shipped as _shipped
    from headspace_site.demos.residual_stream import head_name

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
