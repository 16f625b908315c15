"""score-intervals draws the shipped tables, not numbers of its own: its default view is the
scorecard the benchmark article's tables print, any other group the rows of benchmark.json."""

from __future__ import annotations

import json

import pytest

from headspace import store
from headspace_site.demos import REGISTRY
from headspace_site.demos.score_benchmark import SCORES, row
from headspace_site.figure.names import METRIC_NAMES


def dots(fig) -> list[list]:
    """Each ground truth's dots, in score order (the traces with markers, the legend's)."""
    return [tr["x"] for tr in fig["data"] if tr.get("mode") == "markers"]


def spans(fig) -> list[list]:
    return [tr["x"] for tr in fig["data"] if tr.get("mode") == "lines" and tr.get("name") != "no information"]


@pytest.mark.parametrize("statistic", ["spearman", "auroc"])
def test_the_default_is_the_scorecard(statistic):
    card = json.loads((store.models_dir() / "scorecard.json").read_bytes())
    fig = REGISTRY["score-intervals"].run({"statistic": statistic})["figure"]
    truths = [g for g in card["ground_truths"] if f"{g}|task" in card["scorecards"]]
    assert len(dots(fig)) == len(truths)
    for got, span, truth in zip(dots(fig), spans(fig), truths):
        stats = card["scorecards"][f"{truth}|task"]["stats"][statistic]
        assert got == [stats[s][0] for s in SCORES]
        assert span == [v for s in SCORES for v in (stats[s][1], stats[s][2], None)]


def test_a_family_is_its_rows_of_the_benchmark_table():
    fig = REGISTRY["score-intervals"].run({"group": "induction-none-attn-2l", "mode": "K"})["figure"]
    first = dots(fig)[0]
    assert first == [row(s, "mean-all", "induction-none-attn-2l", "K")["spearman"] for s in SCORES]


def test_rows_are_named_as_the_articles_name_scores():
    fig = REGISTRY["score-intervals"].run({})["figure"]
    assert fig["layout"]["yaxis"]["ticktext"] == [METRIC_NAMES[s] for s in SCORES]
    best = REGISTRY["score-intervals"].run({})["outputs"]["best"]
    assert len(best) == 1 and set(best) <= set(METRIC_NAMES.values())
