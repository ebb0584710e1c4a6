"""Mean average precision within a cut-off.

``AP@k = sum over relevant items at ranks r <= k of precision@r, divided by R`` (every
relevant item: trec_eval's ``map_cut``, ranx) or by ``min(R, k)`` (LightGBM's ``map@k``), per
the conventions' ``ap_divisor``; ``R`` comes from the ``ideal`` set. ``map`` without a cut-off
counts the whole list (trec_eval's ``map``). It has no tie-averaged form.

Examples
--------
>>> import polars as pl
>>> from feco.evaluation import evaluate
>>> run = pl.DataFrame({"query": [1] * 4, "item": [1, 2, 3, 4], "score": [4.0, 3, 2, 1]})
>>> qrels = pl.DataFrame({"query": [1, 1, 1], "item": [1, 3, 9], "relevance": [1, 1, 1]})
>>> evaluate(run, qrels, metrics=["map@2"]).metrics["map@2"]  # (1/1) / 3
0.3333333333333333
"""

from __future__ import annotations

import numpy as np

from feco.evaluation.metrics import Context, Definition, Metric

DEFINITIONS = (Definition("map", "optional", averages_ties=False),)


def compute(metric: Metric, context: Context) -> np.ndarray:
    """Per-query values of ``metric`` before the empty-query policy is applied."""
    ranked = context.ranked
    divisors = context.n_relevant.astype(np.float64)
    if context.conventions.ap_divisor == "min_relevant_k":
        divisors = np.minimum(divisors, metric.cutoff)
    return ranked.kernels.average_precision(
        ranked.pos_lo, ranked.pos_hi, ranked.match, ranked.before, context.relevant,
        metric.cutoff, divisors,
    )
