"""One earlier layer against one later layer: every head pair's composition score and both size baselines.

The unit of work the page "Score your model" computes per request (one block, so that the reader's
tab stays responsive and the work can stop between blocks), and the fast route to the two size
baselines of ``headspace.pair_scores`` for a whole model (``size_scores``: the command line's
``--metric product_norm,norm_product``).

Why one product gives all three. For a writer ``A = W_V W_O`` and a reader ``B = X Y^T`` (``X, Y``
= ``W_Q, W_K`` for Q, ``W_K, W_Q`` for K, ``W_V, W_O^T`` for V), both rank d_head, with d_head x
d_head Gram factors ``F_V^T F_V = W_V^T W_V`` and ``F_Y^T F_Y = Y^T Y``, the product ``A B`` has the
singular values of the d_head x d_head matrix ``C = (F_V W_O)(X F_Y^T)``, ``||A||_F = ||F_V
W_O||_F`` and ``||B||_F = ||X F_Y^T||_F``. So

* ``frobenius = ||C||_F / (||A||_F ||B||_F)`` (``headspace.composition``'s, TransformerLens's),
* ``product_norm = ||C||_2``, the largest singular value (``pair_scores.product_norm``),
* ``norm_product = ||A||_F ||B||_F`` (``pair_scores.norm_product``),

from one matmul per layer pair and mode, never a d_model x d_model matrix. The products are taken
in float32 when the weights are float32 (as ``head_pairs`` does) and everything after them in float64.

Random baselines, to read a score against: ``random_baselines(d_model, d_head)`` gives the mean
``frobenius`` of random Gaussian heads of these shapes (``headspace.composition``'s
``random_baseline``, what ``frobenius_baseline`` subtracts) and the mean ratio ``product_norm /
norm_product`` of such heads: a pair's ``product_norm`` is expected to be that ratio times its
``norm_product`` if its heads were random directions of the same sizes. ``norm_product`` reads no
alignment, so random heads of the same sizes score exactly the same: it has no baseline of its own.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> W_Q, W_K, W_V = rng.normal(size=(3, 3, 2, 8, 4))
>>> W_O = rng.normal(size=(3, 2, 4, 8))
>>> s = layer_pair_scores(W_Q, W_K, W_V, W_O, 0, 2, "K")
>>> sorted(s), s["frobenius"].shape                             # [modes, writer heads, reader heads]
(['frobenius', 'norm_product', 'product_norm'], (1, 2, 2))
>>> from headspace.composition import all_composition_scores
>>> bool(np.allclose(s["frobenius"][0], all_composition_scores(W_Q, W_K, W_V, W_O, "K")[0, :, 2, :]))
True
"""

from __future__ import annotations

import numpy as np

from headspace._linalg import _T, _factor, _gram
from headspace._random_baseline import random_baseline
from headspace.head_pairs import later_mask

__all__ = ["SCORES", "layer_pair_scores", "size_scores", "random_baselines"]

#: The scores ``layer_pair_scores`` returns, in the order the page and the CSV list them.
SCORES = ("frobenius", "product_norm", "norm_product")


def layer_pair_scores(W_Q, W_K, W_V, W_O, l1: int, l2: int, modes="QKV") -> dict:
    """Scores of every head of layer ``l1`` (writer) against every head of layer ``l2`` (reader):
    ``{score: [len(modes), n_heads, n_heads]}`` for each of ``SCORES``, ``out[m, h1, h2]``.

    Weights in TransformerLens layout, norm scales folded in (``headspace.weights``), ``W_Q, W_K,
    W_V [n_layers, n_heads, d_model, d_head]``, ``W_O [n_layers, n_heads, d_head, d_model]``; only
    layers ``l1`` and ``l2`` are read. ``l1 < l2`` is required: earlier writes, later reads.
    """
    L = len(W_Q)
    if not (isinstance(l1, (int, np.integer)) and isinstance(l2, (int, np.integer)) and 0 <= l1 < l2 < L):
        raise ValueError(f"l1 and l2 must be layers with 0 <= l1 < l2 < n_layers={L}; got l1={l1!r}, l2={l2!r}")
    bad = [m for m in modes if m not in "QKV"]
    if bad or not modes:
        raise ValueError(f"modes must be a sequence of 'Q', 'K', 'V'; got {modes!r}")
    work = np.float32 if all(np.asarray(w).dtype == np.float32 for w in (W_Q, W_K, W_V, W_O)) else np.float64
    V1, O1 = np.asarray(W_V[l1]), np.asarray(W_O[l1])
    H, dh = V1.shape[0], V1.shape[2]
    Lt = _factor(_gram(V1)) @ O1.astype(np.float64)                 # [H, dh, d_model]
    n_writer = np.sqrt(np.einsum("hij,hij->h", Lt, Lt))
    left = Lt.astype(work).reshape(H * dh, -1)
    out = {name: np.empty((len(modes), H, H)) for name in SCORES}
    readers = {"Q": (W_Q, W_K), "K": (W_K, W_Q), "V": (W_V, None)}
    for m, mode in enumerate(modes):
        X_all, Y_all = readers[mode]
        X = np.asarray(X_all[l2]).astype(np.float64)
        Y = np.asarray(Y_all[l2]) if Y_all is not None else _T(np.asarray(W_O[l2]))
        Rt = X @ _T(_factor(_gram(Y)))                              # [H, d_model, dh]
        n_reader = np.sqrt(np.einsum("hij,hij->h", Rt, Rt))
        right = np.moveaxis(Rt.astype(work), 0, 1).reshape(-1, H * dh)   # [d_model, H * dh]
        # [H, H, dh, dh], contiguous: the stacked products below then run as BLAS calls
        C = np.ascontiguousarray((left @ right).astype(np.float64).reshape(H, dh, H, dh).transpose(0, 2, 1, 3))
        sizes = n_writer[:, None] * n_reader[None, :]
        if np.any(sizes <= 0):
            h1, h2 = np.argwhere(sizes <= 0)[0]
            raise ValueError(f"writer head L{l1}H{h1} or reader head L{l2}H{h2} is zero (norm 0), so its scores are "
                             f"0/0; expected nonzero weights")
        out["frobenius"][m] = np.sqrt(np.einsum("abij,abij->ab", C, C)) / sizes
        out["product_norm"][m] = np.sqrt(np.clip(np.linalg.eigvalsh(C @ _T(C))[..., -1], 0.0, None))
        out["norm_product"][m] = sizes
    return out


def size_scores(W_Q, W_K, W_V, W_O, mode) -> dict:
    """``product_norm`` and ``norm_product`` of every earlier/later head pair, ``[n_layers, n_heads,
    n_layers, n_heads]`` each (0 unless the reader's layer is later), a layer pair at a time:
    ``pair_scores``'s two size baselines without forming any d_model x d_model matrix.

    >>> from headspace.model import load
    >>> from headspace.pair_scores import product_norm, weights_of
    >>> w = weights_of(load("attn-only-2l"))
    >>> s = size_scores(w.W_Q, w.W_K, w.W_V, w.W_O, "V")
    >>> bool(np.allclose(s["product_norm"], product_norm(w, "V"), rtol=1e-6))
    True
    """
    if mode not in ("Q", "K", "V"):
        raise ValueError(f"mode must be one of 'Q', 'K', 'V'; got {mode!r}")
    L, H = np.shape(W_Q)[:2]
    out = {name: np.zeros((L, H, L, H)) for name in ("product_norm", "norm_product")}
    for l2 in range(1, L):
        for l1 in range(l2):
            block = layer_pair_scores(W_Q, W_K, W_V, W_O, l1, l2, mode)
            for name in out:
                out[name][l1, :, l2, :] = block[name][0]
    assert not any(np.any(v[~later_mask(v.shape)]) for v in out.values())
    return out


def random_baselines(d_model: int, d_head: int, samples: int = 64, seed: int = 0) -> dict:
    """What random heads of these shapes score: ``{"frobenius": (mean, stderr), "size_ratio": (mean,
    stderr)}``. ``frobenius``'s is ``headspace.composition.random_baseline`` for heads (rank
    ``d_head`` factors of ``d_model``); ``size_ratio`` is the mean of ``product_norm / norm_product``
    over the same kind of draws (Gaussian ``W_V, W_O`` of the writer, ``X, Y`` of the reader).

    >>> b = random_baselines(64, 16, samples=16)
    >>> 0 < b["size_ratio"][0] < b["frobenius"][0] < 1      # ||A B||_2 <= ||A B||_F: below frobenius
    True
    """
    frob = random_baseline((d_model, d_model), (d_model, d_model), ranks=(d_head, d_head), samples=samples, seed=seed)
    rng = np.random.default_rng(seed)
    ratios = []
    for _ in range(samples):
        V, X, Y = rng.standard_normal((3, d_model, d_head))
        O = rng.standard_normal((d_head, d_model))
        C = (_factor(_gram(V)) @ O) @ (X @ _T(_factor(_gram(Y))))
        size = np.sqrt(np.vdot(_gram(V), _gram(O.T)) * np.vdot(_gram(X), _gram(Y)))
        ratios.append(np.sqrt(np.linalg.eigvalsh(C @ C.T)[-1]) / size)
    ratios = np.array(ratios)
    return {"frobenius": frob, "size_ratio": (float(ratios.mean()), float(ratios.std(ddof=1) / np.sqrt(samples)))}
