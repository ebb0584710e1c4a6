"""The Spark engine (``engine = "spark"``): sampling and the finest counts run in Spark.

Same results as the DuckDB engine, by construction: events are ranked by (first timestamp,
event id) and the positions taken are ``feco.sampling.systematic_positions``, so the same
events are chosen; the counts are ``sql/coverage/finest_counts.sql`` itself, run by Spark SQL,
and roll up into states in ``feco.coverage``. Samples land where the DuckDB engine puts them
(``samples/ds=…/window=N/``), with the same ``_windows.parquet``, and publish into the same
DuckDB warehouse.

The session comes from ``[spark]`` (``master``, ``conf``); left unset under spark-submit, its
settings apply. Paths are given to Spark as they are configured (``s3://…`` needs the
cluster's S3 filesystem; see docs/lake.md).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pyarrow as pa

from feco import storage
from feco.config import Config
from feco.coverage import (
    band_history_like,
    finest_counts_query,
    states_from_finest,
    value_kinds,
)
from feco.errors import DataError, FecoError, UsageError
from feco.log_tables import is_table
from feco.sample_files import WINDOWS_FILE
from feco.sampling import (
    FILE,
    LogFiles,
    WindowFiles,
    WindowSummary,
    check_one_file_per_event,
    check_some_events,
    describe_read_failure,
    partition_dir,
    replace_day,
    systematic_positions,
    window_files,
    window_summary_frame,
)


def session(config: Config):
    """The Spark session for feco's jobs (created once per process)."""
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.appName("feco").config("spark.ui.showConsoleProgress", "false")
               # local files as feco's checks read them: a stale or foreign .crc beside a log
               # file (hidden, so never read) must not fail Hadoop's checksum verification
               .config("spark.hadoop.fs.file.impl", "org.apache.hadoop.fs.RawLocalFileSystem"))
    if config.spark.master:
        builder = builder.master(config.spark.master)
    for key, value in config.spark.conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # finest_counts.sql quotes "window" as DuckDB does; windows and dates are UTC.
    spark.conf.set("spark.sql.ansi.enabled", "true")
    spark.conf.set("spark.sql.ansi.doubleQuotedIdentifiers", "true")
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    return spark


def spark_path(location: storage.Location) -> str:
    return f"file://{Path(location).resolve()}" if isinstance(location, Path) else location


def write_sample(ds: date, config: Config, *, allow_incomplete: bool = False) -> pl.DataFrame:
    """Sample the day in Spark and write it as the DuckDB engine does; returns the window
    summary. Each window's events are ranked in one Spark task (two columns of them). The
    input checks are the DuckDB engine's own (``window_files``, ``check_one_file_per_event``)."""
    if is_table(config.paths.logs):
        raise UsageError(f"the Spark engine reads Hive-style Parquet folders, not the log table {config.paths.logs}: "
                         'use engine = "duckdb" for a table (docs/lake.md)')
    spark = session(config)
    _, windows = window_files(ds, config, allow_incomplete=allow_incomplete)
    summaries, writes = [], []
    for window in windows:
        _describe_jobs(spark, f"feco sample {ds} window {window.window.index}: choose events")
        rows, summary = _reading(window.files, _window_sample, spark, window, ds=ds, config=config)
        summaries.append(summary)
        if rows is not None:
            writes.append((window, rows))
    check_some_events(ds, summaries)

    def write(staging: storage.Location) -> None:
        for window, rows in writes:
            _describe_jobs(spark, f"feco sample {ds} window {window.window.index}: write rows")
            folder = spark_path(storage.join(staging, f"window={window.window.index}"))
            _reading(window.files, rows.write.mode("overwrite").parquet, folder)

    summary = window_summary_frame(summaries)
    replace_day(ds, config, write, summary)
    return summary


def _describe_jobs(spark, description: str) -> None:
    """Name the jobs that follow in Spark's UI and event log (bench/spark_stages.py reads them)."""
    spark.sparkContext.setJobDescription(description)


def _reading(files: LogFiles, action, *args, **kwargs):
    """``action(*args, **kwargs)``, a Spark action on log files; a failure Spark reports names
    the file at fault."""
    try:
        return action(*args, **kwargs)
    except FecoError:
        raise
    except Exception as error:  # noqa: BLE001 - Spark's errors come through Py4J in many types
        raise DataError(describe_read_failure(files, error)) from None


def _window_sample(spark, window: WindowFiles, *, ds: date, config: Config):
    """The window's sampled rows (a Spark DataFrame, or None) and its summary row."""
    from pyspark.sql import Window as Over
    from pyspark.sql import functions as F

    ts, event_id, wanted = config.logs.timestamp, config.logs.event_id, config.sampling.events_per_window
    if not window.files.paths:
        return None, WindowSummary.of(ds, window, available=0, wanted=wanted, null_event_ids=0)
    start, end = window.window.start, window.window.end
    logs = _read_files(spark, window.files)
    rows = logs.where((F.col(_quote(ts)) >= F.lit(start)) & (F.col(_quote(ts)) < F.lit(end)))
    # cached: counted now, ranked when the sample is written; rows without an event id are
    # in no event: counted, never sampled
    keyed = rows.groupBy(F.col(_quote(event_id)).alias("event_id")).agg(
        F.min(_quote(ts)).alias("first_ts"), F.count(F.lit(1)).alias("n_rows"),
        F.min(FILE).alias("first_file"), F.max(FILE).alias("last_file")).cache()
    null_ids = sum(r.n_rows for r in keyed.where(F.col("event_id").isNull()).select("n_rows").collect())
    events = keyed.where(F.col("event_id").isNotNull())
    spread = events.where(F.col("first_file") != F.col("last_file")).orderBy("first_ts", "event_id")
    check_one_file_per_event(pl.from_arrow(spread.select("event_id", "first_file", "last_file").toArrow()),
                             window.window, window.files)
    available = events.count()
    summary = WindowSummary.of(ds, window, available=available, wanted=wanted, null_event_ids=null_ids)
    rows = rows.where(F.col(_quote(event_id)).isNotNull()).drop(FILE)
    if available <= wanted:  # a short window is taken whole
        return (rows if available else None), summary
    positions = systematic_positions(available, wanted, seed=config.sampling.seed, ds=ds, window=window.window.index)
    ranked = events.withColumn("position", F.row_number().over(Over.orderBy("first_ts", "event_id")) - 1)
    chosen = ranked.join(F.broadcast(spark.createDataFrame(pa.table({"position": positions}))), "position")
    chosen_ids = F.broadcast(chosen.select(F.col("event_id").alias("feco_chosen_id")))
    return rows.join(chosen_ids, F.col(_quote(event_id)) == F.col("feco_chosen_id"), "left_semi"), summary


def _read_files(spark, files: LogFiles):
    """Exactly the files the input checks read, each row with its file's index (FILE)."""
    from functools import reduce

    from pyspark.sql import functions as F

    frames = [spark.read.parquet(spark_path(Path(name) if not storage.is_uri(name) else name))
              .withColumn(FILE, F.lit(index)) for index, name in enumerate(files.names)]
    return reduce(lambda a, b: a.unionByName(b), frames)


def compute_states(ds: date, config: Config, *, references: dict[str, float],
                   band_history: pl.DataFrame | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The day's coverage states, the finest counts taken in Spark SQL from the sample files."""
    from pyspark.sql import functions as F

    spark = session(config)
    _describe_jobs(spark, f"feco coverage {ds}: finest counts")
    day = partition_dir(config.paths.samples, ds)
    if not storage.exists(storage.join(day, WINDOWS_FILE)):
        raise DataError(f"no sample for {ds} under {config.paths.samples} (run the sample step first)")
    sample = spark.read.parquet(spark_path(day))  # window=N folders give "window"
    schema = pl.from_arrow(sample.limit(0).toArrow()).schema
    kinds = value_kinds(schema, config=config)
    statement, params = finest_counts_query(list(schema), kinds, ds=ds, config=config, references=references,
                                            quote=_quote, marker=":")
    history = band_history_like(band_history, schema.get(config.logs.query, pl.String))
    sample.createOrReplaceTempView("sample_rows")
    query_type = sample.schema[config.logs.query].dataType if config.logs.query in sample.columns else "string"
    (spark.createDataFrame(history.to_arrow())
     .select(F.col("query").cast(query_type), F.col("n").cast("long"))
     .createOrReplaceTempView("band_history"))
    finest = pl.from_arrow(spark.sql(statement, args=params).toArrow())
    return states_from_finest(finest, ds=ds, config=config, kinds=kinds)


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"
