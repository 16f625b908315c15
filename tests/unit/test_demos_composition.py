"""The demos of "Measuring composition" and "Formalising composition", against the library.

Each test calls ``REGISTRY[name].run``, exactly what the page and the worker call, and compares
with ``headspace.composition`` and ``headspace.axioms`` called directly: the demos add no maths
of their own.
"""

from __future__ import annotations

import functools

import numpy as np
import re

import pytest

from headspace.composition import METRICS, composition_score
from headspace_site.demos import REGISTRY
from headspace_site.demos import identity_paradox
from headspace_site.figure.registry import ParameterError


def refused(demo: str, params: dict):
    """Run ``demo`` on ``params``, which it must refuse naming the control, by its label as the page
    shows it (never the parameter's code name), and marking it (``ParameterError.param``)."""
    name = next(iter(params))
    label = next(p.label for p in REGISTRY[demo].params if p.name == name)
    with pytest.raises(ParameterError) as refusal:
        REGISTRY[demo].run(params)
    assert refusal.value.param == name and str(refusal.value).startswith(label), str(refusal.value)
    assert f"parameter '{name}'" not in str(refusal.value) and "[" not in str(refusal.value), str(refusal.value)


def run(name, **params):
    return REGISTRY[name].run(params)["outputs"]


# --- identity paradox --------------------------------------------------------

@pytest.mark.parametrize("d", identity_paradox.DIMS)
def test_identity_values_are_exact(d):
    out = run("identity-paradox", d=d)
    assert abs(out["frobenius"] - d ** -0.5) < 1e-12
    assert out["svd_bound"] == 1.0
    assert out["subspace"] == 1.0
    assert out["rank_one_frobenius"] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("d", [d for d in identity_paradox.DIMS if d <= 256])
def test_identity_rows_are_the_library(d):
    """Every shown row, live or tabled, is what composition_score gives on I_d and J_d."""
    out = run("identity-paradox", d=d)
    assert out == identity_paradox.identity_scores(d)
    if d > identity_paradox.LIVE_MAX:   # the committed table must hold every row above LIVE_MAX
        assert identity_paradox._table()[d] == pytest.approx(tuple(out[k] for k in identity_paradox.KEYS), abs=1e-12)


@pytest.mark.parametrize("d", [512, 1024])
def test_identity_large_rows_match_the_cheap_library_calls(d):
    """For the big rows, recompute what is cheap (SVDs of 1024 x 1024 would take seconds)."""
    out = run("identity-paradox", d=d)
    eye, ones = np.eye(d), np.ones((d, d))
    assert out["frobenius"] == composition_score(eye, eye)
    assert out["rank_one_frobenius"] == composition_score(ones, ones)


def test_identity_baseline_is_about_zero():
    """Random Gaussian pairs score about d^-1/2 too, so the corrected identity is near 0."""
    for d in identity_paradox.DIMS[3:]:
        out = run("identity-paradox", d=d)
        assert abs(out["frobenius_baseline"]) < 0.01
        assert out["frobenius_baseline"] == pytest.approx(out["frobenius"] - out["random_frobenius"], abs=1e-12)


def test_identity_bad_d():
    refused("identity-paradox", {"d": 3})
    with pytest.raises(ValueError, match="d must be one of 1, 2, 4"):
        identity_paradox.identity_scores(5)


# --- metric lab ----------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

from headspace import axioms as axioms_module  # noqa: E402
from headspace_site.demos import metric_lab  # noqa: E402

lab = st.fixed_dictionaries({"angle": st.integers(0, 90), "decay": st.integers(0, 40).map(lambda k: k * 0.05),
                             "order": st.sampled_from(["same", "reversed"]), "rank": st.integers(1, 4),
                             "stretch": st.sampled_from([1, 10, 100, 1000]), "seed": st.integers(0, 9)})


@given(lab)
@settings(max_examples=30, deadline=None)
def test_lab_scores_are_the_library(p):
    A, B, W_E, W_U = metric_lab.heads(**p)
    out = run("metric-lab", **p)["scores"]
    assert list(out) == list(METRICS)
    r = p["rank"]
    want = {m: composition_score(A, B, m, **({"ranks": (r, r)} if m == "frobenius_baseline" else
                                           {"W_E": W_E, "W_U": W_U, "mode": "Q"} if m == "token" else
                                           {"W_E": W_E, "mode": "Q"} if m == "whitened" else {}))
            for m in METRICS}
    assert out == pytest.approx(want, abs=1e-12)


@given(lab)
@settings(max_examples=30, deadline=None)
def test_lab_closed_forms(p):
    """A B = cos(angle) P diag(sigma tau) Q^T: svd_bound = cos when the orders agree, subspace = cos^2."""
    out = run("metric-lab", **p)["scores"]
    c = np.cos(np.deg2rad(p["angle"]))
    sigma = np.exp(-p["decay"] * np.arange(p["rank"]))
    tau = sigma if p["order"] == "same" else sigma[::-1]
    if p["stretch"] == 1:                       # a rotation at most: every metric is unchanged
        assert out["subspace"] == pytest.approx(c * c, abs=1e-9)
        assert out["frobenius"] == pytest.approx(c * np.linalg.norm(sigma * tau)
                                                 / (np.linalg.norm(sigma) * np.linalg.norm(tau)), abs=1e-9)
        if p["order"] == "same" or p["decay"] == 0 or p["rank"] == 1:
            assert out["svd_bound"] == pytest.approx(c, abs=1e-9)
    # the token score ignores the residual basis (Axiom 4 by construction)
    base = run("metric-lab", **{**p, "stretch": 1})["scores"]
    assert out["token"] == pytest.approx(base["token"], rel=1e-6, abs=1e-9)
    assert out["whitened"] == pytest.approx(base["whitened"], rel=1e-6, abs=1e-9)


def test_lab_reversed_order_lowers_only_svd_bound_below_one():
    same = run("metric-lab", angle=0, decay=1.0, order="same", rank=3)["scores"]
    rev = run("metric-lab", angle=0, decay=1.0, order="reversed", rank=3)["scores"]
    assert same["svd_bound"] == pytest.approx(1.0) and rev["svd_bound"] < 0.9
    assert same["subspace"] == pytest.approx(1.0) and rev["subspace"] == pytest.approx(1.0)


@pytest.mark.parametrize("seed", [0, 3, 9])
def test_lab_axioms_are_the_axioms_module(seed):
    """One source of truth: the demo's table is axiom_table's, which is each axiom check's."""
    shown = run("metric-lab", seed=seed)["axioms"]
    assert shown == axioms_module.axiom_table(seed=seed)
    checks = {"1": axioms_module.axiom_1, "1-strict": axioms_module.axiom_1_strict, "2": axioms_module.axiom_2,
              "3": axioms_module.axiom_3, "4": axioms_module.axiom_4}
    for metric in METRICS:
        for key, check in checks.items():
            v = check(metric, seed=seed)
            assert shown[metric][key] == {"meets": bool(v), "known": v.known}, (metric, key)


def test_lab_axiom_tables_committed_are_every_seed_computed_now(tmp_path, monkeypatch):
    """A new seed in the browser is a look-up: the committed file holds every seed the slider
    offers, each the table axiom_table computes now; without the file a seed is computed."""
    seed_param = next(p for p in REGISTRY["metric-lab"].params if p.name == "seed")
    assert tuple(metric_lab._committed()) == tuple(metric_lab.SEEDS) == seed_param.values()
    for seed in metric_lab.SEEDS:
        assert metric_lab._committed()[seed] == axioms_module.axiom_table(seed=seed)
    monkeypatch.setattr(metric_lab, "AXIOMS_FILE", tmp_path / "missing.json")
    metric_lab._committed.cache_clear()
    try:
        assert metric_lab._committed() == {}
        assert metric_lab.axioms(4) == axioms_module.axiom_table(seed=4)
    finally:
        metric_lab._committed.cache_clear()


def test_lab_axiom_table_ignores_the_pair():
    a = run("metric-lab", angle=0, decay=0, rank=1)["axioms"]
    assert a == run("metric-lab", angle=77, decay=1.5, order="reversed", rank=4, stretch=1000)["axioms"]


def test_lab_bad_params():
    for bad in ({"angle": 91}, {"rank": 5}, {"order": "sideways"}, {"stretch": 2}, {"decay": -1}):
        refused("metric-lab", bad)

# --- the shipped models: composition-scores and composition-over-training ---------

from headspace.composition import MODES, all_composition_scores  # noqa: E402
from headspace_site.figure import shipped as _shipped  # noqa: E402
from headspace_site.demos.composition_scores import top_pair  # noqa: E402
from headspace.heads import find_pair, head_scores, repeated_tokens  # noqa: E402
from headspace.model import load  # noqa: E402
from headspace.store import list_models  # noqa: E402


@functools.lru_cache(maxsize=None)
def loaded(name, step):
    return load(name, step=step).fold_norm()


def seen(m):
    """The embedding the first layer's heads read: RMS-normalised rows for the RMS model."""
    if m.config["normalization_type"] is None:
        return m.W_E
    return m.W_E / np.sqrt(np.mean(m.W_E ** 2, axis=1, keepdims=True) + m.config.get("eps", 1e-5))


def reference(name, step, mode, metric):
    """all_composition_scores straight from headspace.model.load: no demo cache in the way."""
    m = loaded(name, step)
    kw = {"token": {"W_E": seen(m), "W_U": m.W_U}, "whitened": {"W_E": seen(m)}}.get(metric, {})
    return all_composition_scores(m.W_Q, m.W_K, m.W_V, m.W_O, mode, metric, **kw)


def test_model_options_are_the_manifest():
    names = list_models()
    assert list(_shipped.MODEL_NAMES) == names
    steps = sorted({s for n in names for s in load(n).steps})
    assert list(_shipped.STEP_OPTIONS) == ["final"] + steps
    for demo in ("composition-scores", "composition-over-training"):
        model = next(p for p in REGISTRY[demo].params if p.name == "model")
        assert list(model.options) == names
        assert load(model.default).config["normalization_type"] is None   # the unnormalised model


@pytest.mark.parametrize("name", list_models())
def test_heatmap_scores_are_all_composition_scores_at_every_step(name):
    for step in [None] + list(load(name).steps):
        for mode in MODES:
            for metric in ("frobenius", "svd_bound", "token"):
                out = run("composition-scores", model=name, mode=mode, metric=metric,
                          step="final" if step is None else step)
                want = reference(name, step, mode, metric)
                np.testing.assert_allclose(out["scores"], want, rtol=1e-12, atol=1e-15)
                assert out["top_pair"] == top_pair(want)


@pytest.mark.parametrize("metric", METRICS)
def test_heatmap_every_metric_final(metric):
    for name in list_models():
        for mode in MODES:
            out = run("composition-scores", model=name, mode=mode, metric=metric)
            np.testing.assert_allclose(out["scores"], reference(name, None, mode, metric), rtol=1e-12, atol=1e-15)


def test_top_pair_is_the_argmax_of_later_pairs():
    for metric in METRICS:
        out = run("composition-scores", metric=metric, mode="Q")
        s = np.array(out["scores"])
        l1, h1, l2, h2 = out["top_pair"]
        assert l2 > l1
        later = [s[a, b, c, d] for a, b, c, d in np.ndindex(*s.shape) if c > a]
        assert s[l1, h1, l2, h2] == max(later)


def test_step_between_checkpoints_uses_the_latest_before():
    names = list_models()
    for name in names:
        own = load(name).steps
        for step in _shipped.STEP_OPTIONS[1:]:
            got = _shipped.resolve_step(name, step)
            assert got in own and (got <= step or got == own[0])
            assert not any(got < s <= step for s in own)


def test_heatmap_names_the_two_heads():
    """The title names the two roles (the axes carry bare names, to keep the grid wide on a phone)."""
    fig = REGISTRY["composition-scores"].run({})["figure"]
    prev, ind = _shipped.roles(_shipped.DEFAULT_MODEL)
    title = fig["layout"]["title"]["text"]
    assert f"previous-token head L{prev[0]}H{prev[1]}" in title and f"induction head L{ind[0]}H{ind[1]}" in title, title
    labels = fig["layout"]["xaxis"]["ticktext"] + fig["layout"]["yaxis"]["ticktext"]
    assert all(re.fullmatch(r"L\d+H\d+", x) for x in labels), labels


@pytest.mark.parametrize("name", list_models())
def test_found_heads_agree_with_the_training_log(name):
    """Our probe (numpy forward pass) and the trainer's (torch, another seed) pick the same heads."""
    model = load(name)
    prev, ind = head_scores(model)
    curve = _shipped.curve(name)
    logged_prev, logged_ind = np.array(curve["previous_token_score"][-1]), np.array(curve["induction_score"][-1])
    (l1, h1), (l2, h2) = find_pair(model)
    assert l1 == 0 and l2 == 1
    # the logged scores of our picks are the best, up to near-ties (four induction heads can tie to 0.01)
    assert logged_prev[l1, h1] >= logged_prev[:-1].max() - 0.02
    assert logged_ind[l2, h2] >= logged_ind[1:].max() - 0.02
    np.testing.assert_allclose(prev, logged_prev, atol=0.1)
    np.testing.assert_allclose(ind, logged_ind, atol=0.1)


def test_repeated_tokens_probe():
    t = repeated_tokens(64, 64, batch=3, seed=5)
    assert t.shape == (3, 64) and (t[:, :32] == t[:, 32:]).all()
    assert (t == repeated_tokens(64, 64, batch=3, seed=5)).all()
    with pytest.raises(ValueError, match="repeat their first half"):
        head_scores(load(list_models()[0]), np.arange(8)[None])


@pytest.mark.parametrize("name", list_models())
def test_over_training_is_the_heatmap_at_every_checkpoint(name):
    for mode in MODES:
        out = run("composition-over-training", model=name, mode=mode)
        assert out["steps"] == list(load(name).steps)
        (l1, h1), (l2, h2) = find_pair(load(name))
        assert set(out["scores"]) == set(METRICS) | {"causal"}
        for metric in METRICS:
            want = [reference(name, s, mode, metric)[l1, h1, l2, h2] for s in out["steps"]]
            np.testing.assert_allclose(out["scores"][metric], want, rtol=1e-12, atol=1e-15)


def test_over_training_explicit_heads():
    a = run("composition-over-training", head1="L0H3", head2="L1H0", mode="V")
    s = [reference(_shipped.DEFAULT_MODEL, st, "V", "frobenius")[0, 3, 1, 0] for st in a["steps"]]
    np.testing.assert_allclose(a["scores"]["frobenius"], s, rtol=1e-12)
    (l1, h1), (l2, h2) = find_pair(load(_shipped.DEFAULT_MODEL))
    assert run("composition-over-training", head1=f"L{l1}H{h1}", head2=f"L{l2}H{h2}") == \
        run("composition-over-training")


def test_model_demos_bad_params():
    for demo, bad in (("composition-scores", {"model": "gpt2"}), ("composition-scores", {"step": 7}),
                      ("composition-scores", {"metric": "cosine"}), ("composition-scores", {"mode": "O"}),
                      ("composition-over-training", {"head1": "L1H0"}),
                      ("composition-over-training", {"head2": "L0H0"}),
                      ("composition-over-training", {"head1": "0.1"}),
                      ("composition-over-training", {"mode": "q"})):
        refused(demo, bad)


# --- token-path ------------------------------------------------------------------

from headspace.composition import token_path as library_token_path  # noqa: E402
from headspace.circuits import diagonal_top_fraction as copying_fraction  # noqa: E402


@pytest.mark.parametrize("name", list_models())
@pytest.mark.parametrize("mode", MODES)
def test_token_path_is_the_library_path(name, mode):
    m = loaded(name, None)
    (l1, h1), (l2, h2) = find_pair(load(name))
    A = m.W_V[l1, h1] @ m.W_O[l1, h1]
    B = {"Q": m.W_Q[l2, h2] @ m.W_K[l2, h2].T, "K": m.W_K[l2, h2] @ m.W_Q[l2, h2].T,
         "V": m.W_V[l2, h2] @ m.W_O[l2, h2]}[mode]
    M = seen(m) @ A @ B @ (m.W_U if mode == "V" else seen(m).T)
    np.testing.assert_allclose(library_token_path(A, B, W_E=seen(m), W_U=m.W_U, mode=mode), M, rtol=1e-12)
    out = run("token-path", model=name, mode=mode, tokens=128)
    shown = M.T if mode == "K" else M              # rows: the query token
    assert out["copying_fraction"] == np.mean(np.argmax(shown, axis=1) == np.arange(len(shown)))
    assert out["token_score"] == pytest.approx(reference(name, None, mode, "token")[l1, h1, l2, h2], rel=1e-12)
    z = np.array(REGISTRY["token-path"].run({"model": name, "mode": mode, "tokens": 16})["figure"]["data"][0]["z"])
    np.testing.assert_allclose(z, np.round(shown[:16, :16], 4))


def test_token_path_finds_the_previous_token_head():
    """The faithful K path of the previous-token head into the induction head sends every query
    token's top key to the token itself; no other layer-0 head does, nor the untrained model."""
    prev, ind = find_pair(load(_shipped.DEFAULT_MODEL))
    assert run("token-path")["copying_fraction"] == 1.0
    others = [run("token-path", head1=f"L0H{h}")["copying_fraction"] for h in range(4) if h != prev[1]]
    assert max(others) < 0.25
    assert run("token-path", step=0)["copying_fraction"] < 0.05


def test_copying_fraction_counts_the_diagonal():
    assert copying_fraction(np.eye(4)) == 1.0
    assert copying_fraction(np.ones((3, 3)) - np.eye(3)) == 0.0


def test_token_path_bad_params():
    from headspace_site.demos.token_path import _check_layers    # the two-layer menus cannot reach it
    with pytest.raises(ParameterError, match="Later head \\(reads\\) must be in a later layer than the earlier head; "
                                             "got L1H0 writing and L1H1 reading"):
        _check_layers((1, 0), (1, 1))
    for bad in ({"tokens": 20}, {"mode": "O"}, {"head1": "L1H0"}):
        refused("token-path", bad)


# --- the causal ground truth in the demos --------------------------------------------

from headspace.causal import path_ablation, rank_correlation  # noqa: E402


def test_causal_heatmap_is_path_ablation_on_the_eval_batch():
    out = run("composition-scores", metric="causal", mode="K", step=1200)
    m = loaded(_shipped.DEFAULT_MODEL, 1200)
    want = path_ablation(m, repeated_tokens(128, 64, batch=32, seed=1), "K")
    np.testing.assert_allclose(out["scores"], want, rtol=1e-12, atol=1e-15)


def test_agreement_is_the_rank_correlation_of_the_heatmaps():
    out = run("metric-agreement", mode="V", model=list_models()[1])
    i = out["steps"].index(1200)
    pick = lambda s: np.asarray(s)[0, :, 1, :].ravel()  # noqa: E731  (two layers: every later pair)
    truth = pick(run("composition-scores", model=list_models()[1], mode="V", metric="causal", step=1200)["scores"])
    for metric in METRICS:
        got = pick(run("composition-scores", model=list_models()[1], mode="V", metric=metric, step=1200)["scores"])
        assert out["rank_correlation"][metric][i] == pytest.approx(rank_correlation(got, truth), abs=1e-12)


# --- colour-bar ticks (composition-scores, token-path) -----------------------------------------

def test_colorbar_ticks_mark_the_ends_at_fixed_places_with_labels_of_one_width():
    from headspace_site.figure.style import colorbar_ticks
    for lo, hi in [(0, 0.207), (0, 0.236), (-27.7, 27.7), (-173.4, 173.4), (-2.5, 3.1)]:
        t = colorbar_ticks(lo, hi)
        assert t["tickvals"][0] == lo and t["tickvals"][-1] == hi
        np.testing.assert_allclose(np.diff(t["tickvals"]), (hi - lo) / 4)     # evenly spaced: fixed places
        for v, text in zip(t["tickvals"], t["ticktext"]):
            shown = text.rstrip("\u2007\u2008").replace("\u2212", "-")
            assert float(shown) == pytest.approx(v, abs=0.5001 * 10 ** -max(0, 2 - int(np.floor(np.log10(max(abs(lo), abs(hi)))))))
            # four digit widths and one point width after the sign, whatever the range
            assert sum(c.isdigit() or c == "\u2007" for c in text) == 4 and sum(c in ".\u2008" for c in text) == 1
    fig = REGISTRY["token-path"].run({})["figure"]["data"][0]
    assert fig["colorbar"]["tickvals"][0] == fig["zmin"] and fig["colorbar"]["tickvals"][-1] == fig["zmax"]
    fig = REGISTRY["composition-scores"].run({})["figure"]["data"][0]
    assert fig["colorbar"]["tickvals"][0] == fig["zmin"] and fig["colorbar"]["tickvals"][-1] == fig["zmax"]


@pytest.mark.parametrize("lo,hi,n,name", [(1.0, 1.0, 5, "lo"), (2.0, 1.0, 5, "lo"), (0.0, float("nan"), 5, "hi"),
                                          (0.0, 1.0, 1, "n")])
def test_colorbar_ticks_bad_input_names_the_argument(lo, hi, n, name):
    from headspace_site.figure.style import colorbar_ticks
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        colorbar_ticks(lo, hi, n)
