"""The Spark engine (``engine = "spark"``): the day's windows sampled on a Spark cluster, a
window to a task.

Each task runs the DuckDB engine's own code for its window (``feco.sampling.sample_window``:
choose the events from the window's (event id, timestamp) columns, then read and write only
their rows), so both engines choose the same events and write the same files by construction.
The input checks run first, in this process (``window_files``: hour folders, footers, columns);
the tasks' summaries, event ids and query counts come back here, the checks across windows run
on them (an event id in two windows, windows without rows) and the day is swapped in as the
DuckDB engine does (``replace_day``). Coverage is then counted from the sample files in this process,
as for the DuckDB engine: the sample is bounded by the config, the logs are what grows.

Why tasks of feco's code and not Spark SQL: on the same day Spark SQL's executors spent about
four times the DuckDB engine's whole CPU reading every column of every row of the windows and
writing Parquet a row at a time, before its driver's planning (docs/lake.md, "The Spark
engine"). The executors therefore need feco's Python environment, and read logs and write
samples with feco's own filesystems: the paths and credentials the DuckDB engine takes.

The session comes from ``[spark]`` (``master``, ``conf``); left unset under spark-submit, its
settings apply.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from datetime import date
from functools import partial

import polars as pl

from feco.config import Config
from feco.errors import FecoError, UsageError
from feco.sample_folder import keep_day_query_events
from feco.sampling import (
    SampledWindow,
    check_one_window_per_event,
    check_windows,
    replace_day,
    sample_window,
    window_files,
    window_summary_frame,
)
from feco.sources.logfiles import WindowFiles
from feco.storage import Location


def session(config: Config):
    """The Spark session for feco's jobs (created once per process)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("engine = \"spark\" needs pyspark: pip install 'feco[spark]' (and Java 17+)") from None
    if not _under_spark_submit() and not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise UsageError('engine = "spark" starts a Spark driver here, which needs Java 17+: put java on PATH '
                         "or set JAVA_HOME")
    builder = SparkSession.builder.appName("feco").config("spark.ui.showConsoleProgress", "false")
    if config.spark.master:
        builder = builder.master(config.spark.master)
    # The tasks' Python: a session started here takes it from PYSPARK_PYTHON alone (spark-submit
    # sets that from spark.pyspark.python, which comes first, as here). In local mode the tasks
    # run on this machine, in this interpreter, which has feco; a cluster's executors need
    # spark.pyspark.python (docs/lake.md).
    if python := config.spark.conf.get("spark.pyspark.python"):
        os.environ["PYSPARK_PYTHON"] = python
    elif _runs_here(config):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    for key, value in config.spark.conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _under_spark_submit() -> bool:
    """spark-submit starts Python with a gateway to the JVM it started."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _runs_here(config: Config) -> bool:
    """Local mode: ``local…`` configured, or no master and not under spark-submit."""
    master = config.spark.master
    return master.startswith("local") if master else not _under_spark_submit()


def write_sample(ds: date, config: Config, *, allow_incomplete: bool = False) -> pl.DataFrame:
    """Sample the day in Spark, a window to a task, and write it as the DuckDB engine does;
    returns the window summary."""
    context = session(config).sparkContext
    schema, windows = window_files(ds, config, allow_incomplete=allow_incomplete)

    def write_windows(day: Location) -> pl.DataFrame:
        context.setJobDescription(f"feco sample {ds}: a window a task")
        task = partial(_sample_window, schema=schema, day=day, ds=ds, config=config)
        outcomes = _run(context.parallelize(windows, len(windows)).map(task))
        refused = [outcome for outcome in outcomes if isinstance(outcome, FecoError)]
        if refused:
            raise refused[0]
        summaries = [outcome.summary for outcome in outcomes]
        check_one_window_per_event(ds, windows, [outcome.events for outcome in outcomes])
        check_windows(ds, config, windows, summaries, allow_incomplete=allow_incomplete)
        keep_day_query_events([o.query_events for o in outcomes if o.summary.events_sampled], day, config)
        return window_summary_frame(summaries)

    return replace_day(ds, config, write_windows)


def _run(tasks) -> list:
    """The tasks' outcomes; executors whose Python lacks feco (or a module it needs) are
    told apart from a failure of the work itself."""
    try:
        return tasks.collect()
    except Exception as error:  # Spark's errors come through Py4J in many types
        if missing := re.search(r"ModuleNotFoundError: No module named '([^']+)'", str(error)):
            raise UsageError(f"the Spark executors' Python has no module {missing[1]}: set [spark] conf "
                             '"spark.pyspark.python" to a Python with feco installed (docs/lake.md)') from None
        raise


def _sample_window(window: WindowFiles, *, schema: pl.Schema, day: Location, ds: date,
                   config: Config) -> SampledWindow | FecoError:
    """A task: the window sampled, or the refusal feco's checks gave (returned, not raised,
    so that Spark does not retry a refusal and the driver raises it as it is)."""
    try:
        return sample_window(window, schema, day, ds=ds, config=config)
    except FecoError as error:
        return error
