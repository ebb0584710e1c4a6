"""Daily attribution: how much the serving model leans on each feature, per segment and day.

The score step explains the day's sample with exact TreeSHAP (:func:`~feco.ranker.importance.shap_values`)
and sums |SHAP| per feature and segment (every dimension and cross coverage counts by), so a
feature's share of the attribution sits beside its coverage in the same segment: when a
feature loses coverage in region DE, its share there falls with it and comes back when it is
fixed (docs/ranker.md has the figures on generated logs). Exact TreeSHAP costs about a
hundred predictions a row (docs/benchmarks.md), so a day with more than ``rows`` sampled rows
is explained on a seeded sample of that many rows, and the table says how many. Rows, not
whole events: attribution is per row, and independent rows give a tighter mean per segment
than the same number of rows in fewer ranked lists.
"""

from __future__ import annotations

from datetime import date

import numpy as np
import polars as pl

from feco.ranker.importance import shap_values
from feco.ranker.model import TrainedRanker

SHAP_DAILY_SCHEMA = {"ds": pl.Date, "run_id": pl.String, "feature": pl.String, "segment_dim": pl.String,
                     "segment_value": pl.String, "rows_sampled": pl.Int64, "rows_explained": pl.Int64,
                     "abs_shap_sum": pl.Float64}


def daily_shap(frame: pl.DataFrame, model: TrainedRanker, *, ds: date, run_id: str,
               segments: list[tuple[str, ...]], rows: int, seed: int) -> pl.DataFrame:
    """Sums of |SHAP| per feature and segment of ``frame``'s rows (``shap_daily`` rows).

    Parameters
    ----------
    frame
        The day's sampled rows (the model's features) with one label column per segment
        dimension used in ``segments`` (``feco.ranker.daily.events_frame(...,
        labelled=True)``).
    segments
        Segment dimensions as column tuples, ``()`` for all traffic and two or more for a
        cross (``config.segments.names()``).
    rows
        Explain all rows when there are at most this many, else a seeded sample of them.

    Examples
    --------
    >>> from feco.ranker.model import train_ranker
    >>> frame = pl.DataFrame({"qid": [1, 1, 2, 2], "label": [0, 1, 1, 0], "region": ["DE", "DE", "US", "US"],
    ...                       "x": [0.1, 0.9, 0.8, 0.2], "y": [0.0, 0.0, 0.0, 0.0]})
    >>> model = train_ranker(frame, features=["x", "y"], num_boost_round=2,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> rows = daily_shap(frame, model, ds=date(2026, 3, 20), run_id="r", segments=[(), ("region",)],
    ...                   rows=3, seed=1)
    >>> rows.filter(feature="x").select("segment_dim", "segment_value", "rows_sampled", "rows_explained").rows()
    [('all', 'all', 4, 3), ('region', 'DE', 4, 2), ('region', 'US', 4, 1)]
    >>> rows.filter(feature="y").get_column("abs_shap_sum").to_list()  # a feature the model never splits on
    [0.0, 0.0, 0.0]
    """
    explained = frame if frame.height <= rows else frame.sample(rows, seed=seed)
    if explained.is_empty():
        return pl.DataFrame(schema=SHAP_DAILY_SCHEMA)
    contributions = np.abs(shap_values(model, explained))
    labelled = explained.select(*{d for dims in segments for d in dims}).with_columns(
        pl.from_numpy(contributions, schema=model.features))
    parts = [_sums(labelled, dims, model.features) for dims in segments]
    return (pl.concat(parts)
            .unpivot(model.features, index=["segment_dim", "segment_value", "rows_explained"],
                     variable_name="feature", value_name="abs_shap_sum")
            .with_columns(pl.lit(ds).alias("ds"), pl.lit(run_id).alias("run_id"),
                          pl.lit(frame.height).alias("rows_sampled"))
            .select(list(SHAP_DAILY_SCHEMA)).cast(SHAP_DAILY_SCHEMA)
            .sort("feature", "segment_dim", "segment_value"))


def _sums(labelled: pl.DataFrame, dims: tuple[str, ...], features: list[str]) -> pl.DataFrame:
    """|SHAP| sums and rows per value of one segment dimension (or cross)."""
    value = pl.concat_str(list(dims), separator=" x ") if dims else pl.lit("all")
    return (labelled.group_by(value.alias("segment_value"))
            .agg(pl.len().alias("rows_explained"), pl.col(features).sum())
            .with_columns(pl.lit(" x ".join(dims) or "all").alias("segment_dim")))
