"""Taking the chosen events' rows: in memory (``sample_day``), or written into the day's
sample folder, which is replaced whole (``write_sample``; ``sample_window``, a window at a
time, is what the Spark engine runs in a task).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import NamedTuple

import polars as pl

from feco import storage
from feco.config import Config
from feco.sample_folder import ROWS_FILE, keep_day_query_events, query_event_pairs, write_rows
from feco.sampling.choose import WindowChoice, WindowSummary, choose_events, choose_window, sampled_rows, window_summary
from feco.sampling.day_folder import replace_day
from feco.sources.logfiles import WindowFiles
from feco.storage import Location


def sample_day(ds: date, config: Config, *, allow_incomplete: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Sample the configured windows of one day, in memory.

    Returns the sampled rows (every log column plus ``window``) and one row per window for
    the ``sample_windows`` table (ds, window, window_start, window_end, events_available,
    events_sampled, step, rows_null_event_id, rows_null_timestamp, hours_missing,
    rows_outside_day, table_version). The same logs, config and seed give the same sample.
    The pipeline streams the rows to files instead (``write_sample``).
    """
    choices = choose_events(ds, config, allow_incomplete=allow_incomplete)
    samples = [sampled_rows(c).with_columns(window=pl.lit(c.window.index, pl.Int16))
               for c in choices if c.summary.events_sampled]
    return pl.concat(samples, how="vertical_relaxed"), window_summary(choices)


def write_sample(ds: date, config: Config, *, allow_incomplete: bool = False) -> pl.DataFrame:
    """Sample the day and stream its rows to ``samples/ds=…/window=N/part-0.parquet``,
    replacing the day whole; returns the window summary (also written, as ``_windows.parquet``).

    One window's sampled rows are held at a time, so memory is set by the sample size,
    however busy the day.
    """
    choices = choose_events(ds, config, allow_incomplete=allow_incomplete)

    def write_windows(day: Location) -> pl.DataFrame:
        sampled = [c for c in choices if c.summary.events_sampled]
        # Two at a time: one window's rows are read while the one before is written.
        with ThreadPoolExecutor(max_workers=2) as pool:
            pairs = list(pool.map(lambda c: _write_window(c, day, config), sampled))
        keep_day_query_events(pairs, day, config)
        return window_summary(choices)

    return replace_day(ds, config, write_windows)


class SampledWindow(NamedTuple):
    """What ``sample_window`` hands back to the driver of the Spark engine."""

    summary: WindowSummary  # its sample_windows row
    events: pl.DataFrame | None  # its events, for check_one_window_per_event; None: no files
    query_events: pl.DataFrame | None  # its rows' query_event_pairs; None: nothing sampled


def sample_window(window: WindowFiles, schema: pl.Schema, day: Location, *, ds: date,
                  config: Config) -> SampledWindow:
    """One window whole: choose its events and write their rows into the day's folder ``day``.
    What the Spark engine runs in a task, a window to a task."""
    choice = choose_window(window, schema, ds=ds, config=config)
    pairs = _write_window(choice, day, config) if choice.summary.events_sampled else None
    return SampledWindow(choice.summary, choice.events, pairs)


def _write_window(choice: WindowChoice, day: Location, config: Config) -> pl.DataFrame | None:
    """Write the window's rows under ``day``/window=N/; return their query_event_pairs."""
    rows = sampled_rows(choice)
    write_rows(rows, storage.join(day, f"window={choice.window.index}", ROWS_FILE))
    return query_event_pairs(rows, event_id=config.logs.event_id, query=config.logs.query)
