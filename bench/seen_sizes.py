"""An injected incident's size as feco could see it, for scoring the tier it paged at.

Two things stand between the share the generator injected and the loss feco reads:

- **The segment.** The generator confines a failure to a query band by each query's
  popularity in a usual week (``feco.generator.catalogue.week_bands``); feco bands queries by
  their share of the sampled events of its band window (``sql/coverage/query_bands.sql``), as
  a team's monitoring must. With a few thousand sampled events a day many queries sit on the
  other side of a band's edge: at 40,000 events a day a fifth or more of the covered rows
  feco calls torso are of the generator's head or tail queries, and a 66% failure of the
  generator's torso takes about 51% off feco's. A page's tier is right when it fits the loss
  in the segment it names: the injected share times the part of that segment's covered rows,
  on the day before onset, that the generator's band holds. Every other segment is the same
  in both.
- **The day's noise.** One day's coverage of a segment moves by sampling and by the day's
  own mix; at these volumes a personalisation feature in a region moves by 4–6% of its level
  from day to day. A loss within that of a tier's edge is read on either side of it. The
  noise is measured in the world's warm-up (no incident is injected before its day 14): the
  robust spread of the named segment's day-to-day changes of coverage, over √2 (one day's
  part of a change), relative to its level; the median over the incident's features.
"""

from __future__ import annotations

import math
from datetime import date, timedelta

import duckdb
import numpy as np
import polars as pl
from alert_worlds import Scenario

from feco.coverage import KEPT_DAY_EVENTS, band_history, day_events, query_bands_query
from feco.generator.calendar import _week_bands
from feco.generator.catalogue import query_table
from feco.generator.ltr_world import _catalogue
from feco.generator.schema import QUERY_BANDS
from feco.paper.datasets import default_root
from feco.storage import partition_dir
from feco.warehouse import fetch, quote

BAND = "query_band"
MAD_TO_SD = 1.4826  # a normal sd from the median absolute deviation


def seen_sizes(case: Scenario, config, conn: duckdb.DuckDBPyConnection, truth: list[dict], *,
               warm_up_until: date) -> list[dict]:
    """Each injected incident's ``share`` in the segment feco names and the ``noise`` of one
    day's reading of it there (both relative to the segment's level; see the module)."""
    generator = generator_bands(case) if any(_place(row)[0] == BAND for row in truth) else None
    return [{"share": _share(row, generator, config), "noise": _noise(conn, row, warm_up_until)} for row in truth]


def band_overlap(covered: pl.DataFrame, feco: pl.DataFrame, generator: pl.DataFrame, band: str) -> float | None:
    """The share of ``band``'s covered rows in feco's bands that are of the generator's
    ``band``: ``covered`` holds a row's query per covered value, ``feco`` and ``generator``
    each query's band (``band``, ``generator_band``). None when feco's band holds none."""
    labelled = covered.join(feco, on="query").join(generator, on="query", how="left")
    in_band = labelled.filter(pl.col("band") == band)
    return in_band.filter(pl.col("generator_band") == band).height / in_band.height if in_band.height else None


def day_noise(daily: pl.DataFrame) -> float | None:
    """One day's noise relative to the level, from ``daily`` (feature, ds, coverage): each
    feature's robust spread of its day-to-day changes (about zero: a warm-up holds no
    failure; a weekend's two swings a week do not move a median) over √2 and its mean, the
    median over features. None without two days of a feature."""
    changes = daily.sort("ds").with_columns(pl.col("coverage").diff().over("feature").alias("change"))
    per_feature = changes.group_by("feature").agg(
        (MAD_TO_SD * pl.col("change").abs().median() / math.sqrt(2)
         / pl.col("coverage").mean()).alias("noise"))
    return per_feature["noise"].drop_nulls().drop_nans().median()


def generator_bands(case: Scenario) -> pl.DataFrame:
    """query (its name in the logs), generator_band: the band the generator confines failures to."""
    if case.is_ltr:
        catalogue = _catalogue(case.world, case.seed, default_root())
        names, codes = catalogue.names, catalogue.band
    else:
        names = query_table(case.seed, case.world.zipf_exponent, case.world.group_weights).names
        codes = _week_bands(case.seed, case.world)
    return pl.DataFrame({"query": names.to_pylist(), "generator_band": np.asarray(QUERY_BANDS)[codes]})


def feco_bands(ds: date, config) -> pl.DataFrame:
    """query, band: feco's query bands of ``ds``, by its own statement and band window."""
    history = band_history(ds, config)
    conn = duckdb.connect()
    conn.register(KEPT_DAY_EVENTS, day_events(ds, config).to_arrow())
    conn.register("band_history", (history if history is not None else
                                   pl.DataFrame(schema={"query": pl.String, "n": pl.Int64})).to_arrow())
    statement, params = query_bands_query(_sample(ds, config).collect_schema().names(), config=config,
                                          quote=quote, kept=True)
    return fetch(conn, statement, params)


def _share(row: dict, generator: pl.DataFrame | None, config) -> float:
    dim, band = _place(row)
    if dim != BAND:
        return row["share"]
    day = date.fromisoformat(row["start"]) - timedelta(days=1)
    rows = _sample(day, config)
    covered = pl.concat([rows.filter(pl.col(feature).is_not_null() & (pl.col(feature) != 0))
                         .select(pl.col(config.logs.query).cast(pl.String).alias("query"))
                         for feature in _features(row)]).collect()
    overlap = band_overlap(covered, feco_bands(day, config), generator, band)
    return row["share"] if overlap is None else row["share"] * overlap


def _noise(conn: duckdb.DuckDBPyConnection, row: dict, warm_up_until: date) -> float:
    dim, value = _place(row)
    daily = fetch(conn, "SELECT feature, ds, coverage FROM feco_daily WHERE segment_dim = ? AND segment_value = ? "
                        "AND list_contains(?, feature) AND ds < ? AND coverage > 0",
                  [dim, value, _features(row), warm_up_until])
    return day_noise(daily) or 0.0


def _place(row: dict) -> tuple[str, str]:
    segment = row.get("segment")
    return (segment["dim"], segment["value"]) if segment else ("all", "all")


def _features(row: dict) -> list[str]:
    return row.get("features") or [row["feature"]]


def _sample(day: date, config) -> pl.LazyFrame:
    return pl.scan_parquet(partition_dir(config.paths.samples, day) / "window=*" / "*.parquet")
