"""The Spark engine (``engine = "spark"``): sampling and the finest counts run in Spark.

Same results as the DuckDB engine, by construction: Spark reads the events' keys and feco
chooses among them with the DuckDB engine's own code (``feco.sampling.chosen_events``), so the
same events are chosen; the counts are ``sql/coverage/finest_counts.sql`` itself, run by Spark SQL,
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
    check_some_events,
    chosen_events,
    describe_read_failure,
    partition_dir,
    replace_day,
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
    # The sample's rows are written a folder per window without first being sorted by window
    # (a task's rows are of one window, as each window reads its own files): a writer per
    # window open at once, not a sort of every sampled row.
    spark.conf.set("spark.sql.optimizer.plannedWrite.enabled", "false")
    spark.conf.set("spark.sql.maxConcurrentOutputFileWriters", "16")
    return spark


def spark_path(location: storage.Location) -> str:
    return f"file://{Path(location).resolve()}" if isinstance(location, Path) else location


def write_sample(ds: date, config: Config, *, allow_incomplete: bool = False) -> pl.DataFrame:
    """Sample the day in Spark and write it as the DuckDB engine does; returns the window
    summary. Two jobs for the whole day: one reads every window's rows and returns each
    event's key (id, first timestamp, files) to feco, which chooses the events as the DuckDB
    engine does (``chosen_events``, the same code); one writes the chosen events' rows, a
    folder per window. The input checks are the DuckDB engine's own (``window_files``)."""
    if is_table(config.paths.logs):
        raise UsageError(f"the Spark engine reads Hive-style Parquet folders, not the log table {config.paths.logs}: "
                         'use engine = "duckdb" for a table (docs/lake.md)')
    spark = session(config)
    _, windows = window_files(ds, config, allow_incomplete=allow_incomplete)
    read = [window for window in windows if window.files.paths]
    files = _all_files(read)
    rows = {window.window.index: _window_rows(spark, window, config=config) for window in read}
    _describe_jobs(spark, f"feco sample {ds}: events of every window")
    keys = _reading(files, _event_keys, list(rows.values()), config=config) if read else None
    summaries, chosen = [], {}
    for window in windows:
        own = keys.filter(pl.col("window") == window.window.index) if window.files.paths else _NO_KEYS
        events = own.drop_nulls("event_id")
        picked, summary = chosen_events(events, window, ds=ds, config=config,
                                        null_event_ids=int(own.filter(pl.col("event_id").is_null())["n_rows"].sum()))
        summaries.append(summary)
        if summary.events_sampled:
            chosen[window.window.index] = picked
    check_some_events(ds, summaries)

    def write(staging: storage.Location) -> None:
        _describe_jobs(spark, f"feco sample {ds}: write the chosen events' rows")
        _reading(files, _write_chosen, spark, rows, chosen, spark_path(staging), config=config)

    summary = window_summary_frame(summaries)
    replace_day(ds, config, write, summary)
    return summary


_NO_KEYS = pl.DataFrame(schema={"window": pl.Int16, "event_id": pl.Null, "first_ts": pl.Null, "n_rows": pl.Int64,
                                "first_file": pl.Int32, "last_file": pl.Int32})


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


def _all_files(windows: list[WindowFiles]) -> LogFiles:
    """The files the windows read, each once (for naming the one at fault)."""
    named = {path: name for window in windows for path, name in zip(window.files.paths, window.files.names)}
    fs = windows[0].files.fs if windows else None
    return LogFiles(fs, list(named), list(named.values()))


def _window_rows(spark, window: WindowFiles, *, config: Config):
    """The window's rows (a Spark DataFrame): exactly the files the input checks read, each row
    with the window's index ("window") and its file's index in the window's files (FILE)."""
    from pyspark.sql import functions as F

    ts = F.col(_quote(config.logs.timestamp))
    return (_read_files(spark, window.files).where((ts >= F.lit(window.window.start)) & (ts < F.lit(window.window.end)))
            .withColumn("window", F.lit(window.window.index).cast("short")))


def _event_keys(windows: list, *, config: Config) -> pl.DataFrame:
    """One row per window and event of the windows' rows: ``window``, ``event_id``,
    ``first_ts``, ``n_rows``, ``first_file``, ``last_file`` (rows without an event id grouped
    under a NULL one)."""
    from pyspark.sql import functions as F

    ts, event_id = _quote(config.logs.timestamp), _quote(config.logs.event_id)
    keys = _union(windows).groupBy("window", F.col(event_id).alias("event_id")).agg(
        F.min(ts).alias("first_ts"), F.count(F.lit(1)).alias("n_rows"),
        F.min(FILE).alias("first_file"), F.max(FILE).alias("last_file"))
    return pl.from_arrow(keys.toArrow())


def _write_chosen(spark, rows: dict, chosen: dict[int, pl.Series | None], folder: str, *, config: Config) -> None:
    """The chosen events' rows (None: all the window's events) under ``folder``/window=N/
    (Spark's partition folders), in one job; each window's rows meet only its own chosen ids
    (each sent to the tasks once)."""
    from pyspark.sql import functions as F

    column = F.col(_quote(config.logs.event_id))
    kept = [rows[window].where(column.isNotNull()) if ids is None else
            rows[window].join(F.broadcast(spark.createDataFrame(ids.rename("feco_chosen_id").to_frame().to_arrow())),
                              column == F.col("feco_chosen_id"), "left_semi")
            for window, ids in chosen.items()]
    _union(kept).drop(FILE).write.mode("overwrite").partitionBy("window").parquet(folder)


def _union(frames: list):
    from functools import reduce

    return reduce(lambda a, b: a.unionByName(b), frames)


def _read_files(spark, files: LogFiles):
    """Exactly the files the input checks read, each row with its file's index (FILE). The
    first file's schema is given for the others (the checks found the same columns and types
    in all), so Spark does not run a job per file to learn it."""
    from pyspark.sql import functions as F

    paths = [spark_path(Path(name) if not storage.is_uri(name) else name) for name in files.names]
    first = spark.read.parquet(paths[0])
    return _union([(first if index == 0 else spark.read.schema(first.schema).parquet(path)).withColumn(FILE, F.lit(index))
                   for index, path in enumerate(paths)])


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
