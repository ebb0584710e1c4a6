"""Coverage states: mergeable counts per window, feature and segment.

For every sampled row (a query–product pair) and feature, a value is *present* when it is
neither NULL nor NaN and *covered* when it is present and passes the feature's rule. States
keep the counts (n_rows, n_present, n_covered), never ratios, so days, windows and segments
merge exactly. Counts are taken once at the finest segment grain and rolled up from there.
"""

from __future__ import annotations

from datetime import date

import polars as pl

from feco.config import Config, CoverageRule
from feco.errors import DataError

GLOBAL = "all"
UNKNOWN = "unknown"
_SEGMENT_PREFIX = "__segment_"

STATE_SCHEMA = {
    "ds": pl.Date,
    "window": pl.Int16,
    "feature": pl.String,
    "segment_dim": pl.String,
    "segment_value": pl.String,
    "n_rows": pl.Int64,
    "n_present": pl.Int64,
    "n_covered": pl.Int64,
}
STATUS_SCHEMA = {"ds": pl.Date, "feature": pl.String, "status": pl.String, "detail": pl.String}


def compute_states(
    sample: pl.DataFrame,
    *,
    ds: date,
    config: Config,
    references: dict[str, float] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Count rows, present and covered values per window, feature and segment.

    Parameters
    ----------
    sample
        The day's sampled rows, with a ``window`` column.
    references
        Frozen reference statistics for features whose rule is ``> reference_mean|median``.

    Returns
    -------
    The ``coverage_states`` rows and one ``feature_status`` row per configured feature
    (``ok`` or ``missing_column``: a feature absent from the logs is counted as never
    present and the run goes on).

    Examples
    --------
    >>> states, status = compute_states(sample, ds=date(2026, 1, 5), config=config)  # doctest: +SKIP
    >>> states.filter(segment_dim="all").group_by("feature").agg(
    ...     (pl.col("n_covered").sum() / pl.col("n_rows").sum()).alias("coverage"))  # doctest: +SKIP
    """
    features = config.logs.features
    missing = [f for f in features if f not in sample.columns]
    _check_numeric(sample, [f for f in features if f not in missing])
    segmented = with_segments(sample, ds=ds, config=config)
    finest = _count_finest(segmented, config=config, missing=missing, references=references or {})
    states = pl.concat([_roll_up(finest, dims, features) for dims in config.segments.names()])
    status = pl.DataFrame(
        [(ds, f, "missing_column" if f in missing else "ok",
          "column not in the logs" if f in missing else None) for f in features],
        schema=STATUS_SCHEMA, orient="row",
    )
    return states.with_columns(pl.lit(ds).alias("ds")).select(STATE_SCHEMA.keys()), status


def _check_numeric(sample: pl.DataFrame, features: list[str]) -> None:
    for feature in features:
        dtype = sample.schema[feature]
        if not (dtype.is_numeric() or dtype == pl.Boolean or dtype == pl.Null):
            raise DataError(f"feature column '{feature}' is {dtype}, not numeric")


def with_segments(sample: pl.DataFrame, *, ds: date, config: Config) -> pl.DataFrame:
    """Add one string column per segment dimension (``__segment_<dim>``); nulls read 'unknown'."""
    columns = config.logs
    needed = {
        "product_group": columns.product_group,
        "region": columns.region,
        "query_band": columns.query,
        "product_age": columns.product_first_seen,
    }
    used = {d for dims in config.segments.names() for d in dims}
    for dim in sorted(used):
        if needed[dim] not in sample.columns:
            raise DataError(f"segment column '{needed[dim]}' (for {dim}) not in the logs")
    derived = {
        "product_group": lambda: pl.col(columns.product_group).cast(pl.String),
        "region": lambda: pl.col(columns.region).cast(pl.String),
        "query_band": lambda: _query_band(sample, config=config),
        "product_age": lambda: _product_age(ds, config=config),
    }
    return sample.with_columns(
        derived[dim]().fill_null(UNKNOWN).alias(_SEGMENT_PREFIX + dim) for dim in sorted(used)
    )


def _query_band(sample: pl.DataFrame, *, config: Config) -> pl.Expr:
    """Head, torso or tail by the query's share of the day's sampled events."""
    query, event_id = config.logs.query, config.logs.event_id
    counts = (
        sample.select(event_id, query).unique(event_id).group_by(query).len()
        .sort(["len", query], descending=[True, False], nulls_last=True)
    )
    total = counts.get_column("len").sum()
    share_before = (pl.col("len").cum_sum() - pl.col("len")) / total
    head = config.segments.head_share
    bands = counts.select(
        pl.col(query),
        pl.when(share_before < head).then(pl.lit("head"))
        .when(share_before < head + config.segments.torso_share).then(pl.lit("torso"))
        .otherwise(pl.lit("tail")).alias("band"),
    )
    return pl.col(query).replace_strict(
        bands.get_column(query), bands.get_column("band"), default=None, return_dtype=pl.String
    )


def _product_age(ds: date, *, config: Config) -> pl.Expr:
    first_seen = pl.col(config.logs.product_first_seen).cast(pl.Date)
    age_days = (pl.lit(ds) - first_seen).dt.total_days()
    return (
        pl.when(first_seen.is_null()).then(pl.lit(None, pl.String))
        .when(age_days < config.segments.new_product_days).then(pl.lit("new"))
        .otherwise(pl.lit("established"))
    )


def _count_finest(
    sample: pl.DataFrame, *, config: Config, missing: list[str], references: dict[str, float]
) -> pl.DataFrame:
    keys = ["window", *(c for c in sample.columns if c.startswith(_SEGMENT_PREFIX))]
    counts = [pl.len().alias("n_rows")]
    for feature in config.logs.features:
        if feature in missing:
            counts += [pl.lit(0, pl.Int64).alias(f"p:{feature}"), pl.lit(0, pl.Int64).alias(f"c:{feature}")]
            continue
        rule = config.coverage.rule_for(feature)
        present, covered = _indicators(feature, rule, references)
        counts += [present.sum().alias(f"p:{feature}"), covered.sum().alias(f"c:{feature}")]
    return sample.group_by(keys).agg(counts)


def _indicators(feature: str, rule: CoverageRule, references: dict[str, float]):
    value = pl.col(feature).cast(pl.Float64)
    present = value.is_not_null() & value.is_not_nan()
    threshold = rule.threshold
    if rule.reference is not None:
        if feature not in references:
            raise DataError(f"no reference {rule.reference} stored for feature '{feature}'")
        threshold = references[feature]
    passes = (value > threshold) if rule.op == ">" else (value != threshold)
    return present.cast(pl.Int64), (present & passes).cast(pl.Int64)


def _roll_up(finest: pl.DataFrame, dims: tuple[str, ...], features: list[str]) -> pl.DataFrame:
    columns = [_SEGMENT_PREFIX + d for d in dims]
    sums = [pl.col(c).sum() for c in finest.columns if c == "n_rows" or c[:2] in ("p:", "c:")]
    grouped = finest.group_by(["window", *columns]).agg(sums)
    segment_value = pl.concat_str(columns, separator=" x ") if dims else pl.lit(GLOBAL)
    grouped = grouped.with_columns(
        pl.lit(" x ".join(dims) or GLOBAL).alias("segment_dim"), segment_value.alias("segment_value")
    )
    return pl.concat(
        grouped.select(
            "window", pl.lit(f).alias("feature"), "segment_dim", "segment_value", "n_rows",
            pl.col(f"p:{f}").cast(pl.Int64).alias("n_present"),
            pl.col(f"c:{f}").cast(pl.Int64).alias("n_covered"),
        )
        for f in features
    )


def reference_statistics(sample: pl.DataFrame, *, config: Config) -> dict[str, float]:
    """Mean or median of each reference-rule feature's present values over ``sample``.

    Computed once over the configured reference period and stored: a threshold taken from the
    current day would make coverage about 50% by construction.
    """
    statistics = {}
    for feature in config.logs.features:
        rule = config.coverage.rule_for(feature)
        if rule.reference is None:
            continue
        if feature not in sample.columns:
            raise DataError(f"feature '{feature}' is not in the reference period's logs")
        values = sample.get_column(feature).cast(pl.Float64).fill_nan(None).drop_nulls()
        if values.len() == 0:
            raise DataError(f"feature '{feature}' has no values in the reference period")
        statistics[feature] = float(values.mean() if rule.reference == "mean" else values.median())
    return statistics
