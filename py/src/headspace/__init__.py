"""headspace: how attention heads talk to each other through the residual stream.

Score how much each later head of a model reads what each earlier head writes:

>>> import headspace
>>> m = headspace.load("attn-only-2l")  # a shipped toy model
>>> w = headspace.from_model(m)  # norm scales folded in
>>> k = w.composition_scores("K")  # every pair of heads
>>> k.shape, round(float(k.max()), 3)  # 2 layers, 4 heads
((2, 4, 2, 4), 0.207)
>>> headspace.METRICS[:3]  # scores the site compares
('frobenius', 'frobenius_baseline', 'svd_bound')

The names here are the package's surface: ``load`` and ``Model`` (run a model, numpy only),
``from_model``, ``from_transformer_lens`` and ``from_state_dict`` (the ``Weights`` scores read),
``composition_score`` (one pair of heads) and ``all_composition_scores`` (every pair, in
memory-bounded blocks), and ``path_ablation`` (the loss-based ground truth). Each module below
has more.

Axis names, used in every docstring and shape error:
``n_layers n_heads d_model d_head d_vocab n_ctx``.

Weights use the TransformerLens layout (row vectors, ``x @ W``)::

    W_E [d_vocab, d_model]   W_pos [n_ctx, d_model]
    W_Q, W_K, W_V [n_layers, n_heads, d_model, d_head]
    W_O [n_layers, n_heads, d_head, d_model]   W_U [d_model, d_vocab]

The articles use the paper's column vectors (Elhage et al. 2021). The mapping,
stated once here:

* paper ``W_OV = (W_V @ W_O).T``  -- our OV circuit is ``W_V @ W_O``;
* paper ``W_QK = W_Q @ W_K.T``    -- the same matrix in both conventions
  (the attention score is ``x_q @ W_Q @ W_K.T @ x_k.T``).

Modules: ``composition`` (scores between two heads, six metrics, and the
faithful token path), ``head_pairs`` (the all-pairs engine: every earlier head
against every later head, in memory-bounded blocks, numpy or array-API arrays), ``causal`` (path ablation: the loss-based ground truth
the scores are judged against), ``axioms`` (which metric meets which axiom
and how that is known: the one source the tests and the metric lab share), ``symmetry`` (changes of basis that leave a
model's function unchanged), ``model`` (load and run the shipped toy
transformers: the forward pass), ``store`` (where model files live; reading them
checksum-verified and writing them), ``weights`` (the weights scores read, with
norm scales folded in, from TransformerLens models, state dicts or our own),
``cli`` (``python -m headspace scores|heads MODEL``), ``heads`` (find previous-token and induction heads from
attention patterns), ``paths`` (the path expansion of the logits: direct,
single-head and virtual-head terms), ``circuits`` (a head's full OV and QK
circuits in token space and its copying score), ``optics`` (polarisers, the physical picture of a rank-1
projection) and ``demos`` (the registry every figure on the site runs from).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"
__all__ = [
    "load", "Model", "from_model", "from_transformer_lens", "from_state_dict", "Weights",
    "composition_score", "all_composition_scores", "METRICS", "MODES", "path_ablation", "__version__",
]

# Each public name's module, imported on first use (PEP 562): the browser's first figure imports
# only what its demo needs (headspace_site.runtime and a polariser import none of these), and
# ``from headspace import load`` works as before.
_HOME = {
    "path_ablation": "causal",
    "METRICS": "composition", "MODES": "composition", "all_composition_scores": "composition",
    "composition_score": "composition",
    "Model": "model", "load": "model",
    "Weights": "weights", "from_model": "weights", "from_state_dict": "weights", "from_transformer_lens": "weights",
}


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'headspace' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"headspace.{_HOME[name]}"), name)
    globals()[name] = value  # once: later lookups are plain
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    from headspace.causal import path_ablation
    from headspace.composition import METRICS, MODES, all_composition_scores, composition_score
    from headspace.model import Model, load
    from headspace.weights import Weights, from_model, from_state_dict, from_transformer_lens
