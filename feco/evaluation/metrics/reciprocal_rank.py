"""Mean reciprocal rank: 1 / rank of the first relevant item within the cut-off, else 0.

Personalize's ``mean_reciprocal_rank_at_25`` is ``mrr@25``; trec_eval's ``recip_rank`` has
no cut-off and equals ``mrr``. Relevance below ``relevance_level`` is ignored. It has no
tie-averaged form.

Examples
--------
Personalize's three users (seed 003): first clicks at ranks 4, 2 and 6.

>>> import polars as pl
>>> from feco.evaluation import evaluate
>>> run = pl.DataFrame({"query": [u for u in (1, 2, 3) for _ in range(25)],
...                     "item": list(range(25)) * 3, "score": list(range(25, 0, -1)) * 3})
>>> qrels = pl.DataFrame({"query": [1, 1, 2, 2, 2, 3], "item": [3, 9, 1, 3, 11, 5],
...                       "relevance": [1] * 6})
>>> round(evaluate(run, qrels, metrics=["mrr@25"]).metrics["mrr@25"], 4)
0.3056
"""

from __future__ import annotations

import numpy as np

from feco.evaluation.metrics import Context, Definition, Metric

DEFINITIONS = (Definition("mrr", "optional", averages_ties=False),)


def compute(metric: Metric, context: Context) -> np.ndarray:
    """Per-query values of ``metric`` before the empty-query policy is applied."""
    ranked = context.ranked
    return ranked.kernels.reciprocal_rank(
        ranked.pos_lo, ranked.pos_hi, ranked.match, ranked.before, context.relevant,
        metric.cutoff,
    )
