"""Metrics that count relevant items within a cut-off: precision, recall, hit rate, R-precision,
candidate recall.

With ``hits@k`` the number of relevant items (relevance >= ``relevance_level``) among the
first ``k`` ranked items and ``R`` the number of relevant items of the query:

- ``precision@k = hits@k / k`` -- divided by ``k`` even when the list is shorter (trec_eval,
  ranx, Personalize).
- ``recall@k = hits@k / R`` (``R`` from the conventions' ``ideal`` set); ``recall`` without a
  cut-off counts the whole list.
- ``hit_rate@k`` is 1 when ``hits@k > 0``: recall@k for leave-one-out, where ``R = 1``.
- ``r_precision = hits@R / R``.
- ``candidate_recall@k = hits@k / R_judged`` always divides by every judged relevant item. Run
  it on a first stage's candidate list (``candidate_recall`` with no cut-off: the whole list)
  to see what retrieval lost, apart from how the second stage orders what it got.

Under tie averaging, ``hits@k`` is the expected count over the orders of each tied group.

Examples
--------
Seed 002's visible list: top three ``[1, 0, 1]`` with four relevant candidates.

>>> import polars as pl
>>> from feco.evaluation import evaluate
>>> run = pl.DataFrame({"query": [1] * 4, "item": [1, 2, 3, 4], "score": [4.0, 3, 2, 1]})
>>> qrels = pl.DataFrame({"query": [1] * 4, "item": [1, 3, 5, 6], "relevance": [1] * 4})
>>> result = evaluate(run, qrels, metrics=["precision@3", "recall@3"])
>>> round(result.metrics["precision@3"], 4), result.metrics["recall@3"]
(0.6667, 0.5)
"""

from __future__ import annotations

import numpy as np

from feco.evaluation.metrics import Context, Definition, Metric

DEFINITIONS = (
    Definition("precision", "required", averages_ties=True),
    Definition("recall", "optional", averages_ties=True),
    Definition("hit_rate", "required", averages_ties=False),
    Definition("r_precision", "none", averages_ties=True),
    Definition("candidate_recall", "optional", averages_ties=True),
)


def compute(metric: Metric, context: Context) -> np.ndarray:
    """Per-query values of ``metric`` before the empty-query policy is applied."""
    ranked = context.ranked
    n_queries = len(ranked.pos_lo)
    if metric.name == "r_precision":
        cutoffs = context.n_relevant.astype(np.int64)
    else:
        cutoffs = np.full(n_queries, metric.cutoff, np.int64)
    hits = ranked.kernels.relevant_within(
        ranked.pos_lo, ranked.pos_hi, ranked.match, ranked.before, ranked.tied,
        context.relevant, cutoffs,
    )
    if metric.name == "precision":
        return hits / metric.cutoff
    if metric.name == "hit_rate":
        return (hits > 0).astype(np.float64)
    if metric.name == "candidate_recall":
        return _ratio(hits, context.n_relevant_judged)
    return _ratio(hits, context.n_relevant)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    # Queries with a zero denominator are replaced by the empty-query policy afterwards.
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out
