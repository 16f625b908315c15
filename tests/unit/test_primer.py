"""The primer's library pieces and demos: path expansion, full circuits and the copying score,
per-sequence head scores, and the attention-explorer, path-expansion and circuits demos,
each against a slow obvious reference or an invariant."""

from __future__ import annotations

import itertools

import re

import numpy as np
import pytest

from headspace import circuits, paths
from headspace.weights import embedding_read
from headspace_site.demos import REGISTRY
from headspace_site.figure import shipped as _shipped
from headspace.heads import repeated_span, repeated_tokens, sequence_scores
from headspace.model import cross_entropy, load

MODELS = _shipped.MODEL_NAMES


def run(name, **params):
    return REGISTRY[name].run(params)["outputs"]


# -- path expansion ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("step", [None, 0])
def test_path_terms_sum_to_the_logits(name, step):
    m = load(name, step=step)
    toks = repeated_tokens(128, 64, batch=4, seed=5)
    terms = paths.path_terms(m, toks)
    logits = m.logits(toks)
    total = sum(terms.values())
    assert np.abs(total - logits).max() <= 1e-6 * np.abs(logits).max()
    assert list(terms) == paths.path_labels(2, 4) and len(terms) == 26


def _slow_path_terms(m, toks):
    """Reference for a model without norms: each path written out with explicit loops over heads."""
    logits_pattern = m.attention_patterns(toks)  # [seq] input: [n_layers, n_heads, seq, seq]
    e = m.W_E[toks] + m.W_pos[:len(toks)]
    OV = lambda l, h: m.W_V[l, h] @ m.W_O[l, h]  # noqa: E731
    A = lambda l, h: logits_pattern[l, h]  # noqa: E731
    out = {"direct": e @ m.W_U}
    for l, h in itertools.product(range(2), range(4)):
        out[f"{l}.{h}"] = A(l, h) @ e @ OV(l, h) @ m.W_U
    for h1, h2 in itertools.product(range(4), range(4)):
        out[f"0.{h1}>1.{h2}"] = A(1, h2) @ A(0, h1) @ e @ OV(0, h1) @ OV(1, h2) @ m.W_U
    return out


def test_path_terms_match_a_term_by_term_reference():
    m = load("attn-only-2l")
    toks = repeated_span(128, 3, 6, seed=2)
    fast, slow = paths.path_terms(m, toks), _slow_path_terms(m, toks)
    for label, want in slow.items():
        np.testing.assert_allclose(fast[label], want, rtol=1e-10, atol=1e-10, err_msg=label)


def _random_model(n_layers, norm, seed):
    """A random attention-only model of the shipped shapes with ``n_layers`` layers, biases, and
    (``norm`` "RMS") learned norm scales."""
    from headspace.model import Model
    rng = np.random.default_rng(seed)
    H, M, D, V, C = 4, 64, 16, 128, 64
    cfg = dict(load("attn-only-2l").config, n_layers=n_layers, normalization_type=norm)
    sd = {"embed.W_E": rng.normal(size=(V, M)), "pos_embed.W_pos": 0.3 * rng.normal(size=(C, M)),
          "unembed.W_U": rng.normal(size=(M, V)) / 8, "unembed.b_U": 0.1 * rng.normal(size=V)}
    for l in range(n_layers):
        for x in "QKV":
            sd[f"blocks.{l}.attn.W_{x}"] = rng.normal(size=(H, M, D)) / 8
            sd[f"blocks.{l}.attn.b_{x}"] = 0.1 * rng.normal(size=(H, D))
        sd[f"blocks.{l}.attn.W_O"], sd[f"blocks.{l}.attn.b_O"] = rng.normal(size=(H, D, M)) / 4, 0.1 * rng.normal(size=M)
        if norm:
            sd[f"blocks.{l}.ln1.w"] = 1 + 0.1 * rng.normal(size=M)
    if norm:
        sd["ln_final.w"] = 1 + 0.1 * rng.normal(size=M)
    return Model(cfg, sd)


@pytest.mark.parametrize("n_layers", [1, 3])
@pytest.mark.parametrize("norm", [None, "RMS"])
def test_path_terms_sum_to_the_logits_at_any_depth(n_layers, norm):
    """The last layer's terms are read through each head's d_head-wide maps, the others written out
    as fields: at one layer and at three, with and without a norm, every path is there, in order,
    and the terms add up to the logits."""
    m = _random_model(n_layers, norm, seed=n_layers)
    toks = np.random.default_rng(0).integers(0, 128, size=(2, 20))
    terms = paths.path_terms(m, toks)
    assert list(terms) == paths.path_labels(n_layers, 4)
    logits = m.logits(toks)
    np.testing.assert_allclose(sum(terms.values()), logits, rtol=1e-9, atol=1e-9 * np.abs(logits).max())


def test_path_terms_of_the_last_layer_match_their_fields():
    """A last-layer term is its head's output on the path's field, unembedded: the same numbers as
    writing that field out (here with a norm, whose scales are held fixed)."""
    m = _random_model(2, "RMS", seed=7).fold_norm()
    toks = np.random.default_rng(1).integers(0, 128, size=12)
    terms = paths.path_terms(m, toks)
    resid0 = m.embed(toks[None])
    scale = lambda x: 1 / np.sqrt((x * x).mean(-1, keepdims=True) + m.eps)  # noqa: E731
    A0, _ = m.attend(0, *(m.layer_input(resid0, 0),) * 3)
    field = (A0 @ (resid0 * scale(resid0))[:, None] @ (m.W_V[0] @ m.W_O[0]))[:, 2]  # path 0.2
    resid1 = m.embed(toks[None]) + (A0 @ (resid0 * scale(resid0))[:, None] @ m.W_V[0] @ m.W_O[0]).sum(1) \
        + m.b_O[0] + (m.b_V[0][:, None] @ m.W_O[0]).sum(axis=(0, 1))
    A1, out1 = m.attend(1, *(m.layer_input(resid1, 1),) * 3)
    final = scale(resid1 + out1.sum(1) + m.b_O[1])
    want = ((A1 @ (field * scale(resid1))[:, None] @ m.W_V[1] @ m.W_O[1])[:, 3] * final) @ m.W_U
    np.testing.assert_allclose(terms["0.2>1.3"], want[0], rtol=1e-9, atol=1e-12)


def test_path_terms_refuse_bad_tokens():
    m = load("attn-only-2l")
    with pytest.raises(ValueError, match=r"tokens must be in \[0, d_vocab=128\)"):
        paths.path_terms(m, [1, 200])
    with pytest.raises(ValueError, match="at least 2 positions"):
        paths.ablated_losses(m, [5])


def test_ablated_losses_remove_one_term_at_a_time():
    m = load("attn-only-2l")
    toks = repeated_tokens(128, 16, batch=2, seed=3)
    terms = paths.path_terms(m, toks)
    losses = paths.ablated_losses(m, toks, terms=terms)
    logits = m.logits(toks)
    assert losses["none"] == pytest.approx(float(cross_entropy(logits, toks).mean()))
    assert losses["1.0"] == pytest.approx(float(cross_entropy(logits - terms["1.0"], toks).mean()))


def test_the_induction_pairs_virtual_head_matters_most_on_the_plain_model():
    """The issue asked: removing the induction pair's virtual-head term raises the repeated-half
    loss of attn-only-2l more than removing any other two-head term. It does, by a hair; on the RMS
    model it does not (the primer states both, from scripts/sitebuild/values/primer.py)."""
    from sitebuild.values.primer import virtual_head_effects
    for name, pair_wins in zip(MODELS, (True, False)):
        (l1, h1), (l2, h2) = _shipped.roles(name)
        fx = virtual_head_effects(name)
        pair = f"{l1}.{h1}>{l2}.{h2}"
        others = [v for k, v in fx.items() if ">" in k and k != pair]
        assert (fx[pair] > max(others)) is pair_wins, (name, fx[pair], max(others))
        # the copying itself is in the single layer-1 heads, each worth far more than any virtual head
        assert min(fx[f"1.{h}"] for h in range(4)) > 10 * max(fx[pair], *others)


# -- circuits ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_copying_score_equals_a_dense_eigenvalue_reference(name):
    m = _shipped.weights(name, None)
    W_E = embedding_read(m.W_E, m.config.get("normalization_type"), m.eps)
    for l, h in itertools.product(range(2), range(4)):
        dense = np.linalg.eigvals(W_E @ m.W_V[l, h] @ m.W_O[l, h] @ m.W_U)   # [d_vocab] eigenvalues
        want = dense.sum().real / np.abs(dense).sum()
        got = circuits.copying_score(W_E, m.W_V[l, h], m.W_O[l, h], m.W_U)
        assert got == pytest.approx(want, abs=1e-8)
        assert run("circuits", model=name, head=f"L{l}H{h}")["copying_score"] == pytest.approx(got, abs=1e-12)


def test_full_circuits_are_the_token_space_products():
    rng = np.random.default_rng(0)
    W_E, W_Q, W_K, W_V = (rng.standard_normal(s) for s in ((9, 5), (5, 2), (5, 2), (5, 2)))
    W_O, W_U = rng.standard_normal((2, 5)), rng.standard_normal((5, 9))
    np.testing.assert_allclose(circuits.full_ov_circuit(W_E, W_V, W_O, W_U), W_E @ W_V @ W_O @ W_U)
    np.testing.assert_allclose(circuits.full_qk_circuit(W_E, W_Q, W_K), W_E @ W_Q @ W_K.T @ W_E.T)
    assert np.linalg.matrix_rank(circuits.full_ov_circuit(W_E, W_V, W_O, W_U)) == 2   # at most d_head


def test_circuit_errors_name_the_argument():
    W_E = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"W_V must have shape \[d_model, d_head\] with d_model=3"):
        circuits.full_ov_circuit(W_E, np.ones((5, 2)), np.ones((2, 3)), np.ones((3, 4)))
    with pytest.raises(ValueError, match="d_vocab_out=5"):
        circuits.copying_score(W_E, np.ones((3, 2)), np.ones((2, 3)), np.ones((3, 5)))
    with pytest.raises(ValueError, match="is zero"):
        circuits.copying_score(W_E, np.zeros((3, 2)), np.ones((2, 3)), np.ones((3, 4)))


def test_diag_ranks_count_tokens_whose_own_entry_wins():
    m = _shipped.weights("attn-only-2l", None)
    W_E = embedding_read(m.W_E, m.config.get("normalization_type"), m.eps)
    (l, h) = _shipped.roles("attn-only-2l")[1]
    ov = W_E @ m.W_V[l, h] @ m.W_O[l, h] @ m.W_U
    qk = W_E @ m.W_Q[l, h] @ m.W_K[l, h].T @ W_E.T
    out = run("circuits")
    assert out["ov_diag_rank"] == sum(int(np.argmax(row) == i) for i, row in enumerate(ov)) / len(ov)
    assert out["qk_diag_rank"] == sum(int(np.argmax(row) == i) for i, row in enumerate(qk)) / len(qk)



def _structure(fig: dict):
    """What of a figure plotly must draw anew when it changes: everything but data and texts."""
    lay = {k: v for k, v in fig["layout"].items() if k not in ("title", "annotations")}
    notes = [{k: v for k, v in a.items() if k != "text"} for a in fig["layout"]["annotations"]]
    traces = [(t["type"], t.get("xaxis"), t.get("yaxis"), t["name"], t.get("hovertemplate")) for t in fig["data"]]
    return lay, notes, traces


@pytest.mark.parametrize("name", MODELS)
def test_circuits_every_head_has_the_same_panels_and_axes(name):
    """Switching heads (layer 0 or 1) changes only data and texts, so the page redraws in place."""
    figs = {head: REGISTRY["circuits"].run({"head": head, "model": name})["figure"]
            for head in REGISTRY["circuits"].params[0].options}
    first = _structure(next(iter(figs.values())))
    assert all(_structure(f) == first for f in figs.values())


@pytest.mark.parametrize("name", MODELS)
def test_circuits_eigenvalues_are_drawn_over_the_largest_size_which_the_title_states(name):
    for l, h in [(0, 1), (1, 2)]:
        fig = REGISTRY["circuits"].run({"head": f"L{l}H{h}", "model": name})["figure"]
        eig = next(t for t in fig["data"] if t["name"] == "eigenvalue")
        m = _shipped.weights(name, None)
        want = circuits.ov_eigenvalues(embedding_read(m.W_E, m.config.get("normalization_type"), m.eps), m.W_V[l, h], m.W_O[l, h], m.W_U)
        got = np.array(eig["customdata"]) @ [1, 1j]          # the hover: each eigenvalue itself
        np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), atol=1e-4)
        largest = np.abs(want).max()
        np.testing.assert_allclose(np.array(eig["x"]) + 1j * np.array(eig["y"]), got / largest, atol=2e-4)
        assert max(np.hypot(eig["x"], eig["y"])) == pytest.approx(1, abs=2e-4)
        assert fig["layout"]["xaxis3"]["range"] == [-1.1, 1.1]
        assert f"largest |λ| {largest:.3g}" in " ".join(a["text"] for a in fig["layout"]["annotations"])


def test_circuits_texts_keep_their_lines_from_head_to_head():
    """Every head's figure has the same lines of text (title and notes), so a move between heads
    keeps the drawing's elements and is written into it in place (figure/draw.js) at every drawing width."""
    from headspace_site.figure.fit import WIDTHS, fit
    for width in WIDTHS:
        lines = {h: [t.count("<br>") for t in [f["layout"]["title"]["text"]] + [a["text"] for a in f["layout"]["annotations"]]]
                 for h in REGISTRY["circuits"].params[0].options
                 for f in [fit(REGISTRY["circuits"].run({"head": h})["figure"], width)]}
        assert len(set(map(tuple, lines.values()))) == 1, (width, lines)


def test_circuits_layer_0_head_has_a_blank_path_panel_and_says_why():
    fig = REGISTRY["circuits"].run({"head": "L0H1"})["figure"]
    path = next(t for t in fig["data"] if t["name"] == "token path")
    assert all(v is None for row in path["z"] for v in row) and path["hoverongaps"] is False
    assert fig["layout"]["annotations"][0]["text"] == "layer 0:<br>no earlier<br>head to read"
    fig = REGISTRY["circuits"].run({"head": "L1H2", "writer": "L0H1", "mode": "K"})["figure"]
    path = next(t for t in fig["data"] if t["name"] == "token path")
    from headspace_site.demos.token_path import map_scale, path_matrix
    shown = path_matrix("attn-only-2l", None, "K", (0, 1), (1, 2))[:32, :32]   # drawn over its scale, as titled
    np.testing.assert_allclose(path["z"], np.round(shown / map_scale(shown), 3))
    assert f"path scale {map_scale(shown):.3g}" in " ".join(a["text"] for a in fig["layout"]["annotations"])
    assert fig["layout"]["annotations"][0]["text"].replace("\u00a0", "").replace("<br>", "") == ""

def test_circuits_gates_the_path_controls_by_each_models_measured_roles():
    """The heads whose path controls act are decided at import without weights (circuits.py):
    the same heads as each shipped model's roles, found on its weights, give."""
    from headspace_site.demos import circuits as demo
    later = [h for h in demo.ALL_HEADS if any(_shipped.parse_head(h, m)[0] > 0 for m in _shipped.MODEL_NAMES)]
    assert demo._LATER_HEADS == later
    assert _shipped.INDUCTION in later and _shipped.PREV not in later


def test_importing_circuits_loads_no_model():
    """A page's boot imports its demos before any figure asks for a model: loading both models
    there took most of the circuits module's import in Pyodide (docs/decisions/0011)."""
    import subprocess
    import sys
    code = ("import headspace_site.runtime as r; r.import_demos(['headspace_site.demos.circuits']); "
            "from headspace_site.figure import shipped; print(shipped._final.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


# -- attention explorer --------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_explorer_patterns_equal_the_models(name):
    text = "3 1 4 1 5 9 2 6 5 3 5 8 9 7 9 3 1 4 1 5"
    out = run("attention-explorer", tokens=text, model=name, step=600)
    toks = [int(t) for t in text.split()]
    m = _shipped.weights(name, _shipped.resolve_step(name, 600))
    np.testing.assert_allclose(out["patterns"], m.attention_patterns(toks), atol=5e-7)
    np.testing.assert_allclose(out["loss"], m.loss_per_token(toks), atol=5e-7)
    prev, ind = sequence_scores(m.attention_patterns(toks), toks)
    np.testing.assert_allclose(out["prev_token_scores"], prev, atol=5e-7)
    np.testing.assert_allclose(out["induction_scores"], ind, atol=5e-7)


def test_explorer_shows_previous_token_and_induction_heads_on_a_repeat():
    out = run("attention-explorer")
    (l1, h1), (l2, h2) = _shipped.roles("attn-only-2l")
    assert out["prev_token_scores"][l1][h1] > 0.9
    assert min(out["induction_scores"][1]) > 0.5 and max(out["induction_scores"][0]) < 0.1


def test_sequence_scores_reduce_to_head_scores_on_a_repeat_of_distinct_tokens():
    m = load("attn-only-2l")
    toks = np.concatenate([np.arange(20, 40), np.arange(20, 40)])   # no token repeats within a half
    from headspace.heads import head_scores
    prev, ind = head_scores(m, toks[None])
    p2, i2 = sequence_scores(m.attention_patterns(toks), toks)
    np.testing.assert_allclose(p2, prev, atol=1e-12)
    # head_scores averages queries T..2T-1; sequence_scores the queries with an earlier copy: the same ones
    np.testing.assert_allclose(i2, ind, atol=1e-12)


def test_sequence_scores_are_zero_without_a_repeat():
    p = np.full((1, 1, 3, 3), 1 / 3)
    assert sequence_scores(p, [1, 2, 3])[1].tolist() == [[0.0]]


@pytest.mark.parametrize("text, message", [
    ("1 2 x", "token 3 must be a whole number from 0 to 127; got 'x'"),
    ("1 200", "token 2 must be from 0 to 127; got 200"),
    ("7", "must hold from 2 to 64 tokens; got 1"),
    (" ".join(["1"] * 65), "must hold from 2 to 64 tokens; got 65"),
    ("1.5 2", "token 1 must be a whole number"),
])
@pytest.mark.parametrize("demo", ["attention-explorer", "path-expansion"])
def test_bad_token_text_names_the_token(demo, text, message):
    with pytest.raises(ValueError, match="^Tokens:? " + re.escape(message)):   # the control's label
        REGISTRY[demo].run({"tokens": text})


def test_token_text_accepts_commas_and_lists():
    a = run("attention-explorer", tokens="5, 9,2 7")
    b = run("attention-explorer", tokens=[5, 9, 2, 7])
    assert a == b


# -- path-expansion demo --------------------------------------------------------------------------

@pytest.mark.parametrize("name", MODELS)
def test_demo_terms_sum_to_the_correct_logit(name):
    text = _shipped.default_tokens()
    toks = [int(t) for t in text.split()]
    for position in (0, 7, 18, 22, 40):
        out = run("path-expansion", model=name, position=position, tokens=text)
        i = min(position, len(toks) - 2)
        logit = _shipped.weights(name, None).logits(toks)[i, toks[i + 1]]
        assert sum(out["terms"].values()) == pytest.approx(logit, rel=1e-6)
        assert out["ablated_loss"]["none"] == pytest.approx(
            float(cross_entropy(_shipped.weights(name, None).logits(toks), np.array(toks))[i]), rel=1e-9)
        assert set(out["ablated_loss"]) == set(out["terms"]) | {"none"}


@pytest.mark.parametrize("name", MODELS)
def test_demo_ablated_losses_remove_one_term_each(name):
    """Each loss the demo prints is the model's loss at that position with that one term taken out
    of the whole sequence's path expansion (the demo expands the sequence without its last token,
    which no position it shows reads, and takes all 27 losses at once)."""
    text = _shipped.default_tokens()
    toks = np.array([int(t) for t in text.split()])
    m = _shipped.weights(name, None)
    terms = paths.path_terms(m, toks)
    logits = sum(terms.values())
    for position in (0, 11, len(toks) - 2):
        out = run("path-expansion", model=name, position=position, tokens=text)["ablated_loss"]
        for label, term in terms.items():
            want = float(cross_entropy(logits - term, toks)[position])
            assert out[label] == pytest.approx(want, rel=1e-9), (position, label)


def test_path_ablation_over_chosen_positions_averages_to_the_whole():
    """causal.path_ablation(positions=...) averages the same per-position effects over fewer positions."""
    from headspace.causal import path_ablation
    m = load("attn-only-2l")
    toks = repeated_tokens(128, 16, batch=3, seed=4)
    n, k = toks.shape[1] - 1, 6
    whole = path_ablation(m, toks, "K")
    head, tail = path_ablation(m, toks, "K", positions=slice(0, k)), path_ablation(m, toks, "K", positions=slice(k, None))
    np.testing.assert_allclose(whole, (k * head + (n - k) * tail) / n, atol=1e-12)


def test_a_positive_diagonal_does_not_make_eigenvalues_positive():
    """Primer: a positive diagonal fixes the sign of the trace (the eigenvalues' sum), not of each
    eigenvalue; the copying score of such a map is below 1."""
    M = np.array([[1.0, 2.0], [2.0, 1.0]])
    lam = np.linalg.eigvals(M)
    np.testing.assert_allclose(sorted(lam.real), [-1.0, 3.0], atol=1e-12)
    assert np.trace(M) == pytest.approx(lam.sum().real)
    assert lam.real.sum() / np.abs(lam).sum() == pytest.approx(0.5)


def test_rms_path_terms_freeze_the_norm_scales():
    """Primer: in the RMS model the expansion holds each norm's per-position scale at its forward
    value, so the terms (patterns and scales frozen) add up to the model's logits exactly."""
    name = _shipped.MODEL_NAMES[1]
    m = _shipped.weights(name, None)
    assert m.config.get("normalization_type") is not None
    toks = _shipped.eval_batch(name)[:4]
    terms = paths.path_terms(m, toks)
    logits = m.logits(toks)
    np.testing.assert_allclose(sum(terms.values()), logits, rtol=1e-9, atol=1e-9 * np.abs(logits).max())
