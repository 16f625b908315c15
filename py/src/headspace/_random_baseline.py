"""The expected ``frobenius`` score of random matrices: what ``frobenius_baseline`` subtracts.

Elhage et al. (2021) subtract it so that unrelated heads score near 0. It is used by the metric on
one pair (``headspace.composition.frobenius_baseline``) and by the all-pairs engine
(``headspace.head_pairs``); ``random_baseline`` is importable from ``headspace.composition``.
"""

from __future__ import annotations

from copy import deepcopy
from functools import lru_cache

import numpy as np

from headspace._linalg import _T, _factor, _gram, _mm, _sq_norm
from headspace.validate import as_number

__all__ = ["random_baseline"]


def random_baseline(shape_left, shape_right, *, ranks=None, samples=64, seed=0):
    r"""Monte-Carlo estimate of the expected ``frobenius`` score of random matrices: ``(mean, stderr)``.

    Draws ``samples`` independent pairs of matrices with shapes ``shape_left = (n, m)`` and
    ``shape_right = (m, p)``, entries i.i.d. standard normal (the scale does not matter: the score
    is scale-free). With ``ranks=(k, k2)`` each matrix is a product of Gaussian factors,
    ``[n, k] @ [k, m]`` and ``[m, k2] @ [k2, p]``, as an attention head's ``W_V @ W_O``.

    Estimator: the sample mean of the scores. Its standard error is ``std(scores, ddof=1) /
    sqrt(samples)``, returned alongside. For large shapes the mean is close to ``m**-0.5``
    (``E||AB||^2 / (E||A||^2 E||B||^2) = 1/m``), e.g. about 0.036 for d_model = 768.

    >>> mean, se = random_baseline((768, 768), (768, 768), ranks=(64, 64), samples=16)
    >>> round(mean, 3), se < 1e-3
    (0.036, True)
    """
    # validated here; the draw itself is cached (demos and axiom checks ask for it repeatedly)
    n, m = (int(as_number(f"shape_left[{i}]", v, lo=1)) for i, v in enumerate(shape_left))
    m2, p = (int(as_number(f"shape_right[{i}]", v, lo=1)) for i, v in enumerate(shape_right))
    if m != m2:
        raise ValueError(f"shape_right must start with {m} to match shape_left {tuple(shape_left)}; "
                         f"got {tuple(shape_right)}")
    samples = int(as_number("samples", samples, lo=2))
    if ranks is not None:
        ranks = tuple(int(as_number(f"ranks[{i}]", v, lo=1)) for i, v in enumerate(ranks))
    seed = int(as_number("seed", seed, lo=0))
    return _random_baseline(n, m, p, ranks, samples, seed)


#: Bytes of Gaussian draws above which ``random_baseline`` draws one sample at a time.
_DRAW_BYTES = 256 * 2**20


@lru_cache(maxsize=128)
def _random_baseline(n, m, p, ranks, samples, seed):
    rng = np.random.default_rng(seed)
    sizes = [n * m, m * p] if ranks is None else [n * ranks[0], ranks[0] * m, m * ranks[1], ranks[1] * p]
    if samples * sum(sizes) * 8 > _DRAW_BYTES:
        scores = _streamed_scores(rng, n, m, p, ranks, samples)
    elif ranks is None:
        A = rng.standard_normal((samples, n, m))
        B = rng.standard_normal((samples, m, p))
        scores = np.sqrt(_sq_norm(_mm(A, B)) / (_sq_norm(A) * _sq_norm(B)))
    else:
        k, k2 = ranks
        P, Zt = rng.standard_normal((samples, n, k)), rng.standard_normal((samples, k, m))
        X, Yt = rng.standard_normal((samples, m, k2)), rng.standard_normal((samples, k2, p))
        # ||P Zt X Yt||^2 through k x k Gram factors: never forms the n x p product
        FP, FY = _factor(_gram(P)), _factor(_gram(_T(Yt)))
        num = _sq_norm(_mm(_mm(FP, Zt), _mm(X, _T(FY))))
        nl = np.einsum("sij,sij->s", _gram(P), _gram(_T(Zt)))
        nr = np.einsum("sij,sij->s", _gram(X), _gram(_T(Yt)))
        scores = np.sqrt(num / (nl * nr))
    return float(scores.mean()), float(scores.std(ddof=1) / np.sqrt(samples))


def _streamed_scores(rng, n, m, p, ranks, samples):
    """The scores of ``_random_baseline`` from the same draws, one sample's matrices at a time.

    Why the draws are the same: a Generator fills ``[samples, r, c]`` in order, exactly as ``samples``
    draws of ``[r, c]`` do. The matrices of one kind are drawn for all samples before the next kind,
    so a copy of the generator is kept at the start of each kind a later kind must meet (``A`` for
    ``A @ B``; ``Zt`` for ``Zt @ X``). Memory: a few matrices of one sample, not ``samples`` of them
    (at Llama-2-7B shapes, 4 MB instead of 1 GB).
    """
    if ranks is None:
        at_A = deepcopy(rng)
        nA = [_sq_norm(rng.standard_normal((n, m))) for _ in range(samples)]
        scores = []
        for s in range(samples):
            A, B = at_A.standard_normal((n, m)), rng.standard_normal((m, p))
            scores.append(np.sqrt(_sq_norm(A @ B) / (nA[s] * _sq_norm(B))))
        return np.array(scores)
    k, k2 = ranks
    G_P = [_gram(rng.standard_normal((n, k))) for _ in range(samples)]
    at_Zt = deepcopy(rng)
    G_Z = [_gram(_T(rng.standard_normal((k, m)))) for _ in range(samples)]
    C, G_X = [], []
    for _ in range(samples):                                 # rng is now at X, at_Zt at Zt
        Zt, X = at_Zt.standard_normal((k, m)), rng.standard_normal((m, k2))
        C.append(Zt @ X)                                    # k x k2: all of Zt and X the score needs
        G_X.append(_gram(X))
    scores = []
    for s in range(samples):
        G_Y = _gram(_T(rng.standard_normal((k2, p))))
        num = _sq_norm(_factor(G_P[s]) @ C[s] @ _T(_factor(G_Y)))
        scores.append(np.sqrt(num / (np.vdot(G_P[s], G_Z[s]) * np.vdot(G_X[s], G_Y))))
    return np.array(scores)
