"""Daily attribution: how much the serving model leans on each feature, per segment and day.

The score step explains some of the day's sampled rows with exact TreeSHAP
(:func:`~feco.ranker.importance.shap_values`) and sums |SHAP| per feature and segment (every
dimension and cross coverage counts by), so a feature's share of the attribution sits beside its
coverage in the same segment: when a feature loses coverage in region DE, its share there falls
with it. Exact TreeSHAP costs about a hundred predictions a row (docs/benchmarks.md), so rows
are drawn:

- all traffic, and every segment that cannot page, from one uniform draw of ``rows`` rows of
  the day (``[ranker] shap_rows``): the draw's rows that fall in the segment;
- every segment that can page (as ``[alerts.incidents]`` says: ``page_min_share`` of the day's
  rows, crosses and age bands only when they page) from its own uniform draw of
  ``segment_rows`` of its rows (``[ranker] shap_segment_rows``). 250 rows of the day hold ~37
  of a 15% segment: a rank-10 feature's 90% drop there moved its share there by ~1.8 sd of that
  draw's noise, within the noise of a clean day; 200 rows of its own see it at ~4 sd and more.

Every row has one uniform draw (``feco.ranker.rows.DRAW``, seeded by the day); a segment's draw
is its rows with the lowest draws, so one row explained serves every segment it was drawn for,
and each segment's rows are a simple random sample of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import numpy as np
import polars as pl

from feco.config import Incidents
from feco.ranker.importance import shap_values
from feco.ranker.model import TrainedRanker
from feco.ranker.rows import DRAW

SHAP_DAILY_SCHEMA = {"ds": pl.Date, "run_id": pl.String, "feature": pl.String, "segment_dim": pl.String,
                     "segment_value": pl.String, "rows_sampled": pl.Int64, "rows_explained": pl.Int64,
                     "abs_shap_sum": pl.Float64}
# Rows kept while reading: enough that a segment's lowest draws are among them but for a chance
# far below one in a million (kept ~ Poisson(1.5 n + 10) for n wanted).
MARGIN, SLACK = 1.5, 10


@dataclass(frozen=True)
class ShapDraws:
    """Which of a day's rows the attribution explains: the ``rows`` lowest draws of the day
    (all traffic and the segments that cannot page) and the ``segment_rows`` lowest of each
    segment in ``pageable`` (``"dim\\x00value"``); ``threshold``: the draw below which a row
    is kept while reading the day."""

    day_rows: int
    rows: int
    segment_rows: int
    pageable: frozenset[str]
    threshold: float


def plan_draws(segment_rows: pl.DataFrame, *, rows: int, per_segment: int, incidents: Incidents) -> ShapDraws:
    """The day's draws from its rows per segment (``segment_dim``, ``segment_value``,
    ``n_rows``, the ('all', 'all') row among them) and the paging settings.

    Examples
    --------
    >>> counts = pl.DataFrame({"segment_dim": ["all", "region", "region", "region x query_band"],
    ...                        "segment_value": ["all", "DE", "BR", "DE x head"], "n_rows": [10_000, 1_500, 300, 900]})
    >>> draws = plan_draws(counts, rows=250, per_segment=200, incidents=Incidents())
    >>> sorted(draws.pageable), round(draws.threshold, 4)  # BR holds 3% of the rows, a cross never pages
    (['region\\x00DE'], 0.2067)
    """
    day = int(segment_rows.filter(pl.col("segment_dim") == "all").get_column("n_rows").sum())
    pageable = segment_rows.filter(_pageable(incidents, day))
    wanted = [(MARGIN * rows + SLACK) / max(day, 1)]
    wanted += [(MARGIN * per_segment + SLACK) / n for n in pageable.get_column("n_rows").to_list()] if per_segment else []
    keys = pageable.select(pl.concat_str("segment_dim", pl.lit("\x00"), "segment_value")).to_series().to_list()
    return ShapDraws(day, rows, per_segment, frozenset(keys if per_segment else ()), min(1.0, max(wanted)))


def _pageable(incidents: Incidents, day: int) -> pl.Expr:
    """Segments a person can be paged about (as feco.alerts.incidents pages): not all traffic,
    not crosses nor age bands unless they page, ``page_min_share`` of the day's rows."""
    dim = pl.col("segment_dim")
    return ((dim != "all") & (pl.lit(incidents.page_crosses) | ~dim.str.contains(" x ", literal=True))
            & (pl.lit(incidents.page_age_bands) | (dim != "age_band"))
            & (pl.col("n_rows") >= incidents.page_min_share * day))


def daily_shap(frame: pl.DataFrame, model: TrainedRanker, *, ds: date, run_id: str,
               segments: list[tuple[str, ...]], draws: ShapDraws) -> pl.DataFrame:
    """Sums of |SHAP| per feature and segment over each segment's drawn rows (``shap_daily``).

    Parameters
    ----------
    frame
        The day's rows kept while reading it (those with a draw below ``draws.threshold``,
        or all of them): the model's features, DRAW, and one label column per segment
        dimension used in ``segments`` (:func:`feco.ranker.rows.label_rows`).
    segments
        Segment dimensions as column tuples, ``()`` for all traffic and two or more for a
        cross (``config.segments.names()``).
    draws
        Which rows each segment draws (:func:`plan_draws`).

    Examples
    --------
    >>> from feco.ranker.model import train_ranker
    >>> frame = pl.DataFrame({"qid": [1, 1, 2, 2], "label": [0, 1, 1, 0], "region": ["DE", "DE", "US", "US"],
    ...                       "x": [0.1, 0.9, 0.8, 0.2], "y": [0.0, 0.0, 0.0, 0.0], DRAW: [0.5, 0.1, 0.2, 0.9]})
    >>> model = train_ranker(frame, features=["x", "y"], num_boost_round=2,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> draws = ShapDraws(day_rows=4, rows=2, segment_rows=1, pageable=frozenset({"region\\x00US"}), threshold=1.0)
    >>> rows = daily_shap(frame, model, ds=date(2026, 3, 20), run_id="r", segments=[(), ("region",)], draws=draws)
    >>> rows.filter(feature="x").select("segment_dim", "segment_value", "rows_sampled", "rows_explained").rows()
    [('all', 'all', 4, 2), ('region', 'DE', 4, 1), ('region', 'US', 4, 1)]
    >>> rows.filter(feature="y").get_column("abs_shap_sum").to_list()  # a feature the model never splits on
    [0.0, 0.0, 0.0]
    """
    uniform = pl.col(DRAW).rank("ordinal") <= draws.rows
    members = {" x ".join(dims) or "all": _drawn(dims, draws, uniform) for dims in segments}
    marked = frame.with_columns(**{f"drawn:{name}": member for name, member in members.items()})
    explained = marked.filter(pl.any_horizontal(f"drawn:{name}" for name in members))
    if explained.is_empty():
        return pl.DataFrame(schema=SHAP_DAILY_SCHEMA)
    contributions = np.abs(shap_values(model, explained))
    labelled = explained.select(*{d for dims in segments for d in dims}, *(f"drawn:{n}" for n in members)).with_columns(
        pl.from_numpy(contributions, schema=model.features))
    parts = [_sums(labelled.filter(pl.col(f"drawn:{' x '.join(dims) or 'all'}")), dims, model.features)
             for dims in segments]
    return (pl.concat(parts)
            .unpivot(model.features, index=["segment_dim", "segment_value", "rows_explained"],
                     variable_name="feature", value_name="abs_shap_sum")
            .with_columns(pl.lit(ds).alias("ds"), pl.lit(run_id).alias("run_id"),
                          pl.lit(draws.day_rows).alias("rows_sampled"))
            .select(list(SHAP_DAILY_SCHEMA)).cast(SHAP_DAILY_SCHEMA)
            .sort("feature", "segment_dim", "segment_value"))


def _drawn(dims: tuple[str, ...], draws: ShapDraws, uniform: pl.Expr) -> pl.Expr:
    """Whether a row is in its segment's draw: among the segment's lowest draws when the
    segment can page, else in the day's uniform draw."""
    name = " x ".join(dims) or "all"
    value = pl.concat_str(list(dims), separator=" x ") if dims else pl.lit("all")
    own = pl.col(DRAW).rank("ordinal").over(value) <= draws.segment_rows
    pageable = (pl.lit(name + "\x00") + value).is_in(pl.Series(sorted(draws.pageable), dtype=pl.String).implode())
    return pl.when(pageable).then(own).otherwise(uniform)


def _sums(labelled: pl.DataFrame, dims: tuple[str, ...], features: list[str]) -> pl.DataFrame:
    """|SHAP| sums and rows per value of one segment dimension (or cross)."""
    value = pl.concat_str(list(dims), separator=" x ") if dims else pl.lit("all")
    return (labelled.group_by(value.alias("segment_value"))
            .agg(pl.len().alias("rows_explained"), pl.col(features).sum())
            .with_columns(pl.lit(" x ".join(dims) or "all").alias("segment_dim")))
