"""Which composition metric meets which axiom: seeded random trials, one source of truth.

Why: the site's metric-lab table (run live in the browser) and the property tests call these same
functions, so the table and the tests cannot disagree. Each check builds residual-stream matrices
with known geometry and asks the metric about them. Row convention: ``x @ A`` lies in W, the row
space of the writer A (an earlier head's OV); ``x @ B`` depends only on the part of x in R, the
column space of the reader B (a later head's ``W_Q W_K^T``); the kernel of the reader is R's
orthogonal complement. A check "holds" when no trial contradicts it (within ``tol = 1e-9``).

Axioms 1-3 are Lieberum's ("Thoughts on formalizing composition", seed 002, in the form seed 000
states them); Axiom 4 is Snell's (seed 000). The token metric is given random W_E, W_U
[d_vocab, d_model] (``d_vocab = 2 d_model`` unless set) and reads B as a QK circuit.
Cost of a fresh table for d_model 8-16 (measured): about 5 ms natively and 15-25 ms in Pyodide
0.27.7; verdicts are cached per (metric, setting), so redrawing the same table is free.

>>> table = axiom_table()
>>> {m: "".join(k for k, ok in row.items() if ok) for m, row in table.items()}
{'frobenius': '2', 'frobenius_baseline': '', 'svd_bound': '2', 'subspace': '12', 'token': '4'}
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from headspace._validate import as_number
from headspace.composition import METRICS, composition_score
from headspace.symmetry import adversarial_basis

__all__ = ["AXIOMS", "Verdict", "axiom_1", "axiom_2", "axiom_3", "axiom_4", "axiom_table"]

#: What each axiom demands of a score C(A, B), in one line each (for tables and captions).
AXIOMS = {
    "1": "C = 1 exactly when A writes only where B reads (W inside R)",
    "2": "C = 0 exactly when B reads nothing A writes (W orthogonal to R)",
    "3": "C is continuous, and grows when the write space turns towards the read space",
    "4": "the order of two scores survives any change of residual basis",
}

TOL = 1e-9


@dataclass(frozen=True)
class Verdict:
    """The outcome of one axiom check: truthy when it holds; ``detail`` names the worst trial."""

    holds: bool
    detail: str

    def __bool__(self):
        return self.holds


# --------------------------------------------------------------------------- constructions (cached)

def _setting(trials, seed, d_model, d_head, d_vocab, condition):
    trials = int(as_number("trials", trials, lo=1, hi=10_000))
    d_model = int(as_number("d_model", d_model, lo=4))
    d_head = int(as_number("d_head", d_head, lo=2))
    if 2 * d_head > d_model:
        raise ValueError(f"d_head must be at most d_model / 2 = {d_model // 2} so that the read space "
                         f"and its complement both hold d_head directions; got d_head = {d_head}")
    d_vocab = 2 * d_model if d_vocab is None else int(as_number("d_vocab", d_vocab, lo=1))
    condition = as_number("condition", condition, lo=1.0)
    seed = int(as_number("seed", seed, lo=0))
    return trials, seed, d_model, d_head, d_vocab, condition


def _orth(rng, shape):
    """Orthonormal columns [..., n, k] (QR of a Gaussian)."""
    return np.linalg.qr(rng.standard_normal(shape))[0]


def _frame(rng, trials, d, k):
    """Per trial: R [d, k] (the reader's input space), N [d, d-k] (its orthogonal complement)."""
    F = _orth(rng, (trials, d, d))
    return F[..., :k], F[..., k:]


def _reader(rng, R, d):
    """B = R G Y^T: reads exactly R (column space), writes a random k-dim space."""
    trials, _, k = R.shape
    return R @ rng.standard_normal((trials, k, k)) @ np.swapaxes(rng.standard_normal((trials, d, k)), -1, -2)


def _writer(rng, Wb, X=None):
    """A = X Wb^T: writes exactly span(Wb) (row space); X random input side."""
    if X is None:
        X = rng.standard_normal(Wb.shape)
    return X @ np.swapaxes(Wb, -1, -2)


def _rotated(R, N, H, K, theta):
    """Directions w_i = cos(theta_i) R H e_i + sin(theta_i) N K e_i: principal angles theta from R."""
    return np.cos(theta)[..., None, :] * (R @ H) + np.sin(theta)[..., None, :] * (N @ K)


def _mask_cols(M, counts):
    keep = np.arange(M.shape[-1])[None, :] < np.asarray(counts)[:, None]
    return M * keep[:, None, :]


def _frozen(*arrays):
    for a in arrays:
        a.setflags(write=False)
    return arrays


@lru_cache(maxsize=64)
def _cases(axiom, trials, seed, d, k, d_vocab, condition):
    rng = np.random.default_rng([seed, int(axiom)])
    R, N = _frame(rng, trials, d, k)
    H, K = _orth(rng, (trials, k, k)), _orth(rng, (trials, d - k, k))
    B = _reader(rng, R, d)
    j = 1 + np.arange(trials) % k                               # write dimensions 1..d_head
    E = rng.standard_normal((trials, d_vocab, d)) / np.sqrt(d)
    U = rng.standard_normal((trials, d, d_vocab)) / np.sqrt(d)
    deg = np.deg2rad
    if axiom == 1:
        inside = _writer(rng, _mask_cols(R @ H, j))                                   # W in R
        partly = _writer(rng, _rotated(R, N, H, K, deg(rng.uniform(10, 80, (trials, k)))))
        more = _writer(rng, np.concatenate([R @ H, N[..., :1]], axis=-1))             # W = R + one more
        A = np.concatenate([inside, partly, more])
        return _frozen(A, np.concatenate([B] * 3), np.concatenate([E] * 3), np.concatenate([U] * 3))
    if axiom == 2:
        ortho = _writer(rng, _mask_cols(N @ K, j))                                    # W orthogonal to R
        partly = _writer(rng, _rotated(R, N, H, K, deg(rng.uniform(10, 80, (trials, k)))))
        A = np.concatenate([ortho, partly])
        return _frozen(A, np.concatenate([B] * 2), np.concatenate([E] * 2), np.concatenate([U] * 2))
    if axiom == 3:
        # continuity: a rank-d_head pair and the same pair nudged by 1e-8 of its norm
        A0 = _writer(rng, _orth(rng, (trials, d, k)))
        nudge = lambda M: M + 1e-8 * np.linalg.norm(M, axis=(-2, -1), keepdims=True) * \
            (lambda Z: Z / np.linalg.norm(Z, axis=(-2, -1), keepdims=True))(rng.standard_normal(M.shape))
        # monotonicity: the write space turns towards R (one principal angle shrinks by >= 5 deg).
        # Half the trials are generic; half let two written directions share one input while B maps
        # their read parts to nearly opposite outputs (so what A writes can cancel after B reads it).
        theta = deg(rng.uniform(10, 90, (trials, k)))
        i = rng.integers(0, k, trials)
        closer = theta.copy()
        closer[np.arange(trials), i] -= deg(rng.uniform(5, 10, trials))
        X = rng.standard_normal((trials, d, k))
        G = rng.standard_normal((trials, k, k))
        half = np.arange(trials) % 2 == 1
        X[half, :, 1] = X[half, :, 0] + 0.05 * rng.standard_normal((half.sum(), d))
        G[half, 1] = -G[half, 0] + 0.05 * rng.standard_normal((half.sum(), k))
        theta[half, 0], theta[half, 1] = deg(rng.uniform(70, 85, half.sum())), 0.0
        closer[half] = theta[half]
        closer[half, 0] -= deg(10)
        Bm = R @ H @ G @ np.swapaxes(rng.standard_normal((trials, d, k)), -1, -2)   # G acts on R H
        Af = _writer(rng, _rotated(R, N, H, K, theta), X)
        Ac = _writer(rng, _rotated(R, N, H, K, closer), X)
        A = np.concatenate([A0, nudge(A0), Af, Ac])
        Bs = np.concatenate([B, nudge(B), Bm, Bm])
        return _frozen(A, Bs, np.concatenate([E] * 4), np.concatenate([U] * 4))
    # axiom 4: one writer and four readers per trial, before and after an adversarial basis change
    m = 4
    A = _writer(rng, _orth(rng, (trials, d, k)))[:, None]
    Bs = (_orth(rng, (trials, m, d, k)) @ rng.standard_normal((trials, m, k, k))
          @ np.swapaxes(rng.standard_normal((trials, m, d, k)), -1, -2))
    T = adversarial_basis(d, condition=condition, seed=rng.integers(2**63), batch=(trials,))
    Ti = np.linalg.inv(T)
    A2 = (Ti @ A[:, 0] @ T)[:, None]                                   # OV: T^-1 A T
    B2 = Ti[:, None] @ Bs @ np.swapaxes(Ti, -1, -2)[:, None]           # QK: T^-1 B T^-T
    E2, U2 = E @ T, Ti @ U                                             # W_E T, T^-1 W_U
    return _frozen(A, Bs, E[:, None], U[:, None], A2, B2, E2[:, None], U2[:, None])


def _score(metric, A, B, E, U):
    kw = {"W_E": E, "W_U": U, "mode": "Q"} if metric == "token" else {}
    return np.asarray(composition_score(A, B, metric, **kw))


def _metric(metric):
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(repr(m) for m in METRICS)}; got {metric!r}")
    return metric


# --------------------------------------------------------------------------- the four checks

def axiom_1(metric, *, trials=8, seed=0, d_model=8, d_head=2, d_vocab=None, condition=100.0):
    """Axiom 1: ``C(A, B) = 1`` exactly when A writes only where B reads (W inside R).

    Seed 000's reading of Lieberum ("if C = 1, A should only write where B can read"), tested both
    ways on ``trials`` seeded cases of each kind: (a) W a random subspace of R of dimension 1..d_head
    must score 1; (b) W at principal angles drawn from 10..80 degrees to R, and (c) W = R plus one
    orthogonal direction, must score below 1. Lieberum's own wording (W meets B's kernel only in 0)
    is weaker: it makes almost every full-rank pair score 1, as he notes.

    >>> bool(axiom_1("subspace")), bool(axiom_1("frobenius"))
    (True, False)
    """
    c = _score(_metric(metric), *_cases(1, *_setting(trials, seed, d_model, d_head, d_vocab, condition)))
    n = len(c) // 3
    if np.any(np.abs(c[:n] - 1) > TOL):
        t = int(np.argmax(np.abs(c[:n] - 1)))
        return Verdict(False, f"A writes only inside B's read space yet scores {c[t]:.4g} (trial {t})")
    if np.any(c[n:] >= 1 - TOL):
        t = int(np.argmax(c[n:]))
        return Verdict(False, f"A writes outside B's read space yet scores {c[n + t]:.4g}")
    return Verdict(True, f"{n} pairs inside score 1; {2 * n} pairs partly outside score at most "
                         f"{c[n:].max():.4g}")


def axiom_2(metric, *, trials=8, seed=0, d_model=8, d_head=2, d_vocab=None, condition=100.0):
    """Axiom 2: ``C(A, B) = 0`` exactly when B reads nothing A writes (W orthogonal to R).

    Tested both ways: (a) W a random subspace of R's orthogonal complement (B's kernel), of
    dimension 1..d_head, must score 0; (b) W at principal angles drawn from 10..80 degrees to R must
    score above 0.

    >>> bool(axiom_2("frobenius")), bool(axiom_2("frobenius_baseline"))
    (True, False)
    """
    c = _score(_metric(metric), *_cases(2, *_setting(trials, seed, d_model, d_head, d_vocab, condition)))
    n = len(c) // 2
    if np.any(np.abs(c[:n]) > TOL):
        t = int(np.argmax(np.abs(c[:n])))
        return Verdict(False, f"A writes only into B's kernel yet scores {c[t]:.4g} (trial {t})")
    if np.any(c[n:] <= TOL):
        t = int(np.argmin(c[n:]))
        return Verdict(False, f"B reads part of what A writes yet scores {c[n + t]:.4g}")
    return Verdict(True, f"{n} orthogonal pairs score 0; {n} overlapping pairs score at least {c[n:].min():.4g}")


def axiom_3(metric, *, trials=8, seed=0, d_model=8, d_head=2, d_vocab=None, condition=100.0):
    """Axiom 3: C varies smoothly and monotonically with the overlap of W and R.

    Two tests, both must pass. Continuity: a random pair of rank d_head (so rank-deficient) and the
    same pair with each matrix moved by 1e-8 of its norm in a random direction must score within
    1e-5. Monotonicity: "more overlap" means every principal angle between W and R is no larger and
    one is smaller (here by 5-10 degrees, A's input side fixed); the score must then be strictly
    larger. Half of these trials are generic; in the other half two written directions share one
    input and B maps their read parts to nearly opposite outputs, so turning one of them towards R
    can cancel what B receives.

    >>> bool(axiom_3("frobenius")), axiom_3("subspace").detail[:30]
    (False, 'a 1e-8 nudge moves the score b')
    """
    c = _score(_metric(metric), *_cases(3, *_setting(trials, seed, d_model, d_head, d_vocab, condition)))
    n = len(c) // 4
    jump = np.abs(c[n:2 * n] - c[:n])
    if np.any(jump > 1e-5):
        return Verdict(False, f"a 1e-8 nudge moves the score by {jump.max():.3g}")
    gain = c[3 * n:] - c[2 * n:3 * n]
    if np.any(gain <= TOL):
        t = int(np.argmin(gain))
        return Verdict(False, f"turning W towards R changes the score from {c[2 * n + t]:.4g} to "
                              f"{c[3 * n + t]:.4g} (trial {t})")
    return Verdict(True, f"continuous (largest jump {jump.max():.2g}); always grows with overlap "
                         f"(smallest gain {gain.min():.3g})")


def axiom_4(metric, *, trials=8, seed=0, d_model=8, d_head=2, d_vocab=None, condition=100.0):
    """Axiom 4 (seed 000): if ``C(A, B) > C(A, D)`` then ``C(A*, B*) > C(A*, D*)`` after a change
    of residual basis T, with ``A* = T^-1 A T`` (OV) and ``B* = T^-1 B T^-T`` (QK) in our row
    convention (the paper's ``T A T^-1``, ``T^-T B T^-1``), and ``W_E T``, ``T^-1 W_U`` for token.

    Each trial draws one writer, four readers and a random T of condition number ``condition``
    (``symmetry.adversarial_basis``); the axiom fails if any of the 6 orderings flips by more than
    1e-7 on both sides.

    >>> bool(axiom_4("token")), bool(axiom_4("frobenius"))
    (True, False)
    """
    A, B, E, U, A2, B2, E2, U2 = _cases(4, *_setting(trials, seed, d_model, d_head, d_vocab, condition))
    before, after = _score(_metric(metric), A, B, E, U), _score(metric, A2, B2, E2, U2)
    gap = before[:, :, None] - before[:, None, :]
    gap2 = after[:, :, None] - after[:, None, :]
    flips = (gap > 1e-7) & (gap2 < -1e-7)
    if np.any(flips):
        t, k, l = (int(i) for i in np.argwhere(flips)[0])
        return Verdict(False, f"C(A,B)={before[t, k]:.4g} > C(A,D)={before[t, l]:.4g}, but after T "
                              f"{after[t, k]:.4g} < {after[t, l]:.4g} (trial {t})")
    return Verdict(True, f"no ordering flipped in {trials * 6} comparisons "
                         f"(largest change {np.abs(after - before).max():.2g})")


def _cached(check):
    """Verdicts are deterministic in (metric, setting), so a demo that redraws the same table pays once."""
    inner = lru_cache(maxsize=512)(lambda metric, *args: check(metric, **dict(zip(_SETTING, args))))

    def wrapper(metric, *, trials=8, seed=0, d_model=8, d_head=2, d_vocab=None, condition=100.0):
        setting = _setting(trials, seed, d_model, d_head, d_vocab, condition)
        return inner(_metric(metric), *setting)

    wrapper.__name__, wrapper.__qualname__, wrapper.__doc__ = check.__name__, check.__qualname__, check.__doc__
    wrapper.__module__ = check.__module__
    return wrapper


_SETTING = ("trials", "seed", "d_model", "d_head", "d_vocab", "condition")
axiom_1, axiom_2, axiom_3, axiom_4 = (_cached(f) for f in (axiom_1, axiom_2, axiom_3, axiom_4))
_CHECKS = {"1": axiom_1, "2": axiom_2, "3": axiom_3, "4": axiom_4}


def axiom_table(metrics=METRICS, trials=8, seed=0, **setting):
    """``{metric: {"1": bool, "2": bool, "3": bool, "4": bool}}`` for each metric.

    ``setting``: ``d_model`` (8), ``d_head`` (2), ``d_vocab`` (2 d_model), ``condition`` (100).
    Deterministic for a given seed; the constructions are cached, so a second call is cheap.

    >>> axiom_table(["frobenius"], trials=4, d_model=10)
    {'frobenius': {'1': False, '2': True, '3': False, '4': False}}
    """
    unknown = set(setting) - {"d_model", "d_head", "d_vocab", "condition"}
    if unknown:
        raise ValueError(f"unknown setting {sorted(unknown)}; expected d_model, d_head, d_vocab, condition")
    if isinstance(metrics, str):
        metrics = [metrics]
    return {_metric(m): {k: bool(check(m, trials=trials, seed=seed, **setting)) for k, check in _CHECKS.items()}
            for m in metrics}
