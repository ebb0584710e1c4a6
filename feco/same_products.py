"""The same products' coverage a week apart, per product-age segment.

New products turn over: the products in ``product_age = new`` today are not last month's, and a
cohort of products whose values are mostly zero (a batch with no engagement yet, LETOR's
query-normalised minima) moves the segment's coverage with no product's data changing. A
failure changes the products' own values: the products sampled both today and ``LAG_DAYS``
before lose coverage between the two days. These counts (stored, the ratios derived) let the
decay rule tell the two apart (``sql/queries/alert_inputs/same_product_loss.sql``).

Counted only where the logs carry ``[logs] product_id`` and the day ``LAG_DAYS`` before was
sampled; a product sampled on one of the two days only is not in them.
"""

from __future__ import annotations

from datetime import date, timedelta

import duckdb
import polars as pl

from feco.config import Config
from feco.coverage import band_history_like, feature_values, row_segments_query, threshold_of, value_kinds
from feco.sample_folder import SampleFiles, is_sampled, sample_files
from feco.warehouse import quote, sql

LAG_DAYS = 7
DIMENSIONS = ("product_age", "age_band")  # the segments whose rows are whole products
SCHEMA = {"ds": pl.Date, "lag_days": pl.Int16, "feature": pl.String, "segment_dim": pl.String,
          "segment_value": pl.String, "n_products": pl.Int64, "n_rows_now": pl.Int64, "n_covered_now": pl.Int64,
          "n_rows_then": pl.Int64, "n_covered_then": pl.Int64}


def counts(ds: date, *, config: Config, references: dict[str, float]) -> tuple[pl.DataFrame, str | None]:
    """The ``same_products`` rows of ``ds``, and why there are none (None when counted)."""
    dims = [d for d in DIMENSIONS if (d,) in config.segments.names()]
    earlier = ds - timedelta(days=LAG_DAYS)
    if not dims:
        return empty(), "no product-age segment configured"
    if not is_sampled(earlier, config.paths.samples):
        return empty(), f"{earlier} was not sampled"
    now, then = sample_files(ds, config.paths.samples), sample_files(earlier, config.paths.samples)
    product = config.logs.product_id
    if product not in now.schema or product not in then.schema:
        return empty(), f"the samples have no column '{product}' ([logs] product_id)"
    finest = _finest(now, then, ds=ds, config=config, references=references)
    return _rolled_up(finest, dims, ds=ds, features=config.logs.features), None


def empty() -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMA)


def _finest(now: SampleFiles, then: SampleFiles, *, ds: date, config: Config,
            references: dict[str, float]) -> pl.DataFrame:
    """same_products.sql's rows: per product age and age band, the two days' counts."""
    features = config.logs.features
    covered, summed, thresholds = [], [], {}
    for index, feature in enumerate(features):
        rule = config.coverage.rule_for(feature)
        covered.append(f"count_if(v{index} {rule.op} $t{index}) AS c{index}")
        summed.append(f"sum(today.c{index}) AS now_c{index}, sum(earlier.c{index}) AS then_c{index}")
        thresholds[f"t{index}"] = threshold_of(feature, rule, references)
    key = quote(config.logs.product_id)
    carried = [f"{key} AS product_key", *feature_values(value_kinds(now.schema, config=config), config=config,
                                                         quote=quote)]
    segmented, params = row_segments_query(list(now.schema), carried, ds=ds, config=config, quote=quote)
    earlier = [f"{key} AS product_key", *feature_values(value_kinds(then.schema, config=config), config=config,
                                                        quote=quote)]
    statement = (sql("coverage/same_products").replace("{row_segments}", segmented.rstrip().rstrip(";"))
                 .replace("{earlier_columns}", ", ".join(earlier)).replace("{covered_counts}", ", ".join(covered))
                 .replace("{summed_counts}", ",\n       ".join(summed)))
    with duckdb.connect() as conn:
        now.register(conn, scanned_twice=True)
        then.register(conn, name="earlier_sample_rows")
        conn.register("band_history", band_history_like(None, now.schema.get(config.logs.query, pl.String)))
        return conn.sql(statement, params=params | thresholds).pl()


def _rolled_up(finest: pl.DataFrame, dims: list[str], *, ds: date, features: list[str]) -> pl.DataFrame:
    """A row per feature and segment of each dimension, summed from the finest rows."""
    frames = []
    for dim in dims:
        grouped = finest.group_by(dim).agg(pl.exclude("product_age", "age_band").sum())
        for index, feature in enumerate(features):
            frames.append(grouped.select(
                pl.lit(ds).alias("ds"), pl.lit(LAG_DAYS, pl.Int16).alias("lag_days"), pl.lit(feature).alias("feature"),
                pl.lit(dim).alias("segment_dim"), pl.col(dim).alias("segment_value"), "n_products", "n_rows_now",
                pl.col(f"now_c{index}").alias("n_covered_now"), "n_rows_then",
                pl.col(f"then_c{index}").alias("n_covered_then")))
    return pl.concat(frames).cast(SCHEMA).select(SCHEMA.keys()) if frames else empty()
