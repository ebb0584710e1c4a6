"""The worked examples of the seed documents (002 and 003) as tests."""

from __future__ import annotations

import math

import polars as pl
import pytest

from feco.evaluation import evaluate


def _ranked(items: list[int], query: int = 1) -> pl.DataFrame:
    """A run listing ``items`` best first."""
    return pl.DataFrame(
        {"query": [query] * len(items), "item": items,
         "score": [float(len(items) - r) for r in range(len(items))]}
    )


def _relevant(items: list[int], query: int = 1) -> pl.DataFrame:
    return pl.DataFrame({"query": [query] * len(items), "item": items,
                         "relevance": [1] * len(items)})


@pytest.mark.parametrize("preset", ["feco", "personalize", "trec_eval", "ranx"])
def test_personalize_worked_example(preset: str) -> None:
    # Seed 003: the 2nd and 5th of five recommendations are relevant, K = 5.
    result = evaluate(
        _ranked([11, 12, 13, 14, 15]), _relevant([12, 15]),
        metrics=["mrr@25", "ndcg@5", "precision@5"], conventions=preset,
    )
    assert result.metrics["mrr@25"] == 0.5
    assert round(result.metrics["ndcg@5"], 4) == 0.6241
    assert result.metrics["precision@5"] == 0.4
    expected = (1 / math.log(3) + 1 / math.log(6)) / (1 / math.log(2) + 1 / math.log(3))
    assert result.metrics["ndcg@5"] == pytest.approx(expected, abs=1e-12)


def test_personalize_mean_reciprocal_rank_example() -> None:
    # Seed 003: three users shown 25 items; their first clicks are at ranks 4, 2 and 6.
    clicks = {1: [4, 10], 2: [2, 4, 12], 3: [6]}
    run = pl.concat([_ranked(list(range(100 * u, 100 * u + 25)), u) for u in clicks])
    qrels = pl.concat(
        [_relevant([100 * u + r - 1 for r in ranks], u) for u, ranks in clicks.items()]
    )
    result = evaluate(run, qrels, metrics=["mrr@25"], conventions="personalize")
    assert round(result.metrics["mrr@25"], 4) == 0.3056
    assert result.metrics["mrr@25"] == pytest.approx((1 / 4 + 1 / 2 + 1 / 6) / 3)


def test_seed_002_precision_and_recall_at_3() -> None:
    # Top three [1, 0, 1]; four relevant candidates in all.
    result = evaluate(_ranked([1, 2, 3, 4, 5]), _relevant([1, 3, 8, 9]),
                      metrics=["precision@3", "recall@3"])
    assert result.metrics["precision@3"] == pytest.approx(2 / 3)
    assert result.metrics["recall@3"] == 0.5


def test_seed_002_visible_list_of_two() -> None:
    # relevance [0, 1, 1, 0]; two visible; three relevant in total: 0.500 and 0.333.
    result = evaluate(_ranked([1, 2, 3, 4]), _relevant([2, 3, 7]),
                      metrics=["precision@2", "recall@2"])
    assert result.metrics["precision@2"] == 0.5
    assert round(result.metrics["recall@2"], 3) == 0.333


def test_seed_002_candidate_recall_is_kept_apart_from_ordering() -> None:
    # relevant {2, 5}; retrieval kept [0, 1, 2, 3]; the ranker shows [1, 2].
    relevant = _relevant([2, 5])
    retrieval = evaluate(_ranked([0, 1, 2, 3]), relevant, metrics=["candidate_recall"])
    shown = evaluate(_ranked([1, 2]), relevant, metrics=["precision@2"])
    assert retrieval.metrics["candidate_recall"] == 0.5
    assert shown.metrics["precision@2"] == 0.5
