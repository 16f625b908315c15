"""headspace.checkpoint against TransformerLens 3.9 on checkpoints written by Hugging Face transformers.

Each case builds a small random model with transformers (its norm scales randomised: a fresh model's
are ones, which would make folding trivial), saves it as transformers does (``save_pretrained``:
``config.json`` + ``model.safetensors``, the real names), and loads the same weights into a
HookedTransformer through TransformerLens's own converters. Our reader, from the folder alone, must
give TransformerLens's weights after ``process_weights_(fold_ln=True)`` and its composition scores,
within 1e-6.
"""

import numpy as np
import pytest
import torch
import transformers
from transformer_lens import HookedTransformer, HookedTransformerConfig
from transformer_lens.pretrained import weight_conversions as conv

from headspace.checkpoint import open_checkpoint

L, H, M, V, C = 3, 4, 32, 50, 16


def gpt2():
    hf = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=L, n_head=H, n_embd=M, vocab_size=V,
                                                              n_positions=C))
    cfg = HookedTransformerConfig(n_layers=L, n_heads=H, d_model=M, d_head=M // H, d_vocab=V, n_ctx=C, d_mlp=4 * M,
                                  act_fn="gelu_new", normalization_type="LN")
    return hf, cfg, conv.convert_gpt2_weights


def neox():
    hf = transformers.GPTNeoXForCausalLM(transformers.GPTNeoXConfig(
        num_hidden_layers=L, num_attention_heads=H, hidden_size=M, intermediate_size=4 * M, vocab_size=V,
        max_position_embeddings=C, rotary_pct=0.25))
    cfg = HookedTransformerConfig(n_layers=L, n_heads=H, d_model=M, d_head=M // H, d_vocab=V, n_ctx=C, d_mlp=4 * M,
                                  act_fn="gelu", normalization_type="LN", positional_embedding_type="rotary",
                                  rotary_dim=2, parallel_attn_mlp=True)
    return hf, cfg, conv.convert_neox_weights


def llama():
    hf = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        num_hidden_layers=L, num_attention_heads=H, num_key_value_heads=2, hidden_size=M, intermediate_size=2 * M,
        vocab_size=V, max_position_embeddings=C))
    cfg = HookedTransformerConfig(n_layers=L, n_heads=H, d_model=M, d_head=M // H, d_vocab=V, n_ctx=C, d_mlp=2 * M,
                                  act_fn="silu", normalization_type="RMS", positional_embedding_type="rotary",
                                  rotary_dim=M // H, gated_mlp=True, n_key_value_heads=2, final_rms=True)
    return hf, cfg, conv.convert_llama_weights


CASES = {"gpt2": gpt2, "gpt_neox": neox, "llama": llama}


@pytest.mark.parametrize("name", CASES)
def test_our_reader_equals_transformer_lens(tmp_path, name):
    torch.manual_seed(0)
    hf, cfg, convert = CASES[name]()
    with torch.no_grad():
        for key, p in hf.named_parameters():
            if "ln" in key.split(".")[-2] or "norm" in key:
                p.copy_(0.5 * torch.randn_like(p) + (1.0 if key.endswith("weight") else 0.0))
    hf.save_pretrained(tmp_path, safe_serialization=True)
    assert (tmp_path / "model.safetensors").is_file()
    tl = HookedTransformer(cfg)
    tl.load_state_dict(convert(hf, cfg), strict=False)
    tl.process_weights_(fold_ln=True, center_writing_weights=False, center_unembed=False)

    ck = open_checkpoint(tmp_path)
    assert ck.architecture == name and ck.named_by == "config.json"
    ours = ck.weights(embeddings=True)
    assert ours.normalization_type == tl.cfg.normalization_type
    for field in ("W_Q", "W_K", "W_V", "W_O", "W_E", "W_U"):
        np.testing.assert_allclose(getattr(ours, field), getattr(tl, field).detach().numpy(), rtol=1e-6, atol=1e-6,
                                   err_msg=field)
    for mode in "QKV":
        theirs = tl.all_composition_scores(mode).detach().numpy()
        np.testing.assert_allclose(ours.composition_scores(mode), theirs, rtol=1e-6, atol=1e-6, err_msg=mode)
