"""headspace.checkpoint: each layout read into TransformerLens's, against the layout's own forward pass.

The reference here is written from each architecture's attention as its library computes it (GPT-2's
Conv1D and fused c_attn, GPT-NeoX's per-head interleaved query_key_value, Llama's separate
projections with grouped keys and values), on tensors loaded by the ``safetensors`` package's own
numpy loader: the heads we read must compute the same queries, keys, values and outputs, through
the norm we fold.
"""

import json

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from headspace import checkpoint as ckp
from headspace import pair_scores
from headspace.cli import main
from headspace.safetensors_file import BytesSource, SafetensorsFile, to_bytes
from headspace.weights import from_state_dict

LAYOUTS = {
    "gpt2": dict(n_layers=3, n_heads=4, d_model=32),
    "gpt_neox": dict(n_layers=2, n_heads=4, d_model=32),
    "llama": dict(n_layers=2, n_heads=4, d_model=32, n_kv_heads=2),
    "mistral": dict(n_layers=2, n_heads=8, d_model=32, n_kv_heads=2),
    "qwen2": dict(n_layers=2, n_heads=4, d_model=24, n_kv_heads=4),
    "transformer_lens": dict(n_layers=2, n_heads=4, d_model=32, n_kv_heads=2),
}


def folder(tmp_path, arch, seed=0, dtype="F32", **overrides):
    config = ckp.example_config(arch, **{**LAYOUTS[arch], **overrides})
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "config.json").write_text(json.dumps(config))
    ckp.write_example(tmp_path / "model.safetensors", config, seed=seed, dtype=dtype)
    return tmp_path, config


def per_head(arch, config, raw, l, x, z):
    """Reference: queries, keys, values [H, n, D] of the *normalised and scaled* input ``x`` and each head's
    output of ``z`` [H, n, D], computed as the architecture's own code does, from raw tensors."""
    if arch == "gpt2":
        M, H = config["n_embd"], config["n_head"]
        D = M // H
        p = f"transformer.h.{l}."
        qkv = x @ raw[p + "attn.c_attn.weight"]                     # Conv1D: x @ W
        q, k, v = (qkv[:, i * M:(i + 1) * M].reshape(-1, H, D).transpose(1, 0, 2) for i in range(3))
        merged = z.transpose(1, 0, 2).reshape(len(x), H * D)        # merge_heads: head-major
        parts = [merged[:, h * D:(h + 1) * D] @ raw[p + "attn.c_proj.weight"][h * D:(h + 1) * D] for h in range(H)]
        return q, k, v, np.stack(parts)
    if arch == "gpt_neox":
        M, H = config["hidden_size"], config["num_attention_heads"]
        D = M // H
        p = f"gpt_neox.layers.{l}.attention."
        qkv = (x @ raw[p + "query_key_value.weight"].T).reshape(len(x), H, 3 * D)
        q, k, v = (qkv[..., i * D:(i + 1) * D].transpose(1, 0, 2) for i in range(3))
        W = raw[p + "dense.weight"]
        return q, k, v, np.stack([z[h] @ W[:, h * D:(h + 1) * D].T for h in range(H)])
    if arch in ("llama", "mistral", "qwen2"):
        M, H = config["hidden_size"], config["num_attention_heads"]
        K, D = config["num_key_value_heads"], M // H
        p = f"model.layers.{l}.self_attn."
        q = (x @ raw[p + "q_proj.weight"].T).reshape(len(x), H, D).transpose(1, 0, 2)
        k, v = ((x @ raw[p + n].T).reshape(len(x), K, D).transpose(1, 0, 2) for n in ("k_proj.weight", "v_proj.weight"))
        k, v = (np.stack([t[h // (H // K)] for h in range(H)]) for t in (k, v))     # repeat_kv
        W = raw[p + "o_proj.weight"]
        return q, k, v, np.stack([z[h] @ W[:, h * D:(h + 1) * D].T for h in range(H)])
    H, K = config["n_heads"], config["n_key_value_heads"] or config["n_heads"]
    p = f"blocks.{l}.attn."
    g = "_" if K != H else ""
    q = np.einsum("nm,hmd->hnd", x, raw[p + "W_Q"])
    k, v = (np.repeat(np.einsum("nm,hmd->hnd", x, raw[p + g + n]), H // K, axis=0) for n in ("W_K", "W_V"))
    return q, k, v, np.einsum("hnd,hdm->hnm", z, raw[p + "W_O"])


def ln1_name(arch, l):
    return {"gpt2": f"transformer.h.{l}.ln_1.weight", "gpt_neox": f"gpt_neox.layers.{l}.input_layernorm.weight",
            "transformer_lens": f"blocks.{l}.ln1.w"}.get(arch, f"model.layers.{l}.input_layernorm.weight")


@pytest.mark.parametrize("arch", LAYOUTS)
def test_each_layout_computes_what_its_architecture_computes(tmp_path, arch):
    path, config = folder(tmp_path, arch)
    raw = load_file(str(path / "model.safetensors"))               # the safetensors package's loader
    ck = ckp.open_checkpoint(path)
    w = ck.weights()
    rms = arch in ("llama", "mistral", "qwen2")
    assert ck.named_by == "config.json" and w.normalization_type == ("RMSPre" if rms else "LNPre")
    rng = np.random.default_rng(1)
    M, H, D = ck.d_model, ck.n_heads, ck.d_head
    x = rng.standard_normal((5, M))
    n = x / np.sqrt((x * x).mean(-1, keepdims=True)) if rms else \
        (x - x.mean(-1, keepdims=True)) / (x - x.mean(-1, keepdims=True)).std(-1, keepdims=True)
    z = rng.standard_normal((H, 5, D))
    for l in range(ck.n_layers):
        scaled = n * raw[ln1_name(arch, l)]                         # the norm's output, bias left out
        q, k, v, out = per_head(arch, config, raw, l, scaled, z)
        for name, want in (("W_Q", q), ("W_K", k), ("W_V", v)):
            got = np.einsum("nm,hmd->hnd", n, getattr(w, name)[l])     # folded: reads the bare normalised stream
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} layer {l}")
        np.testing.assert_allclose(np.einsum("hnd,hdm->hnm", z, w.W_O[l]), out, rtol=1e-5, atol=1e-6)


def test_transformer_lens_keys_equal_from_state_dict(tmp_path):
    path, config = folder(tmp_path, "transformer_lens")
    state = load_file(str(path / "model.safetensors"))
    want = from_state_dict(state, config)
    got = ckp.open_checkpoint(path).weights(embeddings=True)
    for field in ("W_Q", "W_K", "W_V", "W_O", "W_E", "W_pos", "W_U"):
        np.testing.assert_allclose(getattr(got, field), getattr(want, field), rtol=1e-6, atol=1e-7, err_msg=field)
    assert got.normalization_type == want.normalization_type == "LNPre"


def test_gpt2_tied_unembedding_and_final_norm(tmp_path):
    path, config = folder(tmp_path, "gpt2")
    raw = load_file(str(path / "model.safetensors"))
    w = ckp.open_checkpoint(path).weights(embeddings=True)
    U = raw["transformer.ln_f.weight"][:, None] * raw["transformer.wte.weight"].T
    np.testing.assert_allclose(w.W_U, U - U.mean(0), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(w.W_E, raw["transformer.wte.weight"])
    np.testing.assert_array_equal(w.W_pos, raw["transformer.wpe.weight"])
    assert w.composition_scores("K", "token").shape == (3, 4, 3, 4)


def test_llama_untied_unembedding(tmp_path):
    path, _ = folder(tmp_path, "llama")
    raw = load_file(str(path / "model.safetensors"))
    w = ckp.open_checkpoint(path).weights(embeddings=True)
    np.testing.assert_allclose(w.W_U, raw["model.norm.weight"][:, None] * raw["lm_head.weight"].T, rtol=1e-6)
    assert w.W_pos is None


@pytest.mark.parametrize("dtype", ["F16", "BF16"])
def test_half_precision_files_are_widened(tmp_path, dtype):
    path, config = folder(tmp_path, "gpt2", dtype=dtype)
    ck = ckp.open_checkpoint(path)
    assert ck.dtypes == [dtype]
    f = SafetensorsFile(BytesSource((path / "model.safetensors").read_bytes()))
    stored = f.tensor("transformer.h.1.attn.c_proj.weight")
    np.testing.assert_array_equal(ck.weights().W_O[1], stored.reshape(4, 8, 32))
    if dtype == "F16":
        np.testing.assert_array_equal(stored, load_file(str(path / "model.safetensors"))[
            "transformer.h.1.attn.c_proj.weight"].astype(np.float32))


def test_only_attention_and_norms_are_read_and_the_count_is_known_before(tmp_path):
    path, _ = folder(tmp_path, "gpt2", d_vocab=500)
    ck = ckp.open_checkpoint(path)
    header = ck.bytes_read
    planned = ck.bytes_to_read()
    ck.weights()
    assert ck.bytes_read - header == planned == 3 * (32 * 96 + 32 * 32 + 32) * 4
    assert ck.file_bytes == (path / "model.safetensors").stat().st_size
    assert planned < ck.file_bytes / 2                                # the 500 x 32 embedding was not read
    s = ck.summary()
    assert (s["n_layers"], s["n_heads"], s["d_model"], s["d_head"], s["dtypes"]) == (3, 4, 32, 8, ["F32"])


def test_sharded_checkpoint_equals_one_file(tmp_path):
    path, config = folder(tmp_path / "one", "llama")
    state = load_file(str(path / "model.safetensors"))
    shard = tmp_path / "sharded"
    shard.mkdir()
    names = sorted(state)
    halves = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    for fname, part in halves.items():
        save_file({k: state[k] for k in part}, str(shard / fname))
    (shard / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": {k: f for f, part in halves.items() for k in part}}))
    (shard / "config.json").write_text(json.dumps(config))
    a, b = ckp.open_checkpoint(path).weights(), ckp.open_checkpoint(shard).weights()
    for field in ("W_Q", "W_K", "W_V", "W_O"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_architecture_inferred_from_names_says_so(tmp_path):
    config = ckp.example_config("transformer_lens", n_layers=2, n_heads=2, d_model=8)
    lone = tmp_path / "tl.safetensors"
    ckp.write_example(lone, config)
    ck = ckp.open_checkpoint(lone)
    assert (ck.architecture, ck.named_by, ck.normalization_type, ck.n_heads, ck.d_head) == \
        ("transformer_lens", "tensor names", "LN", 2, 4)
    assert any("inferred from the tensor names" in n for n in ck.notes)
    gpt2 = tmp_path / "gpt2.safetensors"
    ckp.write_example(gpt2, ckp.example_config("gpt2", n_layers=2, n_heads=2, d_model=8))
    with pytest.raises(ValueError, match=r"number of attention heads of a gpt2 checkpoint is not in its tensor "
                                         r"shapes: give its config.json"):
        ckp.open_checkpoint(gpt2)
    ck = ckp.open_checkpoint(gpt2, config={"n_head": 2})
    assert (ck.architecture, ck.named_by, ck.n_layers, ck.d_model) == ("gpt2", "tensor names", 2, 8)


def test_rotary_and_grouped_query_notes(tmp_path):
    path, _ = folder(tmp_path, "mistral")
    ck = ckp.open_checkpoint(path)
    assert ck.rotary and (ck.n_heads, ck.n_kv_heads) == (8, 2)
    assert any("without rotation" in n for n in ck.notes)
    assert any("2 key/value heads, each repeated for 4 query heads" in n for n in ck.notes)
    w = ck.weights()
    np.testing.assert_array_equal(w.W_K[:, 0], w.W_K[:, 3])        # query heads 0-3 share key head 0
    assert not np.array_equal(w.W_K[:, 3], w.W_K[:, 4])


# --------------------------------------------------------------------------- bad checkpoints

def test_unknown_architecture_lists_names_found_and_expected(tmp_path):
    save_file({"encoder.layer.0.attention.self.query.weight": np.zeros((4, 4), np.float32)},
              str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"]}))
    with pytest.raises(ValueError, match=r"unknown architecture: config.json names model_type 'bert'.*supported are "
                                         r"gpt2, gpt_neox, llama, mistral, qwen2.*Tensor names found: "
                                         r"encoder.layer.0.attention.self.query.weight\. Expected names such as "
                                         r"gpt2: h.0.attn.c_attn.weight; gpt_neox: "):
        ckp.open_checkpoint(tmp_path)
    (tmp_path / "config.json").unlink()
    with pytest.raises(ValueError, match=r"unknown architecture: no config.json names it.*Tensor names found: encoder"):
        ckp.open_checkpoint(tmp_path)


def test_config_naming_one_layout_over_tensors_of_another(tmp_path):
    path, _ = folder(tmp_path, "gpt2")
    (path / "config.json").write_text(json.dumps(ckp.example_config("llama")))
    with pytest.raises(ValueError, match=r"config.json names 'llama' \(llama layout\), but the tensors do not have "
                                         r"its names.*Expected names such as llama: layers.0.self_attn.q_proj.weight$"):
        ckp.open_checkpoint(path)


def test_missing_layer_and_wrong_shape(tmp_path):
    path, config = folder(tmp_path, "gpt2")
    (path / "config.json").write_text(json.dumps({**config, "n_layer": 5}))
    with pytest.raises(ValueError, match=r"attention weights of layers \[0, 1, 2\] but config says n_layers=5; "
                                         r"missing layers \[3, 4\]"):
        ckp.open_checkpoint(path)
    (path / "config.json").write_text(json.dumps({**config, "n_embd": 16, "n_head": 2}))
    with pytest.raises(ValueError, match=r"tensor 'transformer.h.0.attn.c_attn.weight' must have shape \[16, 48\]"):
        ckp.open_checkpoint(path).weights()


def test_weights_without_embeddings_refuse_token_metrics(tmp_path):
    path, _ = folder(tmp_path, "gpt2")
    w = ckp.open_checkpoint(path).weights()
    with pytest.raises(ValueError, match="read them with embeddings=True"):
        w.composition_scores("K", "token")


# --------------------------------------------------------------------------- the command line

@pytest.mark.parametrize("arch", ["gpt2", "llama"])
def test_cli_scores_a_folder_and_a_lone_file(tmp_path, capsys, arch):
    path, config = folder(tmp_path / "m", arch)
    out = tmp_path / "s.csv"
    assert main(["scores", str(path), "--mode", "Q,K,V", "--metric", "frobenius,svd_bound,product_norm,norm_product",
                 "--out", str(out), "--top", "3"]) == 0
    printed = capsys.readouterr()
    assert printed.out.splitlines()[0].startswith("m: Q/K/V-composition, 3 of ")
    w = ckp.open_checkpoint(path).weights()
    import csv
    rows = list(csv.DictReader(out.open()))
    L, H = w.W_Q.shape[:2]
    assert len(rows) == 3 * H * H * L * (L - 1) // 2
    want = {m: w.composition_scores(m) for m in "QKV"}
    sizes = {(m, s): getattr(pair_scores, s)(w, m) for m in "QKV" for s in ("product_norm", "norm_product")}
    for r in rows:
        idx = tuple(int(r[k]) for k in ("layer1", "head1", "layer2", "head2"))
        assert float(r["frobenius"]) == want[r["mode"]][idx]
        for s in ("product_norm", "norm_product"):                   # the dense definitions
            assert float(r[s]) == pytest.approx(sizes[r["mode"], s][idx], rel=1e-5)
    if arch == "llama":
        assert "note: rotary positions" in printed.err
    lone = tmp_path / "lone.safetensors"
    lone.write_bytes((path / "model.safetensors").read_bytes())
    assert main(["scores", str(lone), "--config", str(path / "config.json"), "--top", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("lone.safetensors: K-composition, 1 of ")


def test_a_missing_shard_is_named_not_a_traceback(tmp_path, capsys):
    path, config = folder(tmp_path, "gpt2")
    names = list(load_file(str(path / "model.safetensors")))
    (path / "model.safetensors").unlink()
    (path / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {k: f"model-0000{1 + i % 2}-of-00002.safetensors" for i, k in enumerate(names)}}))
    with pytest.raises(ValueError, match=r"every shard model.safetensors.index.json names must be in .*; "
                                         r"missing 2 of 2: model-00001-of-00002.safetensors, model-00002"):
        ckp.open_checkpoint(path)
    assert main(["scores", str(path)]) == 2
    assert "headspace scores: every shard" in capsys.readouterr().err


def test_cli_heads_on_a_checkpoint_says_scores_reads_it(tmp_path, capsys):
    path, _ = folder(tmp_path, "gpt2")
    assert main(["heads", str(path)]) == 2
    assert "headspace heads: model must be a shipped model name, a model directory or an .npz for heads" \
        in capsys.readouterr().err


def test_cli_bad_file_is_a_message_not_a_traceback(tmp_path, capsys):
    bad = tmp_path / "x.safetensors"
    bad.write_bytes(b"this is plain text, not weights")
    assert main(["scores", str(bad)]) == 2
    assert "headspace scores: not a safetensors file" in capsys.readouterr().err


def test_to_bytes_round_trips_names_in_order():
    state = ckp.example_state(ckp.example_config("gpt_neox", n_layers=1, n_heads=2, d_model=8))
    f = SafetensorsFile(BytesSource(to_bytes(state)))
    assert f.names == list(state)


def test_an_unsupported_dtype_is_refused_before_reading(tmp_path):
    config = ckp.example_config("gpt2", n_layers=2, n_heads=2, d_model=8)
    state = ckp.example_state(config)
    state["transformer.h.1.attn.c_proj.weight"] = state["transformer.h.1.attn.c_proj.weight"].astype(np.float64)
    state["position_ids"] = np.arange(4, dtype=np.int64)              # a buffer nothing reads: fine
    save_file(state, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"tensor 'transformer.h.1.attn.c_proj.weight' has dtype F64; supported "
                                         r"are F32, F16, BF16"):
        ckp.open_checkpoint(tmp_path)
