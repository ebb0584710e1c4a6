"""Ranking evaluation with declared conventions.

Metrics (ids like ``"ndcg@8"``): precision, recall, hit rate, DCG, NDCG, MRR, MAP,
R-precision, candidate recall and catalogue coverage, per query and on average, each mean
with the counts it was taken over. Every choice a metric makes is a field of
:class:`Conventions`; presets reproduce trec_eval, LightGBM, scikit-learn, ranx and Amazon
Personalize exactly.

Submodules: :mod:`~feco.evaluation.conventions` (choices and presets),
:mod:`~feco.evaluation.metrics` (ids and one module per family), :mod:`~feco.evaluation.io` (TREC
run/qrels, svmlight + predictions, interaction logs), :mod:`~feco.evaluation.letor` (LETOR and
svmlight files), :mod:`~feco.evaluation.protocols` (leave-one-out and temporal splits,
candidates, baselines, segments).

Examples
--------
>>> import polars as pl
>>> from feco.evaluation import evaluate
>>> run = pl.DataFrame({"query": [1, 1], "item": [10, 11], "score": [0.3, 0.7]})
>>> qrels = pl.DataFrame({"query": [1], "item": [10], "relevance": [1]})
>>> evaluate(run, qrels, metrics="mrr,precision@2").metrics
{'mrr': 0.5, 'precision@2': 0.5}
"""

from feco.evaluation.conventions import PRESETS, Conventions
from feco.evaluation.evaluate import (
    DEFAULT_METRICS,
    TREC_EVAL_METRICS,
    Evaluation,
    QueryCounts,
    default_metrics,
    evaluate,
    evaluate_labelled,
)
from feco.evaluation.metrics import Metric, parse_metric, parse_metrics

__all__ = [
    "DEFAULT_METRICS",
    "PRESETS",
    "TREC_EVAL_METRICS",
    "Conventions",
    "Evaluation",
    "Metric",
    "QueryCounts",
    "default_metrics",
    "evaluate",
    "evaluate_labelled",
    "parse_metric",
    "parse_metrics",
]
