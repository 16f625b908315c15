"""headspace.stats against slow, obvious references: ranks and correlations by hand loops, the
bootstrap by an explicit loop over resamples, and the coverage of its interval on a known law."""

import math

import numpy as np
import pytest

from headspace import stats
from headspace.causal import rank_correlation


def slow_ranks(v):
    """Rank of each item: 1 + how many are smaller + half of how many others equal it."""
    return [1 + sum(w < x for w in v) + (sum(w == x for w in v) - 1) / 2 for x in v]


def slow_spearman(x, y):
    rx, ry = slow_ranks(list(x)), slow_ranks(list(y))
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den


@pytest.mark.parametrize("seed", range(30))
def test_spearman_matches_a_hand_loop_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    x = rng.integers(0, 5, n).astype(float)      # few distinct values: many ties
    y = rng.normal(size=n) if seed % 2 else rng.integers(0, 3, n).astype(float)
    if len(set(x)) < 2 or len(set(y)) < 2:
        pytest.skip("a constant draw")
    assert stats.spearman(x, y) == pytest.approx(slow_spearman(x, y), abs=1e-12)
    assert stats.spearman(x, y) == pytest.approx(rank_correlation(x, y), abs=1e-12)   # the package's older one


def test_ranks_are_average_ranks():
    assert stats.ranks(np.array([3.0, 1.0, 3.0, 2.0, 3.0])).tolist() == [4.0, 1.0, 4.0, 2.0, 4.0]
    assert stats.ranks(np.array([5.0, 5.0])).tolist() == [1.5, 1.5]


@pytest.mark.parametrize("seed", range(10))
def test_ranks_and_spearman_along_rows_equal_the_hand_loop(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, (3, 1, 9)).astype(float)                     # ties, and constant rows sometimes
    b = rng.normal(size=(1, 5, 9))
    assert stats.ranks(a[:, 0]).tolist() == [slow_ranks(row) for row in a[:, 0].tolist()]
    got = stats.spearman_along(a, b)
    assert got.shape == (3, 5)
    for i in range(3):
        for j in range(5):
            if len(set(a[i, 0])) < 2:
                assert np.isnan(got[i, j])
            else:
                assert got[i, j] == pytest.approx(slow_spearman(a[i, 0], b[0, j]), abs=1e-12)


def test_spearman_invariants():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=16), rng.normal(size=16)
    r = stats.spearman(x, y)
    assert stats.spearman(y, x) == pytest.approx(r)
    assert stats.spearman(np.exp(x), y ** 3) == pytest.approx(r)          # monotone maps keep ranks
    assert stats.spearman(-x, y) == pytest.approx(-r)
    assert stats.spearman(x, x) == 1.0


@pytest.mark.parametrize("x, y, words", [
    ([1.0, 2.0], [1.0, 2.0, 3.0], "same length"),
    ([1.0], [2.0], "at least 2"),
    ([1.0, 1.0, 1.0], [1.0, 2.0, 3.0], "x must not be constant"),
    ([1.0, 2.0, 3.0], [4.0, 4.0, 4.0], "y must not be constant"),
    ([1.0, float("nan")], [1.0, 2.0], "x must be finite"),
    ([[1.0, 2.0]], [1.0, 2.0], "x must have 1 dimensions"),
])
def test_spearman_bad_input(x, y, words):
    with pytest.raises(ValueError, match=words):
        stats.spearman(x, y)


def test_bootstrap_is_an_explicit_resampling_loop():
    rng = np.random.default_rng(0)
    per_batch = rng.normal(size=(7, 3))
    statistic = lambda b: float(b[:, 0].mean() - b[:, 2].max())      # noqa: E731
    got = stats.bootstrap(per_batch, statistic, resamples=50, seed=4)
    draws = np.random.default_rng(4).integers(0, 7, (50, 7))
    want = [statistic(np.stack([per_batch[i] for i in row])) for row in draws]
    assert got.tolist() == pytest.approx(want)


def test_interval_is_the_percentiles_of_the_bootstrap():
    rng = np.random.default_rng(1)
    per_batch = rng.normal(size=25)
    r = stats.interval(per_batch, level=0.9, resamples=400, seed=2)
    values = sorted(stats.bootstrap(per_batch, resamples=400, seed=2))
    assert r.estimate == pytest.approx(per_batch.mean())
    assert r.lo == pytest.approx(np.quantile(values, 0.05)) and r.hi == pytest.approx(np.quantile(values, 0.95))
    assert values[0] <= r.lo < r.hi <= values[-1]


def test_interval_of_a_mean_covers_the_truth_about_as_often_as_it_says():
    # 200 experiments of 30 batches from N(1, 1): the 90% interval should miss the true mean about 20 times
    misses = sum(not stats.interval(np.random.default_rng(s).normal(1.0, 1.0, 30), level=0.9,
                                    resamples=300, seed=s).contains(1.0) for s in range(200))
    assert 8 <= misses <= 36


def test_paired_difference_sees_through_shared_noise():
    # a shared batch effect far larger than the difference: separate intervals overlap, the paired one does not
    rng = np.random.default_rng(5)
    shared = rng.normal(0, 1.0, 24)
    per_batch = np.stack([shared, shared + 0.2 + rng.normal(0, 0.01, 24)], axis=1)
    a, b = (lambda x: x[:, 0].mean()), (lambda x: x[:, 1].mean())
    ia, ib = stats.interval(per_batch, a), stats.interval(per_batch, b)
    assert ia.hi > ib.lo                                                  # the separate intervals overlap
    d = stats.paired_difference(per_batch, b, a)
    assert d.estimate == pytest.approx(0.2, abs=0.01) and 0 < d.lo < d.hi
    assert stats.distinguishable(per_batch, b, a) and stats.distinguishable(per_batch, a, b)
    assert not stats.distinguishable(per_batch, a, a)


def test_correlation_interval_over_batches():
    # the use in the articles: a fixed score against an effect measured on each batch
    rng = np.random.default_rng(0)
    truth = np.linspace(0, 1, 16)
    effects = truth + rng.normal(0, 0.3, (20, 16))
    good, bad = truth, truth[::-1]
    r = stats.interval(effects, lambda e: stats.spearman(good, e.mean(0)))
    assert r.estimate == pytest.approx(stats.spearman(good, effects.mean(0)))
    assert 0.5 < r.lo <= r.estimate <= r.hi <= 1.0
    assert stats.distinguishable(effects, lambda e: stats.spearman(good, e.mean(0)),
                                 lambda e: stats.spearman(bad, e.mean(0)))


@pytest.mark.parametrize("kwargs, words", [
    ({"per_batch": [1.0]}, "at least 2 batches"),
    ({"per_batch": [[1.0, 2.0], [3.0, 4.0]]}, "pass a statistic"),
    ({"per_batch": [1.0, 2.0], "statistic": 3}, "statistic must be a function"),
    ({"per_batch": [1.0, 2.0], "resamples": 0}, "resamples must be an integer >= 1"),
    ({"per_batch": [1.0, 2.0], "level": 1.0}, "level must be a number strictly between 0 and 1"),
    ({"per_batch": [1.0, 2.0], "seed": 1.5}, "seed must be an integer"),
    ({"per_batch": [1.0, float("inf")]}, "per_batch must be finite"),
])
def test_interval_bad_input(kwargs, words):
    with pytest.raises(ValueError, match=words):
        stats.interval(**kwargs)


def test_paired_bad_input():
    with pytest.raises(ValueError, match="statistic_b must be a function"):
        stats.paired_difference([1.0, 2.0], np.mean, None)


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_spearman_equals_the_generic_bootstrap(seed):
    rng = np.random.default_rng(seed)
    effects = rng.normal(np.linspace(0, 1, 16), 0.5, (20, 16))
    x_a, x_b = rng.normal(size=16), np.round(rng.normal(size=16))        # x_b has ties
    fast = stats.spearman_interval(x_a, effects, resamples=300, seed=seed)
    slow = stats.interval(effects, lambda b: stats.spearman(x_a, b.mean(0)), resamples=300, seed=seed)
    assert np.allclose(fast, slow, atol=1e-12)
    fast_d = stats.spearman_difference(x_a, x_b, effects, level=0.9, resamples=300, seed=seed)
    slow_d = stats.paired_difference(effects, lambda b: stats.spearman(x_a, b.mean(0)),
                                     lambda b: stats.spearman(x_b, b.mean(0)), level=0.9, resamples=300, seed=seed)
    assert np.allclose(fast_d, slow_d, atol=1e-12)


def test_row_ranks_with_ties():
    m = np.array([[3.0, 1.0, 3.0, 2.0], [1.0, 1.0, 1.0, 2.0]])
    assert stats.ranks(m).tolist() == [slow_ranks(row) for row in m.tolist()]


@pytest.mark.parametrize("args, words", [
    (([1.0, 2.0, 3.0], [[1.0, 2.0], [3.0, 4.0]]), "x must have one value per item"),
    (([1.0, 1.0], [[1.0, 2.0], [3.0, 4.0]]), "x must not be constant"),
    (([1.0, 2.0], [1.0, 2.0]), r"per_batch must have shape \[n_batches, n\]"),
    (([1.0, 2.0], [[1.0, 1.0], [2.0, 2.0]]), "must not average to a constant"),
])
def test_spearman_interval_bad_input(args, words):
    with pytest.raises(ValueError, match=words):
        stats.spearman_interval(*args)
