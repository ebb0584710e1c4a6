"""Choosing a window's events: every k-th in (first timestamp, event id) order after a seeded
random start, from the window's (event id, timestamp) columns alone.

Memory grows with the events in a window (two columns of them), not with their rows, and
with the day's event ids (the check across windows); the chosen events' rows are read
afterwards (``sampled_rows``), one window at a time. Both engines choose here
(``chosen_events``), so they choose the same events, and run the same input checks
(``window_files``, ``check_one_file_per_event``, ``check_one_window_per_event``,
``check_windows``). Each window gives its ``sample_windows`` row (``WindowSummary``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa

from feco.config import Config
from feco.errors import DataError
from feco.sources import LogSource, source_for
from feco.sources.logfiles import FILE, LogFiles, Window, WindowFiles, describe_read_failure, named, scan


class WindowSummary(NamedTuple):
    """One ``sample_windows`` row."""

    ds: date
    window: int
    window_start: datetime
    window_end: datetime
    events_available: int
    events_sampled: int
    step: float | None
    rows_null_event_id: int  # the window's rows without an event id: in no event, not sampled
    rows_null_timestamp: int  # rows of its hour files without a timestamp (each file counted once a day)
    hours_missing: list[int]  # hours it reads with no log rows in it (sampled with --allow-incomplete)
    rows_outside_day: int  # rows of its hour files stamped on another day (each file counted once a day)
    table_version: str | None  # the log table's snapshot id or version read; None: logs in a folder

    @classmethod
    def of(cls, ds: date, window: WindowFiles, *, available: int, wanted: int, null_event_ids: int) -> WindowSummary:
        """A short window is taken whole (step 1); an empty one has no step. A window without
        a single row misses all its hours, whether their files are absent or hold other times."""
        step = None if not available else max(1.0, round(available / wanted, 6))
        w = window.window
        hours_missing = window.hours_missing if available or null_event_ids else w.hours()
        return cls(ds, w.index, w.start, w.end, available, min(available, wanted), step,
                   null_event_ids, window.null_timestamps, hours_missing, window.rows_outside_day,
                   window.table_version)



@dataclass(frozen=True)
class WindowChoice:
    """One window's sample: the query that reads its rows, and its ``sample_windows`` row."""

    window: Window
    rows: pl.LazyFrame | None  # the window's rows of the chosen events, with FILE; None: no files
    summary: WindowSummary
    files: LogFiles  # the window's hour files, in FILE order
    events: pl.DataFrame | None  # each of its events' id and first_file (check_one_window_per_event); None: no files


def choose_events(ds: date, config: Config, *, allow_incomplete: bool = False) -> list[WindowChoice]:
    """Choose each window's events from its (event id, timestamp) columns alone.

    Memory grows with the events in a window (two columns of them), not with their rows; the
    rows are read afterwards, only those of the chosen events (``sample_day``, ``write_sample``).
    """
    schema, windows = window_files(ds, config, allow_incomplete=allow_incomplete)
    choices = [choose_window(w, schema, ds=ds, config=config) for w in windows]
    check_one_window_per_event(ds, windows, [c.events for c in choices])
    check_windows(ds, config, windows, [c.summary for c in choices], allow_incomplete=allow_incomplete)
    return choices


def window_files(ds: date, config: Config, *, allow_incomplete: bool = False) -> tuple[pl.Schema, list[WindowFiles]]:
    """The logs' columns and each window's files, once the files have been checked: every
    window has files (unless ``allow_incomplete``), and their columns (in any order, of the
    same types) hold the timestamp, the event id and what else the config names. These are the
    input checks of both engines, with ``check_one_file_per_event`` and
    ``check_one_window_per_event``. A folder's hour files or the data files a table's metadata
    gives each window: the source the config names (feco.sources) finds them."""
    return source_for(config).window_files(ds, allow_incomplete=allow_incomplete)



def check_windows(ds: date, config: Config, windows: list[WindowFiles], summaries: list[WindowSummary], *,
                  allow_incomplete: bool) -> None:
    """Refuse a day with no search event in any window, or with a window whose files hold no
    row in its time (unless ``allow_incomplete``: it is then recorded as missing, like a window
    without files). ``summaries`` are the windows' rows, in the order of ``windows``. Both
    engines run this check once their windows are chosen.

    Raises
    ------
    DataError
        Naming the windows, and how the rows' timestamps and their hour folders disagree
        when they sit a whole number of hours apart (a writer in local time).
    """
    source = source_for(config)
    empty = [w.window for w, s in zip(windows, summaries) if not s.events_available and not s.rows_null_event_id]
    if not any(s.events_sampled for s in summaries):
        problem = f"no search events in any sampling window of {ds}"
    elif empty and not allow_incomplete:
        problem = _empty_windows_message(ds, source, empty)
    else:
        return
    raise DataError(problem + source.stamped_elsewhere(ds, windows))


def _empty_windows_message(ds: date, source: LogSource, empty: list[Window]) -> str:
    return (f"the logs of {ds} have files but no rows in the time of sampling windows {named(empty)} "
            f"({source.where(ds, empty)}): complete the logs, or run with --allow-incomplete to record those windows "
            "as missing")



def window_summary(choices: list[WindowChoice]) -> pl.DataFrame:
    return window_summary_frame([c.summary for c in choices])


def window_summary_frame(rows: list[WindowSummary]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=_WINDOW_SCHEMA, orient="row")


_WINDOW_SCHEMA = {
    "ds": pl.Date,
    "window": pl.Int16,
    "window_start": pl.Datetime("us", "UTC"),
    "window_end": pl.Datetime("us", "UTC"),
    "events_available": pl.Int64,
    "events_sampled": pl.Int64,
    "step": pl.Float64,
    "rows_null_event_id": pl.Int64,
    "rows_null_timestamp": pl.Int64,
    "hours_missing": pl.List(pl.Int16),
    "rows_outside_day": pl.Int64,
    "table_version": pl.String,
}


def choose_window(window: WindowFiles, schema: pl.Schema, *, ds: date, config: Config) -> WindowChoice:
    ts, event_id = config.logs.timestamp, config.logs.event_id
    files = window.files
    if not files.paths:
        summary = WindowSummary.of(ds, window, available=0, wanted=config.sampling.events_per_window, null_event_ids=0)
        return WindowChoice(window.window, None, summary, files, None)
    rows = _window_rows(scan(files, schema), window.window, ts=ts, dtype=schema[ts])
    keys = _collect(rows.select(pl.col(event_id).alias("event_id"), pl.col(ts).alias("ts"), FILE), files)
    events = (keys.drop_nulls("event_id").group_by("event_id")
              .agg(pl.col("ts").min().alias("first_ts"), pl.col(FILE).min().alias("first_file"),
                   pl.col(FILE).max().alias("last_file")))
    chosen, summary = chosen_events(events, window, ds=ds, config=config,
                                    null_event_ids=keys.get_column("event_id").null_count())
    rows = rows.filter(pl.col(event_id).is_not_null() if chosen is None else pl.col(event_id).is_in(chosen.implode()))
    return WindowChoice(window.window, rows, summary, files, events.select("event_id", "first_file"))


def chosen_events(events: pl.DataFrame, window: WindowFiles, *, ds: date, config: Config,
                  null_event_ids: int) -> tuple[pl.Series | None, WindowSummary]:
    """The events a window samples (None: all of them, a short window is taken whole) and its
    summary row, from one row per event of the window: ``event_id``, ``first_ts`` (its first
    row's timestamp), ``first_file`` and ``last_file``. Both engines choose here, so they
    choose the same events: every k-th in (first timestamp, event id) order."""
    ordered = events.sort(["first_ts", "event_id"])
    check_one_file_per_event(ordered, window.window, window.files)
    wanted, available = config.sampling.events_per_window, ordered.height
    summary = WindowSummary.of(ds, window, available=available, wanted=wanted, null_event_ids=null_event_ids)
    if available <= wanted:
        return None, summary
    positions = systematic_positions(available, wanted, seed=config.sampling.seed, ds=ds, window=window.window.index)
    return ordered.get_column("event_id").gather(positions), summary


def check_one_file_per_event(events: pl.DataFrame, window: Window, files: LogFiles) -> None:
    """Refuse a window with an event whose rows sit in two of its files (a log file copied, or
    events logged twice): they would be counted twice. ``events`` has one row per event of
    the window: ``event_id``, ``first_file`` and ``last_file`` (the smallest and largest index
    in ``files`` of the files holding its rows). Both engines run this check."""
    spread = events.filter(pl.col("first_file") != pl.col("last_file"))
    if spread.height:
        event, first, last = spread.select("event_id", "first_file", "last_file").row(0)
        raise DataError(f"{spread.height} events of window {window.index} have rows in two files, e.g. event "
                        f"{event} in {files.names[first]} and {files.names[last]}: a log file copied or "
                        "written twice? Remove the duplicate")


def check_one_window_per_event(ds: date, windows: list[WindowFiles], events: list[pl.DataFrame | None]) -> None:
    """Refuse a day with an event id in two of its windows (ids of one hour reused in another,
    or an hour's file copied into a later hour): each window sees the event once, but the
    day's sample would hold two events under one id. ``events`` has, in the order of
    ``windows``, each window's events (``event_id``, ``first_file``), None for a window without
    files. Both engines run this check once every window is chosen; it holds the day's event
    ids (one column per window) at once.

    Raises
    ------
    DataError
        Counting the event ids in two windows, naming one and the two files holding it.
    """
    keyed = [frame.with_columns(window=pl.lit(w, pl.Int32)) for w, frame in enumerate(events) if frame is not None]
    if not keyed:
        return
    reused = pl.concat(keyed).filter(pl.col("event_id").is_duplicated()).sort("event_id", "window")
    if reused.height:
        event = reused.item(0, "event_id")
        (a, first_a), (b, first_b) = reused.filter(pl.col("event_id") == event).select("window", "first_file").rows()[:2]
        raise DataError(f"{reused.get_column('event_id').n_unique()} event ids of {ds} are in two sampling windows, "
                        f"e.g. event {event} in {windows[a].files.names[first_a]} (window {windows[a].window.index}) "
                        f"and {windows[b].files.names[first_b]} (window {windows[b].window.index}): event ids reused in another hour, or a "
                        "log file copied there? Remove the duplicate")


def systematic_positions(available: int, wanted: int, *, seed: int, ds: date, window: int) -> np.ndarray:
    """Positions (in event order) of the ``wanted`` events out of ``available``: every k-th,
    k = available / wanted, after a random start seeded by (seed, day, window)."""
    step = available / wanted
    rng = np.random.default_rng([seed, ds.toordinal(), window])
    offsets = np.floor(rng.uniform(0, step) + step * np.arange(wanted)).astype(np.int64)
    return np.minimum(offsets, available - 1)


def sampled_rows(choice: WindowChoice) -> pl.DataFrame:
    """The window's sampled rows, in the logs' order: only they are held, the rest of the
    window is filtered out as it is read."""
    return _collect(choice.rows, choice.files).drop(FILE)



def _collect(rows: pl.LazyFrame, files: LogFiles) -> pl.DataFrame:
    """The rows, with a failure naming the file at fault."""
    try:
        return rows.collect()
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as error:
        raise DataError(describe_read_failure(files, error)) from None


def _window_rows(logs: pl.LazyFrame, window: Window, *, ts: str, dtype: pl.Datetime) -> pl.LazyFrame:
    """The window's rows, bounds typed like the column so Parquet statistics still prune."""
    if dtype.time_zone is None:  # naive timestamps are taken as UTC
        start, end = window.start.replace(tzinfo=None), window.end.replace(tzinfo=None)
    else:
        start = pl.lit(window.start).dt.convert_time_zone(dtype.time_zone)
        end = pl.lit(window.end).dt.convert_time_zone(dtype.time_zone)
    return logs.filter((pl.col(ts) >= start) & (pl.col(ts) < end))
