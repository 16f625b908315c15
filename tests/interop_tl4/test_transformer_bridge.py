"""headspace.weights.from_transformer_lens on a TransformerLens 4 TransformerBridge, offline.

A bridge needs a Hugging Face model and a tokenizer; both are built here from a config with
random weights and a word-level vocabulary saved to a temporary folder, so nothing is downloaded.
Norm scales and biases are randomised (GPT-2 initialises them to ones and zeros). Our scores, from
the unprocessed bridge, must equal the bridge's own ``all_composition_scores`` after
``process_weights(fold_ln=True)``.
"""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402
from tokenizers import Tokenizer, models  # noqa: E402
from transformer_lens.model_bridge import TransformerBridge  # noqa: E402

from headspace import weights as hw  # noqa: E402

D_VOCAB = 50


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    vocab = {f"t{i}": i for i in range(D_VOCAB)}
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(models.WordLevel(vocab, unk_token="t0")),
        unk_token="t0", bos_token="t1", eos_token="t1", pad_token="t1")
    where = tmp_path_factory.mktemp("tokenizer")
    tok.save_pretrained(where)            # the bridge reloads it by path: a local one stays offline
    return transformers.AutoTokenizer.from_pretrained(where)


CASES = {
    "gpt2 (LayerNorm)": (transformers.GPT2Config, transformers.GPT2LMHeadModel, "gpt2",
                         dict(n_layer=3, n_head=4, n_embd=32, vocab_size=D_VOCAB, n_positions=16)),
    "llama (RMSNorm, grouped-query)": (
        transformers.LlamaConfig, transformers.LlamaForCausalLM, "llama",
        dict(num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, hidden_size=32,
             intermediate_size=64, vocab_size=D_VOCAB, max_position_embeddings=16)),
}


def bridge(name, tokenizer, seed=0):
    config_class, model_class, model_name, fields = CASES[name]
    torch.manual_seed(seed)
    hf = model_class(config_class(**fields))
    with torch.no_grad():
        for pname, p in hf.named_parameters():
            if "ln" in pname or "norm" in pname:
                p.copy_(0.5 * torch.randn_like(p) + (1.0 if pname.endswith("weight") else 0.0))
    return TransformerBridge.boot_transformers(model_name, hf_model=hf, tokenizer=tokenizer)


@pytest.mark.parametrize("name", CASES)
def test_bridge_scores_equal_its_own_after_fold_ln(name, tokenizer):
    b = bridge(name, tokenizer)
    ours = hw.from_transformer_lens(b)
    b.process_weights(fold_ln=True, center_writing_weights=False, center_unembed=False,
                      fold_value_biases=False)
    for mode in "QKV":
        theirs = b.all_composition_scores(mode)
        theirs = getattr(theirs, "scores", theirs).detach().numpy()
        np.testing.assert_allclose(ours.composition_scores(mode), theirs, rtol=2e-4, atol=1e-6, err_msg=mode)
    for field in ("W_Q", "W_K", "W_V", "W_U"):
        theirs = getattr(b, field).detach().numpy()
        if field in ("W_K", "W_V"):      # the bridge keeps grouped-query heads; ours are per query head
            theirs = np.repeat(theirs, b.cfg.n_heads // theirs.shape[1], axis=1)
        np.testing.assert_allclose(getattr(ours, field), theirs, rtol=2e-4, atol=1e-6, err_msg=field)
    assert ours.normalization_type == ("LNPre" if "LayerNorm" in name else "RMSPre")
