"""Catalogue coverage: the share of the catalogue that appears in anyone's top k.

``coverage@k = |items in the first k of at least one query's list, within the catalogue| /
|catalogue|``, over every query of the run, judged or not; relevance plays no part. The
catalogue defaults to every item seen in the run or the judgments (Personalize: the items of
the interactions and items datasets). The top k follows the tie rule, so coverage has no
tie-averaged form.

Examples
--------
>>> import polars as pl
>>> from feco.evaluation import evaluate
>>> run = pl.DataFrame({"query": [1, 1, 2, 2], "item": [1, 2, 1, 3], "score": [2.0, 1, 2, 1]})
>>> qrels = pl.DataFrame({"query": [1, 2], "item": [2, 3], "relevance": [1, 1]})
>>> evaluate(run, qrels, metrics=["coverage@1"], catalogue=[1, 2, 3, 4]).metrics["coverage@1"]
0.25
"""

from __future__ import annotations

import numpy as np
import polars as pl

from feco.evaluation._kernels import TIE_INPUT_ORDER
from feco.evaluation.metrics import Definition, Metric
from feco.evaluation.ranked import RankedJudgments, read_only

DEFINITIONS = (Definition("coverage", "required", averages_ties=False, per_query=False),)


def compute_run(metric: Metric, ranked: RankedJudgments, catalogue: pl.Series) -> float | None:
    """Coverage of ``catalogue`` by the run's top ``metric.k``; None for an empty catalogue."""
    if catalogue.len() == 0:
        return None
    scores = ranked.scores
    if ranked.tie_mode == TIE_INPUT_ORDER:
        keys = np.zeros(scores.shape[0], np.int64)
    else:
        keys = ranked.ordered_run_keys()
    rows = ranked.kernels.top_k_rows(*read_only(ranked.run_lo, ranked.run_hi, keys, scores), metric.cutoff,
                      ranked.tie_mode)
    shown = ranked.run.get_column("item").gather(rows).unique()
    return int(shown.is_in(catalogue.implode()).sum()) / catalogue.len()
