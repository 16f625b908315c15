"""headspace.weights.from_transformer_lens against TransformerLens 3.9 itself.

Random HookedTransformers (LayerNorm and RMSNorm, attention-only and with MLPs, grouped-query
attention, float32 and float64), their norm scales and biases randomised (a fresh model's are ones
and zeros, which would make folding trivial). Our scores, from the unprocessed model, must equal
TransformerLens's ``all_composition_scores`` after ``process_weights_(fold_ln=True)``.
"""

import numpy as np
import pytest
import torch
from transformer_lens import HookedTransformer, HookedTransformerConfig

from headspace import weights as hw

CASES = {
    "LN attn-only": dict(normalization_type="LN", n_layers=3, n_heads=4, d_model=32, d_head=8, attn_only=True),
    "RMS attn-only": dict(normalization_type="RMS", n_layers=2, n_heads=3, d_model=24, d_head=6, attn_only=True),
    "LN with MLPs": dict(normalization_type="LN", n_layers=4, n_heads=2, d_model=16, d_head=8, d_mlp=64, act_fn="gelu"),
    "RMS grouped-query": dict(normalization_type="RMS", n_layers=3, n_heads=4, d_model=32, d_head=8,
                              n_key_value_heads=2, attn_only=True),
    "LN float64": dict(normalization_type="LN", n_layers=2, n_heads=4, d_model=20, d_head=5, attn_only=True,
                       dtype=torch.float64),
    "no norm": dict(normalization_type=None, n_layers=2, n_heads=2, d_model=16, d_head=4, attn_only=True),
}


def random_model(case: dict, seed: int = 0) -> HookedTransformer:
    torch.manual_seed(seed)
    model = HookedTransformer(HookedTransformerConfig(d_vocab=40, n_ctx=12, **case))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".ln" in name or name.startswith("ln_final"):
                p.copy_(0.5 * torch.randn_like(p) + (1.0 if name.endswith(".w") else 0.0))
    return model


def tol(case):
    # float32 rounding, also for the float64 model: TransformerLens 3.9's processing rounds its folded
    # readers to float32 precision (measured: relative 8e-6 from the exact float64 fold)
    return dict(rtol=2e-4, atol=1e-6)


@pytest.mark.parametrize("name", CASES)
def test_scores_equal_transformer_lens_after_fold_ln(name):
    case = CASES[name]
    model = random_model(case)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    ours = hw.from_transformer_lens(model)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items()), "the model was changed"
    model.process_weights_(fold_ln=True, center_writing_weights=False, center_unembed=False)
    assert ours.normalization_type == model.cfg.normalization_type
    for field in ("W_Q", "W_K", "W_V", "W_O", "W_E", "W_U"):
        np.testing.assert_allclose(getattr(ours, field), getattr(model, field).detach().numpy(), **tol(case),
                                   err_msg=field)
    for mode in "QKV":
        theirs = model.all_composition_scores(mode).detach().numpy()
        np.testing.assert_allclose(ours.composition_scores(mode), theirs, **tol(case), err_msg=mode)


@pytest.mark.parametrize("name", ["LN with MLPs", "RMS grouped-query"])
def test_state_dict_route_equals_the_object_route(name, tmp_path):
    """What the command line reads (an .npz of state-dict keys plus the config) gives the same weights."""
    model = random_model(CASES[name], seed=1)
    np.savez(tmp_path / "w.npz", **{k: v.detach().numpy() for k, v in model.state_dict().items()})
    config = {k: v for k, v in model.cfg.to_dict().items() if isinstance(v, (int, float, str, bool, type(None)))}
    from_npz = hw.from_state_dict(dict(np.load(tmp_path / "w.npz")), config)
    from_object = hw.from_transformer_lens(model)
    for field in ("W_Q", "W_K", "W_V", "W_O", "W_E", "W_pos", "W_U"):
        np.testing.assert_array_equal(getattr(from_npz, field), getattr(from_object, field), err_msg=field)


def test_bfloat16_weights_widen_to_float32():
    model = random_model(CASES["RMS attn-only"]).to(torch.bfloat16)
    w = hw.from_transformer_lens(model)
    assert w.W_Q.dtype == np.float32 and np.isfinite(w.composition_scores("K")).all()


def test_not_a_transformer_lens_model():
    with pytest.raises(ValueError, match="model must be a TransformerLens HookedTransformer or "
                                         "TransformerBridge .* got Linear"):
        hw.from_transformer_lens(torch.nn.Linear(2, 2))
