"""How sure a number measured on data is: rank correlation and bootstrap intervals over batches.

Why: a score judged against a measurement on data (path ablation on an evaluation batch, a
benchmark's timings) inherits that data's noise. One batch gives one number; another batch gives
another. Measured on several independent batches, the spread of a statistic is estimated by the
bootstrap: draw as many batches as there are, with replacement, recompute the statistic, repeat,
and read the central ``level`` share of the results (a percentile interval). Two statistics
computed from the same batches are correlated, so whether they differ is judged on their paired
difference, resampled on the very same draws, not by comparing two separate intervals.

``per_batch`` is always an array whose first axis is the batch, ``[n_batches, ...]``; a
``statistic`` maps such an array (the original or a resample) to one float. The default
statistic is the mean over batches of a ``[n_batches]`` array.

>>> import numpy as np
>>> per_batch = np.array([1.0, 2.0, 3.0, 4.0])
>>> interval(per_batch).estimate                  # the mean of the four batches
2.5
>>> lo, hi = interval(per_batch)[1:]
>>> bool(1.0 <= lo < 2.5 < hi <= 4.0)
True
"""

from __future__ import annotations

import functools
import math
import sys
from typing import Callable, NamedTuple

import numpy as np

from headspace.validate import as_array

__all__ = ["ranks", "spearman", "spearman_along", "partial_spearman", "precision_at_k", "holm", "p_value", "t_tail", "t_quantile",
           "cluster_draws", "distinct_draws", "expanded_interval", "bootstrap", "interval", "paired_difference", "distinguishable", "Interval",
           "spearman_interval", "spearman_difference"]

#: Resamples per bootstrap unless asked otherwise: the 2.5% and 97.5% percentiles of 2000 draws
#: move by about 0.01 between seeds for a rank correlation over 16 pairs.
RESAMPLES = 2000


class Interval(NamedTuple):
    """A statistic on the whole data and its bootstrap percentile interval ``[lo, hi]``."""

    estimate: float
    lo: float
    hi: float

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in ``[lo, hi]``.

        >>> Interval(0.5, 0.2, 0.9).contains(0.0)
        False
        """
        return bool(self.lo <= value <= self.hi)


def ranks(x) -> np.ndarray:
    """Average ranks 1..n along the last axis of ``x`` (ties share the mean of the ranks they span).

    Why one function: every rank correlation in the package (``spearman``, ``spearman_along``, the
    benchmark's tables, ``causal.rank_correlation``) ranks here, so ties are treated alike
    everywhere. Sorting, not pairwise comparison: O(n log n) per row.

    >>> ranks([3.0, 1.0, 3.0, 2.0, 3.0]).tolist()           # the three 3s share ranks 3, 4, 5
    [4.0, 1.0, 4.0, 2.0, 4.0]
    >>> ranks([[2.0, 1.0], [5.0, 5.0]]).tolist()           # row by row
    [[2.0, 1.0], [1.5, 1.5]]
    """
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have at least one item on its last axis; got shape {list(x.shape)}")
    order = np.argsort(x, axis=-1, kind="stable")
    xs = np.take_along_axis(x, order, -1)
    n = x.shape[-1]
    rows = int(np.prod(x.shape[:-1], dtype=np.int64))
    xs2 = xs.reshape(rows, n)
    new_run = np.ones((rows, n), dtype=bool)
    np.not_equal(xs2[:, 1:], xs2[:, :-1], out=new_run[:, 1:])
    run = np.cumsum(new_run, axis=1) - 1 + (np.arange(rows) * n)[:, None]     # a global id per run of ties
    pos = np.broadcast_to(np.arange(1.0, n + 1), (rows, n))
    sums = np.bincount(run.ravel(), pos.ravel(), minlength=rows * n)
    counts = np.bincount(run.ravel(), minlength=rows * n)
    mean = (sums / np.maximum(counts, 1))[run].reshape(x.shape)
    out = np.empty_like(mean)
    np.put_along_axis(out, order, mean, -1)
    return out


def spearman_along(x, y) -> np.ndarray:
    """Spearman's rank correlation along the last axis, leading axes broadcast; NaN where either is constant.

    Why: a table correlates many scores with many resampled ground truths at once
    (``x [S, 1, n]`` against ``y [1, R, n]`` gives ``[S, R]``); ranks are computed once per row
    before broadcasting. A constant row has no order: its correlation is undefined (NaN), which
    callers average over with ``nanmean`` or report. ``spearman`` is the checked one-pair form.

    >>> import numpy as np
    >>> spearman_along(np.array([[1, 2, 3], [3, 2, 1], [1, 1, 1]]), np.array([1, 2, 4])).tolist()
    [1.0, -1.0, nan]
    """
    rx, ry = ranks(x), ranks(y)
    if rx.shape[-1] != ry.shape[-1]:
        raise ValueError(f"x and y must have the same length on their last axis; got shapes {list(rx.shape)} "
                         f"and {list(ry.shape)}")
    rx = rx - rx.mean(-1, keepdims=True)
    ry = ry - ry.mean(-1, keepdims=True)
    num = np.einsum("...i,...i->...", *np.broadcast_arrays(rx, ry))
    den = np.broadcast_to(np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1)), num.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, np.clip(num / np.where(den > 0, den, 1.0), -1.0, 1.0), np.nan)


def spearman(x, y) -> float:
    """Spearman's rank correlation of ``x`` and ``y``: Pearson's correlation of their ranks.

    Why ranks: a composition score and a loss increase live on different scales; what can agree
    is their order. Ties get the average of the ranks they span, so equal values count equally
    whichever comes first. A constant sequence has no order, and raises.

    >>> spearman([1, 2, 3, 4], [10, 20, 30, 40]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    >>> round(spearman([1, 2, 2, 3], [1, 3, 2, 4]), 4)     # the tie ranks 2.5 and 2.5
    0.9487
    """
    x = as_array("x", x, ndim=1)
    y = as_array("y", y, ndim=1)
    if x.size != y.size or x.size < 2:
        raise ValueError(f"x and y must have the same length, at least 2; got lengths {x.size} and {y.size}")
    for name, v in (("x", x), ("y", y)):
        if np.all(v == v[0]):
            raise ValueError(f"{name} must not be constant (a constant has no ranks to correlate); "
                             f"got every value equal to {v[0]}")
    return float(spearman_along(x, y))


def _mean(per_batch: np.ndarray) -> float:
    """The default statistic: the mean of a ``[n_batches]`` array."""
    if per_batch.ndim != 1:
        raise ValueError(f"per_batch must have shape [n_batches] for the default statistic (the mean); "
                         f"got {list(per_batch.shape)}: pass a statistic")
    return float(per_batch.mean())


def _check(per_batch, statistic, resamples, seed, level=None):
    """``per_batch`` as a checked array and ``statistic`` (the mean when None); checks the options."""
    arr = as_array("per_batch", per_batch)
    if arr.ndim < 1 or arr.shape[0] < 2:
        raise ValueError(f"per_batch must have at least 2 batches on its first axis; got shape {list(arr.shape)}")
    if statistic is None:
        statistic = _mean
    elif not callable(statistic):
        raise ValueError(f"statistic must be a function of a [n_batches, ...] array; got {type(statistic).__name__}")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be an integer >= 1; got {resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an integer; got {seed!r}")
    if level is not None and not (isinstance(level, (int, float)) and 0 < level < 1):
        raise ValueError(f"level must be a number strictly between 0 and 1; got {level!r}")
    return arr, statistic


def _draws(n_batches: int, resamples: int, seed: int) -> np.ndarray:
    """``[resamples, n_batches]`` batch indices, drawn with replacement: the same for a given seed."""
    return np.random.default_rng(seed).integers(0, n_batches, (resamples, n_batches))


def bootstrap(per_batch, statistic: Callable | None = None, resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """``[resamples]``: ``statistic`` of ``per_batch`` resampled over its batches, with replacement.

    Why: the spread of these values estimates how much the statistic would move on another draw
    of as many batches. The draws depend only on ``seed`` and the number of batches, so two
    statistics bootstrapped with the same seed see the same resamples (paired).

    >>> import numpy as np
    >>> bootstrap(np.array([2.0, 2.0, 2.0]), resamples=3).tolist()    # no spread, nothing to resample
    [2.0, 2.0, 2.0]
    """
    arr, statistic = _check(per_batch, statistic, resamples, seed)
    return np.array([float(statistic(arr[idx])) for idx in _draws(arr.shape[0], resamples, seed)])


def _percentiles(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    lo, hi = np.quantile(values, [tail, 1 - tail])
    return float(lo), float(hi)


def interval(per_batch, statistic: Callable | None = None, level: float = 0.95,
             resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """``statistic`` of all of ``per_batch`` and its bootstrap percentile interval at ``level``.

    Why percentiles: they need no assumption that the statistic is normal, and a correlation,
    bounded by 1, often is not.

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> effects = rng.normal(np.arange(8.0), 3.0, (20, 8))      # 20 batches of 8 noisy effects
    >>> score = np.arange(8.0)                                  # a score that ranks them truly
    >>> r = interval(effects, lambda e: spearman(score, e.mean(0)))
    >>> bool(r.lo <= r.estimate <= r.hi <= 1.0)
    True
    """
    arr, statistic = _check(per_batch, statistic, resamples, seed, level)
    return Interval(float(statistic(arr)), *_percentiles(bootstrap(arr, statistic, resamples, seed), level))


def paired_difference(per_batch, statistic_a: Callable, statistic_b: Callable, level: float = 0.95,
                      resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """``statistic_a - statistic_b`` on all of ``per_batch``, and its paired bootstrap interval.

    Why paired: two statistics of the same batches (two scores correlated with one path ablation)
    move together from batch to batch. Their difference, recomputed on each resample, keeps that
    shared part out; two separate intervals that overlap say nothing about whether they differ.

    >>> import numpy as np
    >>> per_batch = np.array([[1.0, 1.1], [2.0, 2.1], [3.0, 3.1], [4.0, 4.1]])
    >>> d = paired_difference(per_batch, lambda b: b[:, 1].mean(), lambda b: b[:, 0].mean())
    >>> round(d.estimate, 6), round(d.lo, 6), round(d.hi, 6)     # b is always a + 0.1
    (0.1, 0.1, 0.1)
    """
    for name, f in (("statistic_a", statistic_a), ("statistic_b", statistic_b)):
        if not callable(f):
            raise ValueError(f"{name} must be a function of a [n_batches, ...] array; got {type(f).__name__}")
    return interval(per_batch, lambda b: float(statistic_a(b)) - float(statistic_b(b)), level, resamples, seed)


def distinguishable(per_batch, statistic_a: Callable, statistic_b: Callable, level: float = 0.95,
                    resamples: int = RESAMPLES, seed: int = 0) -> bool:
    """Whether the paired interval of ``statistic_a - statistic_b`` at ``level`` excludes zero.

    Why: a sentence that says one score ranks pairs better than another needs this to be True;
    when it is False the data do not tell the two apart, and the sentence must say so.

    >>> import numpy as np
    >>> noise = np.random.default_rng(1).normal(0, 1, 30)
    >>> per_batch = np.stack([noise, noise + 0.5], axis=1)          # b = a + 0.5, plus shared noise
    >>> distinguishable(per_batch, lambda b: b[:, 1].mean(), lambda b: b[:, 0].mean())
    True
    >>> same = np.random.default_rng(2).normal(0, 1, (30, 2))      # two columns of the same law
    >>> distinguishable(same, lambda b: b[:, 0].mean(), lambda b: b[:, 1].mean())
    False
    """
    d = paired_difference(per_batch, statistic_a, statistic_b, level, resamples, seed)
    return not d.contains(0.0)


def _spearman_draws(xs: list[np.ndarray], per_batch, resamples: int, seed: int, level) -> tuple:
    """Checked inputs of the vectorised Spearman bootstrap: the rank-centred ``xs`` [k, n], the
    mean of ``per_batch`` over all batches [n], and over each resample's batches [resamples, n]."""
    arr, _ = _check(per_batch, None, resamples, seed, level)
    if arr.ndim != 2:
        raise ValueError(f"per_batch must have shape [n_batches, n] (one measurement of each of n items "
                         f"per batch); got {list(arr.shape)}")
    centred = []
    for i, x in enumerate(xs):
        name = "x" if len(xs) == 1 else ("x_a", "x_b")[i]
        x = as_array(name, x, ndim=1)
        if x.size != arr.shape[1] or x.size < 2:
            raise ValueError(f"{name} must have one value per item of per_batch, n = {arr.shape[1]} >= 2; "
                             f"got length {x.size}")
        if np.all(x == x[0]):
            raise ValueError(f"{name} must not be constant (a constant has no ranks to correlate); "
                             f"got every value equal to {x[0]}")
        r = ranks(x)
        centred.append(r - r.mean())
    means = arr[_draws(arr.shape[0], resamples, seed)].mean(axis=1)
    return np.stack(centred), arr.mean(axis=0), means


def _spearman_rows(centred: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Spearman of each rank-centred x [k, n] with each row of ``rows`` [r, n]: [r, k]."""
    r = ranks(rows)
    r -= r.mean(axis=1, keepdims=True)
    norms = np.sqrt((r * r).sum(axis=1))
    if np.any(norms == 0):
        raise ValueError("per_batch must not average to a constant on any resample (no ranks to correlate); "
                         "got a constant mean")
    return np.clip((r @ centred.T) / norms[:, None] / np.sqrt((centred * centred).sum(axis=1)), -1.0, 1.0)


def spearman_interval(x, per_batch, level: float = 0.95, resamples: int = RESAMPLES, seed: int = 0) -> Interval:
    """Spearman of a fixed ``x`` [n] with the batch mean of ``per_batch`` [n_batches, n], with its interval.

    Why: the common case of the articles, a weight score (fixed) against path ablation measured on
    each batch. It equals ``interval(per_batch, lambda b: spearman(x, b.mean(0)), ...)`` on the
    same resamples, computed for all of them at once (one ``ranks`` call), which is
    about a hundred times faster than a loop of ``spearman`` calls.

    >>> import numpy as np
    >>> effects = np.random.default_rng(0).normal(np.arange(8.0), 3.0, (20, 8))
    >>> r = spearman_interval(np.arange(8.0), effects)
    >>> slow = interval(effects, lambda b: spearman(np.arange(8.0), b.mean(0)))
    >>> bool(np.allclose(r, slow))
    True
    """
    centred, whole, means = _spearman_draws([x], per_batch, resamples, seed, level)
    estimate = float(_spearman_rows(centred, whole[None])[0, 0])
    return Interval(estimate, *_percentiles(_spearman_rows(centred, means)[:, 0], level))


def spearman_difference(x_a, x_b, per_batch, level: float = 0.95, resamples: int = RESAMPLES,
                        seed: int = 0) -> Interval:
    """Spearman of ``x_a`` minus that of ``x_b``, each with the batch mean of ``per_batch``, paired.

    Why: two scores judged against the same measurement share its batch-to-batch noise; the
    difference on each resample keeps it out (see ``paired_difference``, which this equals).
    ``not spearman_difference(...).contains(0)`` says the two rank correlations differ.

    >>> import numpy as np
    >>> effects = np.random.default_rng(0).normal(np.arange(8.0), 3.0, (20, 8))
    >>> d = spearman_difference(np.arange(8.0), np.arange(8.0)[::-1], effects)
    >>> d.lo > 0                          # the true order beats the reversed one on every resample
    True
    """
    centred, whole, means = _spearman_draws([x_a, x_b], per_batch, resamples, seed, level)
    est = _spearman_rows(centred, whole[None])[0]
    per = _spearman_rows(centred, means)
    return Interval(float(est[0] - est[1]), *_percentiles(per[:, 0] - per[:, 1], level))


# --------------------------------------------------------------------------- the benchmark's questions

def partial_spearman(x, y, z) -> np.ndarray:
    """Spearman of ``x`` and ``y`` with ``z``'s ranks partialled out, along the last axis (broadcast).

    Why: a score that correlates with a ground truth only because both grow with the heads' size
    adds nothing to size. The partial rank correlation asks what ``x`` says about ``y`` beyond
    what ``z`` (a size score such as ``norm_product``) already says: the correlation of the parts
    of their ranks that a straight line in ``z``'s ranks does not explain,
    ``(r_xy - r_xz r_yz) / sqrt((1 - r_xz^2)(1 - r_yz^2))`` (Spearman's r throughout). NaN where
    ``x`` or ``y`` is constant or a copy of ``z``'s order (nothing left to correlate).

    >>> import numpy as np
    >>> size = np.arange(10.0)
    >>> signal = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1.0])
    >>> truth = size + 5 * signal
    >>> round(float(spearman_along(signal, truth)), 2), round(float(partial_spearman(signal, truth, size)), 2)
    (0.74, 0.98)
    >>> bool(np.isnan(partial_spearman(size, truth, size)))      # size itself adds nothing to size
    True
    """
    r_xy, r_xz, r_yz = spearman_along(x, y), spearman_along(x, z), spearman_along(y, z)
    den = np.sqrt(np.clip((1 - r_xz ** 2) * (1 - r_yz ** 2), 0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(den > 1e-12, (r_xy - r_xz * r_yz) / np.where(den > 1e-12, den, 1.0), np.nan)
    return np.clip(out, -1.0, 1.0)


def precision_at_k(score, positive, k) -> np.ndarray:
    """Expected share of positives among the ``k`` highest ``score`` items, ties broken at random.

    Why: a researcher shortlists the top pairs of a score and inspects them; the question is how
    many of the shortlisted are real. ``k = 1`` is the top-1 hit rate. Ties at the cut count in
    proportion (an item tied with ``t`` others for the last ``j`` places is in with probability
    ``j / t``), so a constant score gets the base rate, not an artefact of sort order. ``score``
    ``[..., n]`` and ``positive`` ``[..., n]`` (bool) broadcast; ``k`` an integer or an array of
    the leading shape; NaN where ``k < 1``.

    >>> precision_at_k([0.9, 0.8, 0.1, 0.3], [True, False, True, False], 2)
    0.5
    >>> precision_at_k([1.0, 1.0, 1.0, 1.0], [True, False, False, False], 1)   # the base rate
    0.25
    """
    s = np.asarray(score, dtype=float)
    p = np.asarray(positive, dtype=bool)
    above = (s[..., None, :] > s[..., :, None]).sum(-1)                  # how many score strictly higher
    tied = (s[..., None, :] == s[..., :, None]).sum(-1)                  # how many equal, itself included
    k = np.asarray(k, dtype=float)
    kk = k[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        inside = np.clip((kk - above) / tied, 0.0, 1.0)                  # P(item in the top k)
        out = (inside * p).sum(-1) / k
    out = np.where(k >= 1, out, np.nan)
    return float(out) if out.ndim == 0 else out


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of ``p_values`` for a family of comparisons (any shape).

    Why: a table that makes many comparisons will show some at 5% by chance; Holm (1979) keeps
    the chance of any false claim in the family under the level, with no assumption on how the
    comparisons depend on each other, and is never less powerful than Bonferroni. The adjusted
    p of the i-th smallest of m is ``max_{j<=i} min(1, (m - j + 1) p_(j))``. NaN entries are left
    out of the family and stay NaN.

    >>> holm([0.01, 0.04, 0.03, 0.5]).tolist()
    [0.04, 0.09, 0.09, 0.5]
    """
    p = np.asarray(p_values, dtype=float)
    flat = p.ravel()
    ok = np.flatnonzero(np.isfinite(flat))
    if np.any((flat[ok] < 0) | (flat[ok] > 1)):
        raise ValueError(f"p_values must lie in [0, 1]; got {flat[ok].min()} to {flat[ok].max()}")
    out = np.full(flat.shape, np.nan)
    m = ok.size
    order = ok[np.argsort(flat[ok], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * flat[order]))
    out[order] = adjusted
    return out.reshape(p.shape)


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued fraction (modified Lentz).

    Why here: Student's t tail is I_x(df/2, 1/2), and the package runs on numpy alone (Pyodide).
    The fraction converges fast for ``x < (a + 1) / (a + b + 2)``; above that the symmetry
    ``I_x(a, b) = 1 - I_{1-x}(b, a)`` is used.

    >>> round(_incomplete_beta(0.5, 2.0, 2.0), 12)       # symmetric law: half its mass below 1/2
    0.5
    """
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _incomplete_beta(1.0 - x, b, a)
    log_front = a * math.log(x) + b * math.log1p(-x) - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)) - math.log(a)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction


def t_tail(t: float, df: float) -> float:
    """Two-sided tail of Student's t with ``df`` degrees of freedom: P(|T| >= |t|).

    Why t: a mean over ``n`` units whose spread is estimated from the same ``n`` is t-distributed
    with ``n - 1`` degrees of freedom, not normal; with 9 units the normal tail at 4 standard
    errors is 6e-5, the t tail 0.004 (the gap that matters for a correction over many comparisons).

    >>> round(t_tail(2.306004, 8), 4), round(t_tail(1.959964, 10**7), 4)
    (0.05, 0.05)
    """
    if not df > 0:
        raise ValueError(f"df must be positive (degrees of freedom); got {df!r}")
    t = abs(float(t))
    if math.isinf(t):
        return 0.0
    if math.isinf(df):
        return math.erfc(t / math.sqrt(2))  # the normal law, t's limit
    return _incomplete_beta(df / (df + t * t), df / 2, 0.5)


@functools.lru_cache(maxsize=256)  # a report asks for the same few (level, df) thousands of times
def t_quantile(level: float, df: float) -> float:
    """The ``t`` with ``t_tail(t, df) == 1 - level``: the half-width, in standard errors, of a
    two-sided interval at ``level`` (``df`` very large gives the normal's 1.96 at 0.95).

    >>> round(t_quantile(0.95, 8), 4), round(t_quantile(0.95, 2), 4), round(t_quantile(0.95, 10**7), 4)
    (2.306, 4.3027, 1.96)
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1; got {level!r}")
    lo, hi = 0.0, 1.0
    while t_tail(hi, df) > 1 - level:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_tail(mid, df) > 1 - level else (lo, mid)
        if hi - lo < 1e-12 * hi:
            break
    return (lo + hi) / 2


def p_value(draws, estimate: float, n: int, null: float = 0.0) -> float:
    """Two-sided p-value that a statistic equals ``null``, from its bootstrap ``draws`` over ``n`` units.

    Why a tail, not a count of draws: a count cannot go below ``1 / len(draws)``, too coarse for a
    Holm family of dozens of comparisons. Why Student's t with ``n - 1`` degrees of freedom, not the
    normal law: the standard error is itself estimated from the ``n`` units (the top level of the
    bootstrap, configurations in the zoo), and with few units the normal tail claims far more than
    they show (9 units, 4.8 standard errors: normal 1.5e-6, t 0.0013).
    Why ``n`` again: resampling ``n`` units gives a spread ``sqrt((n - 1) / n)`` of the true one;
    ``se`` is the draws' standard deviation widened by ``sqrt(n / (n - 1))``, as in
    ``expanded_interval``, so a p-value and the interval beside it agree (p < 1 - level about when
    the interval excludes ``null``).
    NaN when the draws have no spread. Never exactly 0: where the tail underflows it is the smallest
    positive normal float, read "below 2.2e-308". Far in the tail it extrapolates beyond what the
    draws show.

    >>> import numpy as np
    >>> d = np.random.default_rng(0).normal(0.0, 1.0, 4000)
    >>> round(p_value(d, 1.96, n=1000), 3)          # many units: about the normal p
    0.05
    >>> round(p_value(d, 1.96, n=3), 3)             # three units: sd widened by sqrt(3 / 2), t with 2 df
    0.25
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise ValueError(f"n must be an integer >= 2 (the units resampled); got {n!r}")
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    if not np.isfinite(estimate) or sd == 0:
        return float("nan")
    se = sd * math.sqrt(n / (n - 1))
    return max(t_tail(abs(estimate - null) / se, n - 1), sys.float_info.min)


def cluster_draws(groups, resamples: int, seed: int = 0) -> np.ndarray:
    """``[resamples + 1, n_items]`` counts: how often each item enters each draw of a two-level bootstrap.

    Why two levels: the zoo's models are seeds of configurations; a claim about "models like
    these" must resample the configurations as well as the seeds within each, or it treats the
    configurations as fixed. ``groups`` gives each item's group (a configuration); each draw picks
    as many groups as there are, with replacement, then within each picked group as many of its
    items as it has, with replacement. Row 0 counts every item once (the estimate on all the data).

    >>> cluster_draws(["a", "a", "b"], 2, seed=1).tolist()    # draw 2: group a twice, its items twice each
    [[1, 1, 1], [0, 2, 1], [2, 2, 0]]
    """
    labels = list(groups)
    if not labels:
        raise ValueError("groups must name at least one item's group; got none")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise ValueError(f"resamples must be an integer >= 1; got {resamples!r}")
    names = list(dict.fromkeys(labels))
    members = [np.flatnonzero(np.array([g == n for g in labels])) for n in names]
    rng = np.random.default_rng(seed)
    out = np.zeros((resamples + 1, len(labels)), dtype=np.int64)
    out[0] = 1
    for r in range(1, resamples + 1):
        for g in rng.integers(0, len(names), len(names)):
            np.add.at(out[r], members[g][rng.integers(0, len(members[g]), len(members[g]))], 1)
    return out


def distinct_draws(n: int) -> int:
    """How many different multisets a bootstrap draw of ``n`` items from ``n`` can give: C(2n-1, n).

    Why: with few items the bootstrap has few distinct values to make an interval of: three seeds
    give ten draws, eight configurations 6,435.

    >>> distinct_draws(3), distinct_draws(8)
    (10, 6435)
    """
    return math.comb(2 * n - 1, n)


def expanded_interval(draws, estimate: float, n: int, level: float = 0.95) -> Interval:
    """The percentile interval of ``draws``, widened about their median so that it covers ``level``
    for a mean over ``n`` units: by ``sqrt(n / (n - 1)) * t / z``.

    Why: resampling ``n`` items estimates the variance of a mean as ``(n - 1) / n`` of the usual
    unbiased estimate (a third too small for three items, an eighth for eight), and the spread so
    estimated from ``n`` items calls for Student's quantile ``t`` with ``n - 1`` degrees of freedom,
    not the normal's ``z`` (at 95%: 2.31 against 1.96 for nine items, 4.30 for three). Widening by
    both is Hesterberg's (2015) "expanded" percentile interval, done about the median so that it
    needs no draws beyond the extremes. ``n`` is the number of top-level units resampled. NaN draws
    (a draw where the statistic is undefined) are left out.

    >>> import numpy as np
    >>> d = np.random.default_rng(0).normal(0, 1, 4000)
    >>> r = expanded_interval(d, 0.0, 3)
    >>> mid = float(np.median(d))
    >>> round((r.hi - mid) / (float(np.quantile(d, 0.975)) - mid), 3)      # sqrt(3 / 2) * 4.303 / 1.960
    2.689
    """
    d = np.asarray(draws, dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return Interval(float(estimate), float("nan"), float("nan"))
    if not (isinstance(n, (int, np.integer)) and n >= 2):
        raise ValueError(f"n must be an integer >= 2 (the units resampled); got {n!r}")
    lo, hi = _percentiles(d, level)
    mid = float(np.median(d))
    f = math.sqrt(n / (n - 1)) * t_quantile(level, n - 1) / t_quantile(level, math.inf)
    return Interval(float(estimate), mid + f * (lo - mid), mid + f * (hi - mid))