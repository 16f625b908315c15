"""Changes of basis that leave a transformer's function unchanged.

Why: a composition score that changes under these maps measures the basis, not the model
(seed 000). Without normalisation, any invertible T [d_model, d_model] relabels the residual
stream: in our row convention the residual ``x`` becomes ``x @ T``, so every matrix that writes to
it is right-multiplied by T and every matrix that reads from it is left-multiplied by ``T^-1``:

* writers: ``W_E, W_pos, W_O, b_O`` (and an MLP's ``W_out, b_out``) -> ``W @ T``;
* readers: ``W_Q, W_K, W_V, W_U`` (and ``W_in``) -> ``T^-1 @ W``.

Hence ``W_V W_O -> T^-1 (W_V W_O) T`` and ``W_Q W_K^T -> T^-1 (W_Q W_K^T) T^-T``. In the paper's
column vectors the same change is ``S = T^T``: ``W_OV -> S W_OV S^-1`` and ``W_QK -> S^-T W_QK S^-1``,
as seed 000 writes them.
Inside one head the d_head axis has its own symmetry (``W_V A, A^-1 W_O``).
RMSNorm/LayerNorm break all but rotations and a global scale, so normalisation weights are refused.

>>> import numpy as np
>>> R = random_orthogonal(3, seed=1)
>>> bool(np.allclose(R @ R.T, np.eye(3)))
True
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import numpy as np

from headspace.validate import as_array, as_number

__all__ = ["random_orthogonal", "scale_directions", "shear", "adversarial_basis", "invert",
           "change_residual_basis", "transform_model", "rotation", "permutation", "stretch", "transform_ov", "transform_qk", "ov_hidden_basis", "qk_hidden_basis",
           "WRITERS", "READERS", "UNCHANGED"]

#: Weight names (last component of a TransformerLens state-dict key) that write to the residual stream.
WRITERS = ("W_E", "W_pos", "W_O", "b_O", "W_out", "b_out")
#: Weight names that read from the residual stream (their d_model axis is the second to last).
READERS = ("W_Q", "W_K", "W_V", "W_U", "W_in")
#: Weight names that live outside the residual stream and do not change.
UNCHANGED = ("b_Q", "b_K", "b_V", "b_U", "b_in", "mask", "IGNORE")


def _T(x):
    return np.swapaxes(x, -1, -2)


def invert(name, T):
    """``(T, T^-1)`` for a stack of square matrices; ValueError if any is singular.

    Singular means condition number above ``1 / (n * eps)``: the inverse would be noise.

    >>> invert("T", [[1.0, 2.0], [0.0, 0.0]])
    Traceback (most recent call last):
    ...
    ValueError: T must be invertible; got a singular [2, 2] matrix (smallest/largest singular value 0)
    """
    T = as_array(name, T)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError(f"{name} must be a square [d_model, d_model] matrix; got shape {list(T.shape)}")
    s = np.linalg.svd(T, compute_uv=False)
    top = s[..., 0]
    ratio = np.divide(s[..., -1], top, out=np.zeros_like(top), where=top > 0)
    if np.any(ratio < T.shape[-1] * np.finfo(np.float64).eps):
        worst = float(np.min(ratio))
        raise ValueError(f"{name} must be invertible; got a singular {list(T.shape[-2:])} matrix "
                         f"(smallest/largest singular value {worst:.3g})")
    return T, np.linalg.inv(T)


def random_orthogonal(n, seed=0):
    """A Haar-random orthogonal matrix [n, n] (QR of a Gaussian matrix, signs fixed by R's diagonal).

    >>> R = random_orthogonal(4, seed=0)
    >>> bool(np.allclose(R.T @ R, np.eye(4)))
    True
    """
    n = int(as_number("n", n, lo=1))
    if type(seed) is int:  # a plain seed always draws the same matrix: drawn once, copied out
        return _haar(n, seed).copy()
    return _draw_orthogonal(n, seed)


@lru_cache(maxsize=32)
def _haar(n: int, seed: int) -> np.ndarray:
    """``random_orthogonal(n, seed)`` for an int seed, read-only (32 of them: 1 MB at n = 64)."""
    q = _draw_orthogonal(n, seed)
    q.setflags(write=False)
    return q


def _draw_orthogonal(n: int, seed) -> np.ndarray:
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.where(np.diag(r) == 0, 1.0, np.diag(r)))


def scale_directions(d_model, directions, factors):
    """T that multiplies the given (orthonormalised) residual directions by ``factors``.

    ``x @ T`` scales the component of x along ``directions[i]`` by ``factors[i]`` and leaves the
    orthogonal complement alone. A factor of 0 would make T singular and is refused.

    >>> scale_directions(2, [[1.0, 0.0]], [10.0])
    array([[10.,  0.],
           [ 0.,  1.]])
    """
    d_model = int(as_number("d_model", d_model, lo=1))
    D = as_array("directions", directions, ndim=2, shape=(None, d_model))
    f = as_array("factors", factors, ndim=1, shape=(D.shape[0],))
    if np.any(f == 0):
        raise ValueError(f"factors must be nonzero (a zero factor makes T singular); got {f.tolist()}")
    q, r = np.linalg.qr(D.T)
    if np.any(np.abs(np.diag(r)) < 1e-12 * np.abs(r).max()):
        raise ValueError(f"directions must be linearly independent; got {D.tolist()}")
    return np.eye(d_model) + (q * (f - 1.0)) @ q.T


def shear(d_model, source, target, amount):
    """T that adds ``amount`` times the component along ``source`` to the ``target`` direction.

    ``x @ T = x + amount * (x . s) t`` with unit s, t. Shears bring directions arbitrarily close
    together without making them parallel; T is singular only if ``1 + amount * (s . t) == 0``.

    >>> shear(2, [1.0, 0.0], [0.0, 1.0], 3.0)
    array([[1., 3.],
           [0., 1.]])
    """
    d_model = int(as_number("d_model", d_model, lo=1))
    s = as_array("source", source, ndim=1, shape=(d_model,))
    t = as_array("target", target, ndim=1, shape=(d_model,))
    a = as_number("amount", amount)
    for name, v in (("source", s), ("target", t)):
        if not np.linalg.norm(v) > 0:
            raise ValueError(f"{name} must be a nonzero direction; got {v.tolist()}")
    s, t = s / np.linalg.norm(s), t / np.linalg.norm(t)
    T = np.eye(d_model) + a * np.outer(s, t)
    invert("T", T)
    return T


def adversarial_basis(d_model, *, condition=100.0, seed=0, batch=()):
    """A random T with the given condition number: rotate, scale each axis, rotate again.

    ``T = R1 diag(s) R2`` with Haar R1, R2 and ``s`` log-uniform on ``[1, condition]`` (ends
    included). Scaling some residual directions up and others down is the move that reorders
    singular values and angles (seed 000). ``batch`` gives a stack [*batch, d_model, d_model].

    >>> T = adversarial_basis(4, condition=50.0, seed=3)
    >>> round(float(np.linalg.cond(T)), 6)
    50.0
    """
    d_model = int(as_number("d_model", d_model, lo=1))
    condition = as_number("condition", condition, lo=1.0)
    rng = np.random.default_rng(seed)
    batch = tuple(int(b) for b in batch)
    q1, r1 = np.linalg.qr(rng.standard_normal(batch + (d_model, d_model)))
    q2, r2 = np.linalg.qr(rng.standard_normal(batch + (d_model, d_model)))
    logs = rng.uniform(0.0, 1.0, batch + (d_model,))
    if d_model > 1:
        logs[..., 0], logs[..., 1] = 0.0, 1.0
    s = condition ** logs
    return (q1 * s[..., None, :]) @ q2


def transform_ov(A, T):
    """A matrix that reads and writes the residual (OV circuit, ``W_V @ W_O``): ``T^-1 A T``.

    >>> T = np.diag([2.0, 1.0]); A = np.array([[0.0, 1.0], [0.0, 0.0]])
    >>> transform_ov(A, T)
    array([[0. , 0.5],
           [0. , 0. ]])
    """
    T, Ti = invert("T", T)
    return Ti @ as_array("A", A) @ T


def transform_qk(B, T):
    """A bilinear form on the residual (``W_Q @ W_K.T``, or its transpose): ``T^-1 B T^-T``.

    Then ``(x T) B' (y T)^T = x B y^T``: attention scores do not change.

    >>> transform_qk(np.eye(2), np.diag([2.0, 1.0]))
    array([[0.25, 0.  ],
           [0.  , 1.  ]])
    """
    T, Ti = invert("T", T)
    return Ti @ as_array("B", B) @ _T(Ti)


def change_residual_basis(weights: Mapping, T) -> dict:
    """Apply the change of residual basis T to a whole set of weights; returns a new dict.

    Keys are TransformerLens names or state-dict keys (``"W_Q"``, ``"blocks.0.attn.W_Q"``,
    ``"embed.W_E"``...); the last dotted component decides the role: ``WRITERS`` get ``W @ T``,
    ``READERS`` get ``T^-1 @ W`` on their d_model axis, ``UNCHANGED`` are copied. Any layer or RMS
    norm key is refused (the symmetry is then only orthogonal T times a scale), as is any unknown key.
    Logits and attention patterns of the model are unchanged (tested).

    >>> w = {"W_E": np.eye(2), "W_U": np.eye(2)}
    >>> new = change_residual_basis(w, np.diag([2.0, 1.0]))
    >>> new["W_E"] @ new["W_U"]                  # the direct path (bigram logits) survives
    array([[1., 0.],
           [0., 1.]])
    """
    if not isinstance(weights, Mapping):
        raise ValueError(f"weights must be a mapping of names to arrays; got {type(weights).__name__}")
    T, Ti = invert("T", T)
    d_model = T.shape[-1]
    out = {}
    for key, value in weights.items():
        role = str(key).rsplit(".", 1)[-1]
        if role.startswith("ln") or role in ("w", "b", "scale") or ".ln" in str(key):
            raise ValueError(f"weights[{key!r}] is a normalisation parameter; a change of residual basis "
                             f"is a symmetry only of models without normalisation (expected none)")
        if role in UNCHANGED:
            out[key] = np.array(value, copy=True)
            continue
        if role not in WRITERS and role not in READERS:
            raise ValueError(f"weights[{key!r}]: unknown weight name {role!r}; expected one of "
                             f"{', '.join(WRITERS + READERS + UNCHANGED)}")
        arr = as_array(f"weights[{key!r}]", value)
        axis = -1 if role in WRITERS else -2
        if arr.ndim < -axis or arr.shape[axis] != d_model:
            raise ValueError(f"weights[{key!r}] must have d_model = {d_model} on axis {axis} "
                             f"({'writer' if axis == -1 else 'reader'}); got shape {list(arr.shape)}")
        out[key] = arr @ T if role in WRITERS else Ti @ arr
    return out


def ov_hidden_basis(W_V, W_O, A):
    """The hidden-layer symmetry of an OV circuit: ``(W_V A, A^-1 W_O)`` for any invertible A.

    A [d_head, d_head] (or a stack matching the heads' leading axes). ``W_V @ W_O`` is unchanged:
    only the product is meaningful, not the d_head basis.

    >>> V, O = np.ones((3, 2)), np.ones((2, 3))
    >>> V2, O2 = ov_hidden_basis(V, O, [[2.0, 1.0], [0.0, 1.0]])
    >>> bool(np.allclose(V2 @ O2, V @ O))
    True
    """
    A, Ai = invert("A", A)
    W_V, W_O = as_array("W_V", W_V), as_array("W_O", W_O)
    if W_V.shape[-1] != A.shape[-1] or W_O.shape[-2] != A.shape[-1]:
        raise ValueError(f"A must be [d_head, d_head] with d_head = W_V.shape[-1] = {W_V.shape[-1]} and "
                         f"W_O.shape[-2] = {W_O.shape[-2]}; got {list(A.shape)}")
    return W_V @ A, Ai @ W_O


def qk_hidden_basis(W_Q, W_K, A):
    """The hidden-layer symmetry of a QK circuit: ``(W_Q A, W_K A^-T)``; ``W_Q W_K^T`` is unchanged.

    If the same map must act on queries and keys, A has to be orthogonal (then ``A^-T = A``): the
    O(d_head) symmetry of the QK bottleneck. A general invertible A needs ``A^-T`` on the keys.

    >>> Q, K = np.eye(3)[:, :2], np.ones((3, 2))
    >>> R = random_orthogonal(2, seed=0)
    >>> Q2, K2 = qk_hidden_basis(Q, K, R)
    >>> bool(np.allclose(K2, K @ R)), bool(np.allclose(Q2 @ K2.T, Q @ K.T))
    (True, True)
    """
    A, Ai = invert("A", A)
    W_Q, W_K = as_array("W_Q", W_Q), as_array("W_K", W_K)
    if W_Q.shape[-1] != A.shape[-1] or W_K.shape[-1] != A.shape[-1]:
        raise ValueError(f"A must be [d_head, d_head] with d_head = {W_Q.shape[-1]} (W_Q) = "
                         f"{W_K.shape[-1]} (W_K); got {list(A.shape)}")
    return W_Q @ A, W_K @ _T(Ai)


def transform_model(model, T):
    """The model with its residual basis changed by T: writers ``W @ T``, readers ``T^-1 @ W``.

    ``model`` is a ``headspace.model.Model``; its learned norm scales are folded into the readers
    first (``Model.fold_norm``), so every reader is a plain matrix. Writers: ``W_E, W_pos, W_O,
    b_O``; readers: ``W_Q, W_K, W_V, W_U``; the biases inside heads and ``b_U`` do not change.

    Without normalisation the new model computes the same logits for any invertible T (tested to
    1e-12 relative). With RMSNorm the readers see ``norm(x T)``, and ``norm(alpha x R) = norm(x) R``
    for R orthogonal and alpha > 0 (up to the norm's eps): the global scale is removed by the norm,
    so the readers must not undo it. They get ``s T^-1 @ W`` with ``s`` the root mean square of T's
    singular values (``alpha`` for ``T = alpha R``, which makes that case exact). Any other T gives a
    different model; ``norm-symmetry`` measures how different.

    >>> from headspace.model import load
    >>> m = load("attn-only-2l")
    >>> T = adversarial_basis(m.config["d_model"], condition=100.0, seed=0)
    >>> moved = transform_model(m, T)
    >>> bool(np.allclose(moved.logits([3, 1, 4, 1]), m.logits([3, 1, 4, 1]), atol=1e-9))
    True
    """
    T, Ti = invert("T", T)
    d_model = model.config["d_model"]
    if T.shape != (d_model, d_model):
        raise ValueError(f"T must be [d_model, d_model] = {[d_model, d_model]}; got {list(T.shape)}")
    moved = model.fold_norm()
    if moved.config.get("normalization_type") is not None:
        Ti = Ti * np.sqrt(np.mean(np.linalg.svd(T, compute_uv=False) ** 2))
    for name in ("W_E", "W_pos", "W_O", "b_O"):
        setattr(moved, name, getattr(moved, name) @ T)
    for name in ("W_Q", "W_K", "W_V", "W_U"):
        setattr(moved, name, Ti @ getattr(moved, name))
    return moved


def rotation(d_model, degrees, seed=0):
    """A rotation by ``degrees`` in each of ``d_model // 2`` orthogonal planes of a seeded basis.

    ``T = Q blockdiag(R(degrees), ...) Q^T`` with Q Haar-random: 0 degrees is the identity, and the
    angle between any vector and its image is at most ``degrees``.

    >>> R = rotation(4, 30.0, seed=2)
    >>> bool(np.allclose(R @ R.T, np.eye(4))), round(float(np.trace(R)), 6)   # 4 cos 30
    (True, 3.464102)
    """
    d_model = int(as_number("d_model", d_model, lo=1))
    t = np.deg2rad(as_number("degrees", degrees))
    block = np.eye(d_model)
    for i in range(0, d_model - 1, 2):
        block[i:i + 2, i:i + 2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
    Q = random_orthogonal(d_model, seed)
    return Q @ block @ Q.T


def permutation(d_model, seed=0):
    """A seeded random permutation of the residual axes (``x @ P`` relabels them): seed 000's
    relabelling, under which every score should keep its value.

    >>> permutation(3, seed=1).sum(axis=0).tolist()
    [1.0, 1.0, 1.0]
    """
    d_model = int(as_number("d_model", d_model, lo=1))
    return np.eye(d_model)[np.random.default_rng(seed).permutation(d_model)]


def stretch(d_model, condition, seed=0):
    """A pure stretch with condition number ``condition``: ``Q diag(s) Q^T``, Q Haar-random and
    ``s`` log-spaced from 1 to ``condition``, one factor per direction.

    >>> S = stretch(4, 100.0, seed=0)
    >>> round(float(np.linalg.cond(S)), 6), bool(np.allclose(S, S.T))
    (100.0, True)
    """
    d_model = int(as_number("d_model", d_model, lo=1))
    condition = as_number("condition", condition, lo=1.0)
    Q = random_orthogonal(d_model, seed)
    return scale_directions(d_model, Q.T, condition ** np.linspace(0.0, 1.0, d_model))
