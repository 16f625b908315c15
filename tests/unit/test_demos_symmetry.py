"""The residual stream's symmetries on the shipped models: what the article "Why Is Measuring
Composition So Difficult?" claims, checked on the real weights."""

import json
from functools import lru_cache

import numpy as np
import pytest

from headspace import symmetry as S
from headspace.axioms import ordering_flips
from headspace.causal import path_ablation
from headspace_site.demos import REGISTRY
from headspace_site.figure import shipped as _shipped
from headspace_site.demos import norm_symmetry as NS
from headspace_site.demos.residual_basis import basis_change, mean_loss, ranks

_later, model_scores = _shipped.later_pairs, _shipped.model_scores

PLAIN, RMS = "attn-only-2l", "attn-only-2l-rms"
#: Every kind of transform residual-basis offers, each at the end of its slider, and all at once.
TRANSFORMS = [dict(rotation=-175), dict(rotation=60), dict(log_condition=3.0), dict(shear=3.0), dict(shear=-3.0),
              dict(permute=True), dict(rotation=-95, log_condition=3.0, shear=-3.0, permute=True, seed=7)]


@lru_cache(maxsize=None)
def _unmoved(name: str, mode: str, metric: str) -> np.ndarray:
    """``model_scores`` of shipped model ``name`` as shipped, computed once for the module: every
    transform is compared with the same unmoved scores (path ablation of the model costs seconds)."""
    out = model_scores(_shipped.weights(name, None), name, mode, metric)
    out.setflags(write=False)
    return out


def _T(d_model, **kw):
    p = dict(rotation=0, log_condition=0.0, shear=0.0, permute=False, seed=0)
    p.update(kw)
    return basis_change(d_model, **p)


def _float32(m):
    """The model with every weight rounded to float32, as a researcher would store it."""
    for k in ("W_E", "W_pos", "W_O", "b_O", "W_Q", "W_K", "W_V", "W_U", "b_Q", "b_K", "b_V", "b_U"):
        setattr(m, k, getattr(m, k).astype(np.float32).astype(np.float64))
    return m


@pytest.mark.parametrize("kw", TRANSFORMS, ids=str)
def test_plain_model_computes_the_same_function_after_every_transform(kw):
    m = _shipped.weights(PLAIN, None)
    T = _T(m.config["d_model"], **kw)
    loss, logits = mean_loss(m, PLAIN)
    loss2, logits2 = mean_loss(S.transform_model(m, T), PLAIN)
    assert abs(loss2 - loss) / loss < 1e-12
    assert np.abs(logits2 - logits).max() / np.abs(logits).max() < 1e-12
    # stored in float32: the loss to 1e-6 relative; the logits to 1e-6 relative times cond(T) / 100
    # (float32 rounding of a T with condition number c is amplified up to c times)
    loss32, logits32 = mean_loss(_float32(m.fold_norm()), PLAIN)
    loss3, logits3 = mean_loss(_float32(S.transform_model(m, T)), PLAIN)
    assert abs(loss3 - loss32) / loss32 < 1e-6
    assert np.abs(logits3 - logits32).max() / np.abs(logits32).max() < 1e-6 * max(1.0, np.linalg.cond(T) / 100)


@pytest.mark.parametrize("kw", TRANSFORMS, ids=str)
@pytest.mark.parametrize("mode", "QKV")
def test_token_whitened_and_path_ablation_do_not_notice_what_the_model_does_not(kw, mode):
    m = _shipped.weights(PLAIN, None)
    moved = S.transform_model(m, _T(m.config["d_model"], **kw))
    for metric in ("token", "whitened", _shipped.CAUSAL):
        before, after = _unmoved(PLAIN, mode, metric), model_scores(moved, PLAIN, mode, metric)
        np.testing.assert_allclose(after, before, rtol=1e-7, atol=1e-10 * np.abs(before).max(), err_msg=metric)


def test_frobenius_reorders_pairs_under_a_stretch_the_model_does_not_notice():
    out = REGISTRY["residual-basis"].run({"model": PLAIN, "metric": "frobenius", "log_condition": 1.0})["outputs"]
    assert abs(out["loss_after"] - out["loss_before"]) < 1e-12 and out["max_logit_change"] < 1e-10
    assert out["order_changed"]
    assert ordering_flips(_later(out["scores_before"]), _later(out["scores_after"])) > 0
    for metric in ("token", "whitened", _shipped.CAUSAL):
        assert not REGISTRY["residual-basis"].run({"metric": metric, "log_condition": 3.0, "shear": 3.0})[
            "outputs"]["order_changed"], metric


@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.5])
def test_rms_model_keeps_its_function_under_rotation_times_a_positive_scalar(alpha):
    m = _shipped.weights(RMS, None)
    d = m.config["d_model"]
    T = alpha * S.rotation(d, 40.0, seed=1) @ S.permutation(d, seed=2)
    loss, logits = mean_loss(m, RMS)
    moved = S.transform_model(m, T)
    # the norm is sqrt(mean(x^2) + eps): a scale alpha is exact once eps scales by alpha^2 too ...
    exact = S.transform_model(m, T)
    exact.eps = m.eps * alpha ** 2
    loss2, logits2 = mean_loss(exact, RMS)
    assert abs(loss2 - loss) / loss < 1e-12
    assert np.abs(logits2 - logits).max() / np.abs(logits).max() < 1e-12
    # ... and with the model's own eps the difference is eps's share of mean(x^2), a few 1e-6
    loss3, _ = mean_loss(moved, RMS)
    assert abs(loss3 - loss) / loss < 1e-5
    for metric in ("token", "whitened", _shipped.CAUSAL):
        before, after = _unmoved(RMS, "K", metric), model_scores(exact, RMS, "K", metric)
        np.testing.assert_allclose(after, before, rtol=1e-7, atol=1e-12, err_msg=metric)


@pytest.mark.parametrize("kw", [dict(log_condition=1.0), dict(shear=2.0)], ids=str)
def test_rms_model_changes_under_a_stretch_or_shear(kw):
    out = REGISTRY["residual-basis"].run({"model": RMS, **kw})["outputs"]
    assert out["loss_after"] - out["loss_before"] > 1e-3
    assert out["max_logit_change"] > 0.1


def test_transform_model_matches_change_residual_basis_on_a_plain_model():
    """The Model path and the state-dict path of ``symmetry`` apply the same T."""
    m = _shipped.weights(PLAIN, None)
    T = _T(m.config["d_model"], log_condition=1.0, shear=1.0)
    moved = S.transform_model(m, T)
    w = S.change_residual_basis({"W_E": m.W_E, "W_pos": m.W_pos, "W_Q": m.W_Q, "W_K": m.W_K, "W_V": m.W_V,
                                 "W_O": m.W_O, "b_O": m.b_O, "W_U": m.W_U}, T)
    for k, v in w.items():
        np.testing.assert_allclose(getattr(moved, k), v, rtol=1e-12, atol=1e-12, err_msg=k)


def test_transform_model_refuses_a_wrong_shape_or_a_singular_T():
    m = _shipped.weights(PLAIN, None)
    with pytest.raises(ValueError, match=r"T must be \[d_model, d_model\] = \[64, 64\]; got \[3, 3\]"):
        S.transform_model(m, np.eye(3))
    with pytest.raises(ValueError, match="T must be invertible"):
        S.transform_model(m, np.zeros((64, 64)))


@pytest.mark.slow  # the full run only (scripts/test --fast leaves it out)
def test_norm_symmetry_loss_curve_starts_at_zero_and_the_slider_reads_it():
    for stretch in NS.STRETCHES:
        losses = NS.loss_curve(RMS, stretch, 0)
        assert abs(losses[0]) < 1e-12
        out = REGISTRY["norm-symmetry"].run({"stretch": stretch, "log_condition": 1.2})["outputs"]
        assert out["loss_change"] == pytest.approx(losses[12], abs=1e-15)


def test_norm_symmetry_table_holds_every_stretch_and_seed_of_the_shipped_model():
    """A new seed or stretch in the browser is a look-up: the committed table has every curve, for
    the model files shipped now, and the two it is checked on here are the ones computed now."""
    table = NS._table(RMS)
    assert set(table) == {f"{st}/{seed}" for st in NS.STRETCHES for seed in NS.SEEDS}
    seed = next(p for p in REGISTRY["norm-symmetry"].params if p.name == "seed")
    assert tuple(NS.SEEDS) == seed.values()
    for stretch, seed in [("grow one direction", 7), ("all directions", 9)]:
        assert NS.losses(RMS, stretch, seed) == pytest.approx(NS.loss_curve(RMS, stretch, seed), abs=1e-12)


@pytest.mark.slow  # the full run only: every curve recomputed (about 20 s)
def test_norm_symmetry_table_is_every_curve_computed_now():
    for stretch in NS.STRETCHES:
        for seed in NS.SEEDS:
            assert NS._table(RMS)[f"{stretch}/{seed}"] == pytest.approx(NS.loss_curve(RMS, stretch, seed), abs=1e-12)


def test_norm_symmetry_without_its_table_computes_the_curve(tmp_path, monkeypatch):
    """A copy of the package without the file, or a table of other model files, computes as before."""
    stale = json.loads(NS.TABLE_FILE.read_text())
    stale["fingerprint"]["files"]["weights.npz"] = "0" * 64
    for text in (None, json.dumps(stale)):
        path = tmp_path / "table.json"
        if text is not None:
            path.write_text(text)
        monkeypatch.setattr(NS, "TABLE_FILE", path)
        NS._table.cache_clear()
        try:
            assert NS._table(RMS) == {}
            assert NS.losses(RMS, "shrink one direction", 0) == NS.loss_curve(RMS, "shrink one direction", 0)
        finally:
            NS._table.cache_clear()


@pytest.mark.parametrize("stretch", NS.STRETCHES)
def test_norm_symmetry_score_curve_is_the_library_score_at_every_position(stretch):
    """The batched curve (Gram matrices, T's basis once) is all_composition_scores after each T."""
    m = _shipped.weights(RMS, None)
    d = m.config["d_model"]
    q, f = NS.stretch_basis(d, stretch, 10.0 ** NS.FINE, 6)
    k = f.shape[1]
    for i in (0, 57, 200):
        T = np.eye(d) + (q[:, :k] * (f[i] - 1.0)) @ q[:, :k].T
        np.testing.assert_allclose(T, NS.stretch_matrix(d, stretch, 10.0 ** NS.FINE[i], 6), rtol=0, atol=1e-12)
    for mode in ("Q", "K", "V"):
        curve = NS.score_curve(RMS, stretch, 6, mode)
        for i in (0, 57, 133, 200):
            want = NS.frobenius_after(m, NS.stretch_matrix(d, stretch, 10.0 ** NS.FINE[i], 6), mode)
            np.testing.assert_allclose(curve[i], want, rtol=1e-9, atol=1e-12)


def test_norm_symmetry_first_reorder_is_where_the_top_pair_changes():
    out = REGISTRY["norm-symmetry"].run({"stretch": "shrink one direction", "mode": "K", "seed": 0})["outputs"]
    c = out["first_reorder_condition"]
    assert c is not None and 1 < c <= 100
    m = _shipped.weights(RMS, None)
    d = m.config["d_model"]
    top = lambda cond: np.argmax(_later(NS.frobenius_after(m, NS.stretch_matrix(d, "shrink one direction", cond, 0), "K")))
    assert top(c) != top(1.0)
    assert top(c / 10 ** 0.01) == top(1.0)
    # the scores shown are frobenius of the fully transformed model (the readers' global scale cancels)
    moved = S.transform_model(m, NS.stretch_matrix(d, "shrink one direction", 10 ** 1.5, 0))
    np.testing.assert_allclose(REGISTRY["norm-symmetry"].run({"seed": 0})["outputs"]["scores"],
                               model_scores(moved, RMS, "K", "frobenius"), rtol=1e-9, atol=1e-12)


@pytest.mark.slow  # the full run only (scripts/test --fast leaves it out)
def test_shrinking_one_direction_barely_moves_the_rms_model_growing_it_does():
    """The article's empirical answer: shrink one residual direction and the top pair changes while
    the loss moves by about a hundredth of a nat; grow it and the model breaks."""
    shrink = [max(abs(x) for x in NS.loss_curve(RMS, "shrink one direction", s)) for s in range(3)]
    grow = [NS.loss_curve(RMS, "grow one direction", s)[-1] for s in range(3)]
    assert max(shrink) < 0.02 and min(grow) > 1.0


def test_transform_rules_fixed_products():
    out = REGISTRY["transform-rules"].run({"rotation": 30, "scale": 3.0, "shear": 1.0, "flip": True})["outputs"]
    T = np.array(out["T"])
    Ti = np.linalg.inv(T)
    from headspace_site.demos.transform_rules import W_E, W_OV, W_QK
    np.testing.assert_allclose(out["ov_after"], T @ W_OV @ Ti, atol=1e-12)
    np.testing.assert_allclose(out["composite_after"], Ti.T @ W_QK @ W_OV @ Ti, atol=1e-12)
    assert out["token_change"] < 1e-12
    # the eigenvalues of W_OV are fixed (a similarity); its Frobenius norm is not
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(out["ov_after"])),
                               np.sort_complex(np.linalg.eigvals(W_OV)), atol=1e-12)
    assert abs(np.linalg.norm(out["ov_after"]) - np.linalg.norm(W_OV)) > 1e-3
    assert out["frobenius_after"] != pytest.approx(out["frobenius_before"], abs=1e-3)
    rot = REGISTRY["transform-rules"].run({"rotation": 50, "scale": 1.0})["outputs"]
    assert rot["frobenius_after"] == pytest.approx(rot["frobenius_before"], abs=1e-12)


def test_ranks_and_ordering_flips_agree_with_a_slow_reference():
    rng = np.random.default_rng(0)
    s = rng.standard_normal((2, 3, 2, 3))
    r = ranks(s)
    later = _later(s)
    for v, k in zip(later, _later(r)):
        assert k == 1 + np.sum(later > v)
    a, b = rng.standard_normal(9), rng.standard_normal(9)
    slow = sum(1 for i in range(9) for j in range(9) if a[i] > a[j] and b[i] < b[j])
    assert ordering_flips(a, b) == slow
    with pytest.raises(ValueError, match="same number of scores; got 9 and 3"):
        ordering_flips(a, b[:3])


def test_path_ablation_of_the_plain_model_is_basis_free_in_every_mode_at_once():
    m = _shipped.weights(PLAIN, None)
    toks = _shipped.eval_batch(PLAIN)
    moved = S.transform_model(m, S.stretch(m.config["d_model"], 1e3, seed=4))
    np.testing.assert_allclose(path_ablation(moved, toks, "QKV"), path_ablation(m, toks, "QKV"), atol=1e-10)


# -- residual-basis's fast path against the slow, obvious one -------------------------------------

RB_CASES = [dict(), *TRANSFORMS, dict(rotation=35, log_condition=2.3, shear=1.7, seed=4)]


def _basis_key(model, kw):
    p = REGISTRY["residual-basis"].resolve({"model": model, **kw})
    return tuple(p[k] for k in ("model", "rotation", "log_condition", "shear", "permute", "seed"))


@pytest.mark.parametrize("kw", RB_CASES, ids=str)
def test_basis_change_is_the_product_of_the_symmetry_factors_to_the_last_bit(kw):
    p = {**dict(rotation=0, log_condition=1.0, shear=0.0, permute=False, seed=0), **kw}
    d = 64
    Q = S.random_orthogonal(d, p["seed"])
    slow = S.permutation(d, p["seed"]) if p["permute"] else np.eye(d)
    slow = slow @ S.rotation(d, p["rotation"], p["seed"])
    slow = slow @ S.stretch(d, 10.0 ** p["log_condition"], p["seed"])
    slow = slow @ S.shear(d, Q[:, 0], Q[:, 1], p["shear"])
    for _ in range(2):  # the second time from the caches
        assert np.array_equal(basis_change(d, **p), slow)


@pytest.mark.parametrize("model", [PLAIN, RMS])
@pytest.mark.parametrize("kw", RB_CASES, ids=str)
def test_residual_basis_scores_equal_those_of_the_whole_moved_model_to_the_last_bit(model, kw):
    """The demo moves only the weights a score reads (``_Readers``); every weight-based score and
    cond T are exactly what ``symmetry.transform_model`` and ``np.linalg.cond`` give."""
    from headspace_site.demos import residual_basis as RB
    basis = _basis_key(model, kw)
    m = _shipped.weights(model, None)
    T = basis_change(m.config["d_model"], *basis[1:])
    moved = S.transform_model(m, T)
    readers = RB._readers(basis)
    for name in ("W_E", "W_O", "W_Q", "W_K", "W_V", "W_U"):
        assert np.array_equal(getattr(readers, name), getattr(moved, name)), name
    assert RB._basis(basis)[2] == float(np.linalg.cond(T))
    for metric in _shipped.SCORE_OPTIONS:
        if metric == _shipped.CAUSAL:
            continue
        out = REGISTRY["residual-basis"].run({"model": model, "metric": metric, "mode": "K", **kw})["outputs"]
        assert out["scores_after"] == model_scores(moved, model, "K", metric).tolist(), metric


@pytest.mark.parametrize("kw", RB_CASES, ids=str)
def test_residual_basis_loss_after_is_the_moved_models_forward_pass_or_an_exact_symmetry(kw):
    """With RMSNorm the loss, logits and path ablation after come from the moved model, to the last
    bit; without a norm the change is an exact symmetry, taken as such: the forward pass in the new
    basis differs only by rounding, under 1e-10 in a logit (printed as 0)."""
    from headspace_site.demos import residual_basis as RB
    for model in (PLAIN, RMS):
        m = _shipped.weights(model, None)
        moved = S.transform_model(m, basis_change(m.config["d_model"], *_basis_key(model, kw)[1:]))
        loss, logits = mean_loss(m, model)
        loss_moved, logits_moved = mean_loss(moved, model)
        out = REGISTRY["residual-basis"].run({"model": model, **kw})["outputs"]
        rounded = RB.symmetry_rounding(_basis_key(model, kw))
        assert rounded == (loss_moved, float(np.abs(logits_moved - logits).max()))
        if model == RMS:
            assert (out["loss_after"], out["max_logit_change"]) == rounded
        else:
            assert (out["loss_after"], out["max_logit_change"]) == (out["loss_before"], 0.0)
            assert abs(rounded[0] - loss) < 1e-12 * loss and rounded[1] < 1e-10


def test_residual_basis_causal_scores_after_are_path_ablation_of_the_moved_model():
    from headspace_site.demos import residual_basis as RB
    kw = dict(rotation=60, log_condition=2.0, shear=-1.5)
    for model in (PLAIN, RMS):
        out = REGISTRY["residual-basis"].run({"model": model, "metric": "causal", "mode": "Q", **kw})["outputs"]
        slow = path_ablation(RB._moved(_basis_key(model, kw)), _shipped.eval_batch(model), "Q")
        if model == RMS:
            assert out["scores_after"] == slow.tolist()
        else:  # an exact symmetry: the scores before, which the moved model's differ from by rounding
            assert out["scores_after"] == out["scores_before"]
            np.testing.assert_allclose(slow, out["scores_before"], rtol=1e-9, atol=1e-12)


def test_a_stretch_rebreaks_the_tie_in_the_previous_token_heads_row():
    """Why difficult: "in every frame and at every condition the new top is another reader of" the
    previous-token head. Every frame of the all-directions stretch, every condition on the fine grid
    up to 100, using only the weights (the slow way: one 5-index argmax per condition)."""
    m = _shipped.weights(PLAIN, None)
    (l1, h1), _ = _shipped.roles(PLAIN)
    d = m.config["d_model"]
    moved = 0
    for seed in range(10):
        tops = []
        for lc in NS.FINE:
            s = NS.frobenius_after(m, NS.stretch_matrix(d, "all directions", 10.0 ** lc, seed), "K")
            tops.append(np.unravel_index(int(np.argmax(s)), s.shape))
        assert all(t[:2] == (l1, h1) and t[2] == 1 for t in tops), (seed, sorted(set(tops)))
        moved += len(set(tops)) > 1
    assert moved >= 1                                   # the stretch does move the top within the row
