"""Metric ids are parsed once, strictly."""

from __future__ import annotations

import pytest

from feco.errors import UsageError
from feco.evaluation import Metric, parse_metric, parse_metrics


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ndcg@8", Metric("ndcg", 8)),
        (" NDCG@4 ", Metric("ndcg", 4)),
        ("map", Metric("map", None)),
        ("r-precision", Metric("r_precision", None)),
        ("hit-rate@10", Metric("hit_rate", 10)),
        ("candidate_recall@100", Metric("candidate_recall", 100)),
    ],
)
def test_ids_parse_to_name_and_cutoff(text: str, expected: Metric) -> None:
    metric = parse_metric(text)
    assert metric == expected
    assert parse_metric(metric.id) == metric


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ndgc@8", "unknown metric"),
        ("ndcg@0", "positive integer"),
        ("ndcg@x", "positive integer"),
        ("precision", "needs a cut-off"),
        ("coverage", "needs a cut-off"),
        ("r_precision@5", "takes no cut-off"),
    ],
)
def test_bad_ids_are_usage_errors(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_metric(text)


def test_lists_keep_order_and_drop_repeats() -> None:
    assert [m.id for m in parse_metrics("mrr@10,ndcg@4, mrr@10 ,")] == ["mrr@10", "ndcg@4"]
    with pytest.raises(UsageError, match="no metric"):
        parse_metrics(" , ")
