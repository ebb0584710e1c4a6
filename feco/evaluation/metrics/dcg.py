"""Discounted cumulative gain and its normalised form.

``DCG@k = sum over ranks r <= k of gain(rel_r) / log2(r + 1)``, ranks from 1, with the gain
set by the conventions (binary, linear, or ``2^rel - 1``). ``NDCG@k = DCG@k / IDCG@k`` where
IDCG@k is the DCG@k of the best ordering of the query's gains: all judged items
(``ideal="judged"``: trec_eval, ranx) or only those in the ranked list
(``ideal="candidates"``: LightGBM, scikit-learn). Without a cut-off the whole list counts.
A list shorter than ``k`` adds nothing past its end, while the ideal may still fill ``k``
ranks from the judged items. Under tie averaging each tied item gets the mean discount of the
positions its group spans (McSherry and Najork 2008; scikit-learn).

Examples
--------
Personalize's worked example (seed 003): relevant items at ranks 2 and 5 of five.

>>> import polars as pl
>>> from feco.evaluation import evaluate
>>> run = pl.DataFrame({"query": [1] * 5, "item": [1, 2, 3, 4, 5], "score": [5.0, 4, 3, 2, 1]})
>>> qrels = pl.DataFrame({"query": [1, 1], "item": [2, 5], "relevance": [1, 1]})
>>> round(evaluate(run, qrels, metrics=["ndcg@5"]).metrics["ndcg@5"], 4)
0.6241
"""

from __future__ import annotations

import numpy as np

from feco.evaluation.metrics import Context, Definition, Metric

DEFINITIONS = (
    Definition("dcg", "optional", averages_ties=True),
    Definition("ndcg", "optional", averages_ties=True),
)


def compute(metric: Metric, context: Context) -> np.ndarray:
    """Per-query values of ``metric`` before the empty-query policy is applied."""
    ranked = context.ranked
    longest = max(
        int(ranked.n_retrieved.max(initial=0)), int((ranked.pos_hi - ranked.pos_lo).max(initial=0))
    )
    depth = min(metric.cutoff, longest)
    discount = 1.0 / np.log2(np.arange(2, depth + 2, dtype=np.float64))
    cumsum = np.concatenate([[0.0], np.cumsum(discount)])
    dcg = ranked.kernels.run_dcg(
        ranked.pos_lo, ranked.pos_hi, ranked.match, ranked.before, ranked.tied,
        context.gains, metric.cutoff, discount, cumsum,
    )
    if metric.name == "dcg":
        return dcg
    ideal = ranked.kernels.ideal_dcg(
        ranked.pos_lo, ranked.pos_hi, ranked.match, context.gains, metric.cutoff,
        context.conventions.ideal == "candidates", discount,
    )
    out = np.zeros_like(dcg)
    np.divide(dcg, ideal, out=out, where=ideal > 0)
    return out
