"""headspace.model: the numpy forward pass and the loader, on small random models
written to a temporary directory (independent of the shipped weights).

The forward pass is checked against a slow reference written with explicit
loops over positions and heads, and against invariants (causality, rows of
the attention pattern sum to 1, folding the norm changes nothing).
"""

import hashlib
import json
import math
import shutil

import numpy as np
import pytest

from headspace import model as hm
from headspace import store

CFG = dict(n_layers=2, d_model=12, n_heads=3, d_head=4, d_vocab=11, d_vocab_out=11, n_ctx=9,
           attn_only=True, positional_embedding_type="standard", act_fn=None, eps=1e-5)


def random_state(cfg, seed, dtype=np.float32):
    """A TransformerLens-style state dict with random weights, biases and norm scales."""
    rng = np.random.default_rng(seed)
    L, H, M, D, V, C = (cfg[k] for k in ("n_layers", "n_heads", "d_model", "d_head", "d_vocab", "n_ctx"))
    r = lambda *shape: rng.normal(0, 0.5, shape).astype(dtype)  # noqa: E731
    state = {"embed.W_E": r(V, M), "pos_embed.W_pos": r(C, M), "unembed.W_U": r(M, V), "unembed.b_U": r(V)}
    for l in range(L):
        for x in "QKV":
            state[f"blocks.{l}.attn.W_{x}"] = r(H, M, D)
            state[f"blocks.{l}.attn.b_{x}"] = r(H, D)
        state[f"blocks.{l}.attn.W_O"] = r(H, D, M)
        state[f"blocks.{l}.attn.b_O"] = r(M)
        if cfg["normalization_type"] == "RMS":
            state[f"blocks.{l}.ln1.w"] = (1 + r(M)).astype(dtype)
    if cfg["normalization_type"] == "RMS":
        state["ln_final.w"] = (1 + r(M)).astype(dtype)
    return state


def write_manifest(root):
    """(Re)write root/manifest.json with the sha256 and size of every file of every model."""
    models = {}
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        files = {f.name: {"sha256": hashlib.sha256(f.read_bytes()).hexdigest(), "bytes": f.stat().st_size}
                 for f in sorted(d.iterdir())}
        models[d.name] = {"files": files, "checkpoint_steps": [0, 5]}
    (root / "manifest.json").write_text(json.dumps({"models": models}))


@pytest.fixture
def models(tmp_path):
    """Two random models under tmp_path/models, one without norm and one with RMSNorm, with a manifest."""
    root = tmp_path / "models"
    for name, norm in (("plain", None), ("rms", "RMS")):
        cfg = dict(CFG, normalization_type=norm, model_name=name)
        d = root / name
        d.mkdir(parents=True)
        (d / "config.json").write_text(json.dumps(cfg))
        np.savez(d / "weights.npz", **random_state(cfg, seed=1))
        ckpt = {f"step_{s}/{k}": v for s in (0, 5) for k, v in random_state(cfg, seed=s, dtype=np.float16).items()}
        np.savez(d / "checkpoints.npz", **ckpt)
    write_manifest(root)
    return root


def reference_forward(m, tokens):
    """Slow, obvious forward pass for one sequence: loops over layers, heads and positions."""
    cfg = m.config
    seq = len(tokens)
    resid = [m.W_E[t] + m.W_pos[i] for i, t in enumerate(tokens)]

    def norm(x, w):
        if cfg["normalization_type"] is None:
            return x
        return x / math.sqrt(sum(float(v) ** 2 for v in x) / len(x) + cfg["eps"]) * (1 if w is None else w)

    patterns = np.zeros((cfg["n_layers"], cfg["n_heads"], seq, seq))
    for l in range(cfg["n_layers"]):
        xs = [norm(r, None if m.ln1_w is None else m.ln1_w[l]) for r in resid]
        new = [r + m.b_O[l] for r in resid]
        for h in range(cfg["n_heads"]):
            for i in range(seq):
                q = xs[i] @ m.W_Q[l, h] + m.b_Q[l, h]
                scores = [q @ (xs[j] @ m.W_K[l, h] + m.b_K[l, h]) / math.sqrt(cfg["d_head"]) for j in range(i + 1)]
                e = [math.exp(s - max(scores)) for s in scores]
                for j in range(i + 1):
                    a = e[j] / sum(e)
                    patterns[l, h, i, j] = a
                    new[i] = new[i] + a * ((xs[j] @ m.W_V[l, h] + m.b_V[l, h]) @ m.W_O[l, h])
        resid = new
    logits = np.array([norm(r, m.ln_final_w) @ m.W_U + m.b_U for r in resid])
    return logits, patterns


@pytest.mark.parametrize("name", ["plain", "rms"])
def test_forward_matches_slow_reference(models, name):
    m = hm.load(models / name)
    tokens = [3, 0, 10, 3, 7, 7, 1, 2, 9]
    logits, patterns = m.run(tokens)
    ref_logits, ref_patterns = reference_forward(m, tokens)
    np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=1e-10)
    np.testing.assert_allclose(patterns, ref_patterns, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["plain", "rms"])
def test_shapes_single_and_batched(models, name):
    m = hm.load(models / name)
    assert m.logits([1, 2, 3]).shape == (3, 11)
    assert m.attention_patterns([1, 2, 3]).shape == (2, 3, 3, 3)
    batch = np.random.default_rng(0).integers(0, 11, (4, 9))
    logits, patterns = m.run(batch)
    assert logits.shape == (4, 9, 11) and patterns.shape == (4, 2, 3, 9, 9)
    assert logits.dtype == np.float64
    for b in range(4):  # a batch is the same as its sequences one at a time
        np.testing.assert_allclose(logits[b], m.logits(batch[b]), atol=1e-12)
        np.testing.assert_allclose(patterns[b], m.attention_patterns(batch[b]), atol=1e-12)
    assert m.loss_per_token(batch).shape == (4, 8)


@pytest.mark.parametrize("name", ["plain", "rms"])
def test_attention_is_causal_and_rows_sum_to_one(models, name):
    m = hm.load(models / name)
    tokens = np.random.default_rng(1).integers(0, 11, (3, 9))
    p = m.attention_patterns(tokens)
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)
    assert np.all(np.triu(p, k=1) == 0)  # no query attends to a later key
    # changing the last token changes no earlier logit
    changed = tokens.copy()
    changed[:, -1] = (changed[:, -1] + 1) % 11
    np.testing.assert_array_equal(m.logits(changed)[:, :-1], m.logits(tokens)[:, :-1])


def test_first_position_attends_only_to_itself(models):
    p = hm.load(models / "plain").attention_patterns([4, 5])
    np.testing.assert_array_equal(p[:, :, 0, 0], 1.0)


def test_loss_per_token_is_cross_entropy(models):
    m = hm.load(models / "rms")
    tokens = [1, 2, 3, 4]
    logits = m.logits(tokens)
    want = [np.log(np.exp(logits[t]).sum()) - logits[t, tokens[t + 1]] for t in range(3)]
    np.testing.assert_allclose(m.loss_per_token(tokens), want, atol=1e-12)


def test_fold_norm_keeps_the_function(models):
    m = hm.load(models / "rms")
    f = m.fold_norm()
    assert f.config["normalization_type"] == "RMSPre" and f.ln1_w is None
    assert m.config["normalization_type"] == "RMS" and m.ln1_w is not None  # original untouched
    tokens = np.random.default_rng(2).integers(0, 11, (2, 9))
    np.testing.assert_allclose(f.logits(tokens), m.logits(tokens), atol=1e-12)
    np.testing.assert_allclose(f.W_K[1, 2], m.ln1_w[1][:, None] * m.W_K[1, 2])
    plain = hm.load(models / "plain")
    np.testing.assert_array_equal(plain.fold_norm().W_Q, plain.W_Q)


@pytest.mark.parametrize("norm", [None, "RMS", "LN", "LNPre"])
def test_the_forward_pass_and_the_scores_read_and_fold_a_state_dict_alike(norm):
    """One reader and one fold (headspace._state_dict): the forward pass's ``Model.fold_norm`` and the
    scores' ``weights.from_state_dict`` and ``from_model`` give the same readers, to the bit, and
    folding keeps the function (LNPre's readers centred too: LayerNorm's output has mean 0)."""
    from headspace import weights
    cfg = dict(CFG, normalization_type=norm)
    state = random_state(dict(cfg, normalization_type="RMS"), 7, dtype=np.float64)
    rng = np.random.default_rng(8)
    for key in [k for k in state if k.endswith("ln1.w")] + ["ln_final.w"]:
        if norm == "LN":
            state[key[:-1] + "b"] = rng.normal(0, 0.3, state[key].shape)
        elif norm != "RMS":
            del state[key]
    m = hm.Model(cfg, state)
    f = m.fold_norm()
    for w in (weights.from_state_dict(state, cfg), weights.from_model(m)):
        for name in ("W_Q", "W_K", "W_V", "W_U"):
            np.testing.assert_array_equal(getattr(w, name), getattr(f, name), err_msg=name)
        assert w.normalization_type == f.config.get("normalization_type")
    tokens = rng.integers(0, cfg["d_vocab"], (2, cfg["n_ctx"]))
    np.testing.assert_allclose(f.logits(tokens), m.logits(tokens), atol=1e-12)


def test_weights_have_transformerlens_layout(models):
    m = hm.load(models / "rms")
    assert m.W_E.shape == (11, 12) and m.W_pos.shape == (9, 12)
    assert m.W_Q.shape == m.W_K.shape == m.W_V.shape == (2, 3, 12, 4)
    assert m.W_O.shape == (2, 3, 4, 12) and m.b_O.shape == (2, 12) and m.b_Q.shape == (2, 3, 4)
    assert m.W_U.shape == (12, 11) and m.b_U.shape == (11,)
    assert m.ln1_w.shape == (2, 12) and m.ln_final_w.shape == (12,)
    raw = np.load(models / "rms" / "weights.npz")
    np.testing.assert_array_equal(m.W_V[1], raw["blocks.1.attn.W_V"])
    assert hm.load(models / "plain").ln1_w is None
    assert m.step is None and m.steps == (0, 5)
    assert "rms" in repr(m) and "final" in repr(m)


def test_checkpoints(models):
    m = hm.load(models / "plain", step=5)
    assert m.step == 5 and m.steps == (0, 5)
    raw = np.load(models / "plain" / "checkpoints.npz")["step_5/blocks.0.attn.W_O"]
    np.testing.assert_array_equal(m.W_O[0], raw.astype(np.float64))
    assert hm.load(models / "plain", step=np.int64(0)).step == 0
    with pytest.raises(ValueError, match=r"step must be one of the checkpoint steps \[0, 5\]; got 3"):
        hm.load(models / "plain", step=3)
    for bad in (True, 1.0, "5"):
        with pytest.raises(ValueError, match="step must be an integer"):
            hm.load(models / "plain", step=bad)


BAD_TOKENS = [
    ([0, 11], r"tokens must be in \[0, d_vocab=11\); got 11 at index \(1,\)"),
    ([[1, 2], [-1, 0]], r"got -1 at index \(1, 0\)"),
    (list(range(10)), r"at most n_ctx=9 positions; got seq=10"),
    ([1.0, 2.0], "tokens must be integer token ids; got dtype float64"),
    (np.array([1, 2], dtype=np.float32), "got dtype float32"),
    ([True, False], "got dtype bool"),
    (np.int64(3), r"shape \[seq\] or \[batch, seq\]; got \[\]"),
    (np.zeros((1, 2, 3), dtype=int), r"got \[1, 2, 3\]"),
    (np.zeros(0, dtype=int), "must not be empty"),
    ([], r"tokens must not be empty; got shape \[0\]"),
    ("abc", "got a string"),
    ([[1, 2], [3]], r"\[seq\] or \[batch, seq\] array of integers"),
    ([1, None], "got dtype object"),
]


@pytest.mark.parametrize("tokens, message", BAD_TOKENS)
def test_bad_tokens_raise(models, tokens, message):
    m = hm.load(models / "plain")
    for method in (m.logits, m.attention_patterns, m.loss_per_token):
        with pytest.raises(ValueError, match=message):
            method(tokens)


def test_uint8_tokens_are_fine(models):
    m = hm.load(models / "plain")
    np.testing.assert_array_equal(m.logits(np.array([1, 2], dtype=np.uint8)), m.logits([1, 2]))


def copy_models(models, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(models, dst)
    return dst


@pytest.mark.parametrize("filename", ["weights.npz", "config.json", "checkpoints.npz"])
def test_checksum_mismatch(models, tmp_path, filename):
    root = copy_models(models, tmp_path)
    path = root / "plain" / filename
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1  # one flipped bit
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"checksum mismatch for .*plain/{filename}: manifest sha256 [0-9a-f]{{64}}"):
        hm.load(root / "plain", step=0 if filename == "checkpoints.npz" else None)
    hm.load(root / "rms")  # the other model is fine


def test_corrupt_npz(models, tmp_path):
    root = copy_models(models, tmp_path)
    path = root / "plain" / "weights.npz"
    path.write_bytes(path.read_bytes()[:200])  # truncated
    with pytest.raises(ValueError, match="checksum mismatch"):
        hm.load(root / "plain")
    write_manifest(root)  # a manifest that agrees with the broken file: the parse must still fail
    with pytest.raises(ValueError, match=r"weights.npz is not a readable .npz file"):
        hm.load(root / "plain")
    with pytest.raises(ValueError, match=r"weights.npz is not a readable .npz file"):
        hm.load(root / "plain", verify=False)


def test_corrupt_config(models, tmp_path):
    root = copy_models(models, tmp_path)
    (root / "plain" / "config.json").write_text("{not json")
    write_manifest(root)
    with pytest.raises(ValueError, match="config.json is not valid JSON"):
        hm.load(root / "plain")


def test_missing_files(models, tmp_path):
    root = copy_models(models, tmp_path)
    (root / "plain" / "weights.npz").unlink()
    with pytest.raises(ValueError, match=r"model file .*plain/weights.npz is missing"):
        hm.load(root / "plain")
    (root / "manifest.json").unlink()
    with pytest.raises(ValueError, match="no manifest at .*manifest.json"):
        hm.load(root / "rms")
    hm.load(root / "rms", verify=False)  # without a manifest, on request
    with pytest.raises(ValueError, match="path must be a model directory"):
        hm.load(root / "nothing-here")


def test_model_not_in_manifest(models, tmp_path):
    root = copy_models(models, tmp_path)
    shutil.copytree(root / "plain", root / "extra")
    with pytest.raises(ValueError, match=r"model 'extra' is not in .*manifest.json; it lists \['plain', 'rms'\]"):
        hm.load(root / "extra")


@pytest.mark.parametrize("change, message", [
    (lambda c, s: c.update(attn_only="no"), "config\\['attn_only'\\] must be true or false"),
    (lambda c, s: c.update(attn_only=False), "config\\['act_fn'\\] must be one of \\['relu'\\]"),
    (lambda c, s: c.update(normalization_type="BatchNorm"), "normalization_type'\\] must be one of"),
    (lambda c, s: c.update(normalization_type="LN"), "weights must include 'blocks.0.ln1.w'"),
    (lambda c, s: c.update(d_head=0), "config\\['d_head'\\] must be a positive integer; got 0"),
    (lambda c, s: s.pop("blocks.1.attn.W_K"), "weights must include 'blocks.1.attn.W_K' with shape \\[3, 12, 4\\]"),
    (lambda c, s: s.update({"unembed.W_U": s["unembed.W_U"][:, :5]}), r"unembed.W_U must have shape \[12, 11\]; got \[12, 5\]"),
    (lambda c, s: s["embed.W_E"].__setitem__((0, 0), np.nan), "embed.W_E must be finite; got nan at index \\(0, 0\\)"),
])
def test_bad_config_or_weights(change, message):
    cfg = dict(CFG, normalization_type=None)
    state = random_state(cfg, seed=0)
    change(cfg, state)
    with pytest.raises(ValueError, match=message):
        hm.Model(cfg, state)


def test_models_dir_and_list_models(models, monkeypatch, tmp_path):
    monkeypatch.setenv("HEADSPACE_MODELS", str(models))
    assert store.models_dir() == models
    assert store.list_models() == ["plain", "rms"]
    assert hm.load("rms").name == "rms"  # a bare name resolves in models_dir()
    with pytest.raises(ValueError, match=r"shipped model name \['plain', 'rms'\]; got 'nope'"):
        hm.load("nope")
    monkeypatch.setenv("HEADSPACE_MODELS", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="no manifest.json in .*empty \\(from \\$HEADSPACE_MODELS\\)"):
        store.models_dir()


def test_load_checkpoints_equals_loading_each_step():
    """One read of the checkpoint file gives the same weights as load(name, step) per step."""
    from headspace.model import load, load_checkpoints
    every = load_checkpoints("attn-only-2l")
    assert list(every) == sorted(every) and 0 in every
    for step in (0, max(every)):
        one = load("attn-only-2l", step=step)
        assert every[step].step == step and every[step].steps == one.steps
        np.testing.assert_array_equal(every[step].W_Q, one.W_Q)
        np.testing.assert_array_equal(every[step].W_U, one.W_U)
