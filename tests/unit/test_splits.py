"""headspace.splits: the held-out rule over many splits of the configurations."""

from __future__ import annotations

import numpy as np
import pytest

from headspace import scorecard, splits
from headspace.scorecard import ZooData


@pytest.fixture(scope="module")
def data() -> ZooData:
    return ZooData.synthetic(np.random.default_rng(3), n_families=6, n_seeds=3)


def test_a_real_signal_carries_over_on_every_split(data):
    out = splits.many_splits(data, "auroc", n_seeds=30)
    assert out["chosen_counts"] == {"signal": out["n_directions"]}
    assert out["first_on_other"] == out["n_directions"] == 2 * out["n_splits"]
    assert out["both_ways"] == out["n_splits"] and out["worst_rank"]["signal"] == 1


def test_splits_are_distinct_and_counted_once(data):
    out = splits.many_splits(data, "spearman", n_seeds=40)
    keys = {frozenset((frozenset(r["halves"]["A"]), frozenset(r["halves"]["B"]))) for r in out["splits"]}
    assert len(keys) == out["n_splits"] <= 40
    # six families of one task split three and three: ten distinct splits, all among 40 seeds
    assert out["n_splits"] == 10
    assert sum(out["rank_counts"].values()) == out["n_directions"]
    assert out["top_on_other"] >= out["first_on_other"]


def test_seed_zero_is_held_outs_split(data):
    out = splits.many_splits(data, "spearman", n_seeds=1)
    a, b = scorecard.split_configurations(data, 0)
    assert out["splits"][0]["halves"] == {"A": a, "B": b}


def test_a_rule_chooses_only_among_candidates(data):
    out = splits.many_splits(data, "auroc", n_seeds=10, candidates=["noise", "norm_product"])
    assert set(out["chosen_counts"]) <= {"noise", "norm_product"}


@pytest.mark.parametrize("kwargs, word", [({"statistic": "kendall"}, "statistic"),
                                          ({"ground_truth": "nope"}, "ground_truth"),
                                          ({"n_seeds": 0}, "n_seeds")])
def test_bad_arguments_are_named(data, kwargs, word):
    with pytest.raises(ValueError, match=word):
        splits.many_splits(data, **kwargs)


def test_a_float_tie_shares_first_rank():
    # 28/39 reached by two float sums one step apart is one value: both first, the next one third
    tied = 28 / 39
    v = np.array([np.nextafter(tied, 1), tied, 0.5, 0.9])
    assert splits._rank(v, 0) == splits._rank(v, 1) == 2
    assert splits._rank(v, 3) == 1 and splits._rank(v, 2) == 4
    # a real difference, far above the tolerance, still ranks
    assert splits._rank(np.array([tied, tied + 1e-6]), 0) == 2
