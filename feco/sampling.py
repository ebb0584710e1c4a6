"""Systematic sampling of search events from a day of logs.

For each configured window of a day, the window's events are ordered by timestamp (ties by
event id) and every k-th event is taken after a seeded random start, k = available / wanted.
An event is taken with all its rows, so ranked lists stay whole. Only the hour partitions
that overlap a window are read, in two passes: the (event id, timestamp) columns to choose the
events, then the chosen events' rows, one window at a time, so memory is set by the sample
and not by traffic. Logs and samples may live on any filesystem feco.storage knows.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from feco import storage
from feco.config import Config
from feco.errors import DataError
from feco.sample_files import ROWS_FILE, WINDOWS_FILE
from feco.storage import Location

if TYPE_CHECKING:
    import pyarrow.dataset as pads


@dataclass(frozen=True)
class Window:
    index: int
    start: datetime
    end: datetime

    def hours(self) -> list[int]:
        """The hour partitions this window overlaps."""
        last = self.end - timedelta(microseconds=1)
        return list(range(self.start.hour, last.hour + 1))


def day_windows(ds: date, config: Config) -> list[Window]:
    """The sampling windows of ``ds`` in UTC, in order."""
    midnight = datetime(ds.year, ds.month, ds.day, tzinfo=timezone.utc)
    length = timedelta(minutes=config.sampling.window_minutes)
    return [
        Window(i, midnight + timedelta(minutes=m), midnight + timedelta(minutes=m) + length)
        for i, m in enumerate(config.sampling.start_minutes())
    ]


def partition_dir(root: Location, ds: date) -> Location:
    return storage.join(root, f"ds={ds.isoformat()}")


class WindowSummary(NamedTuple):
    """One ``sample_windows`` row."""

    ds: date
    window: int
    window_start: datetime
    window_end: datetime
    events_available: int
    events_sampled: int
    step: float | None

    @classmethod
    def of(cls, ds: date, window: Window, *, available: int, wanted: int) -> WindowSummary:
        """A short window is taken whole (step 1); an empty one has no step."""
        step = None if not available else max(1.0, round(available / wanted, 6))
        return cls(ds, window.index, window.start, window.end, available, min(available, wanted), step)


@dataclass(frozen=True)
class WindowChoice:
    """One window's sample: the query that reads its rows, and its ``sample_windows`` row."""

    window: Window
    rows: pl.LazyFrame | None  # the window's rows of the chosen events; None: no files
    summary: WindowSummary
    files: list[str]  # the window's hour files, to name one that fails
    fs: pafs.FileSystem


def choose_events(ds: date, config: Config) -> list[WindowChoice]:
    """Choose each window's events from its (event id, timestamp) columns alone.

    Memory grows with the events in a window (two columns of them), not with their rows; the
    rows are read afterwards, only those of the chosen events (``sample_day``, ``write_sample``).
    """
    fs, files_by_hour = hour_files(ds, config.paths.logs)
    choices = []
    for window in day_windows(ds, config):
        files = [f for h in window.hours() for f in files_by_hour.get(h, [])]
        choices.append(_choose(window, files, fs, ds=ds, config=config))
    if not any(c.summary.events_sampled for c in choices):
        raise DataError(f"no search events in any sampling window of {ds}")
    return choices


def sample_day(ds: date, config: Config) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Sample the configured windows of one day, in memory.

    Returns the sampled rows (every log column plus ``window``) and one row per window for
    the ``sample_windows`` table (ds, window, window_start, window_end, events_available,
    events_sampled, step). The same logs, config and seed give the same sample. The pipeline
    streams the rows to files instead (``write_sample``).
    """
    choices = choose_events(ds, config)
    samples = [
        _sampled_rows(c).with_columns(pl.lit(c.window.index, pl.Int16).alias("window"))
        for c in choices if c.summary.events_sampled
    ]
    return pl.concat(samples, how="vertical_relaxed"), window_summary(choices)


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
}


def hour_files(ds: date, logs: Location) -> tuple[pafs.FileSystem, dict[int, list[str]]]:
    day = partition_dir(logs, ds)
    if not storage.is_dir(day):
        raise DataError(f"no log partition for {ds}: {day} does not exist")
    files: dict[int, list[str]] = {}
    for path in storage.files_under(day):
        folder = path.rsplit("/", 2)[-2]
        hour = folder.removeprefix("hour=")
        if folder.startswith("hour=") and hour.isdigit() and 0 <= int(hour) < 24:
            files.setdefault(int(hour), []).append(path)
    if not files:
        raise DataError(f"empty log partition for {ds}: no hour=HH/*.parquet files under {day}")
    return storage.filesystem_for(logs)[0], files


def _choose(window: Window, files: list[str], fs: pafs.FileSystem, *, ds: date, config: Config) -> WindowChoice:
    ts, event_id = config.logs.timestamp, config.logs.event_id
    wanted = config.sampling.events_per_window
    if not files:
        return WindowChoice(window, None, WindowSummary.of(ds, window, available=0, wanted=wanted), files, fs)
    rows = _window_rows(_scan(files, fs), window, ts=ts, file=files[0])
    if event_id not in rows.collect_schema():
        raise DataError(f"event id column '{event_id}' not in the logs")
    keys = _collect(rows.select(event_id, ts), files, fs)
    events = keys.group_by(event_id).agg(pl.col(ts).min()).sort([ts, event_id]).get_column(event_id)
    summary = WindowSummary.of(ds, window, available=events.len(), wanted=wanted)
    if events.len() <= wanted:  # a short window is taken whole
        return WindowChoice(window, rows, summary, files, fs)
    chosen = events.gather(systematic_positions(events.len(), wanted, seed=config.sampling.seed, ds=ds,
                                                window=window.index))
    return WindowChoice(window, rows.filter(pl.col(event_id).is_in(chosen.implode())), summary, files, fs)


def systematic_positions(available: int, wanted: int, *, seed: int, ds: date, window: int) -> np.ndarray:
    """Positions (in event order) of the ``wanted`` events out of ``available``: every k-th,
    k = available / wanted, after a random start seeded by (seed, day, window)."""
    step = available / wanted
    rng = np.random.default_rng([seed, ds.toordinal(), window])
    offsets = np.floor(rng.uniform(0, step) + step * np.arange(wanted)).astype(np.int64)
    return np.minimum(offsets, available - 1)


def _scan(files: list[str], fs: pafs.FileSystem) -> pl.LazyFrame:
    """The files as one lazy frame: polars' own reader on a local disk (it decodes the other
    columns only for rows that pass the filter), pyarrow's on any other filesystem."""
    try:
        if fs.type_name == "local":
            return pl.scan_parquet(files, hive_partitioning=False)
        import pyarrow.dataset as pads

        return pl.scan_pyarrow_dataset(pads.dataset(files, filesystem=fs, format="parquet"))
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as error:
        raise DataError(_describe_read_failure(files, fs, error)) from None


def _collect(rows: pl.LazyFrame, files: list[str], fs: pafs.FileSystem) -> pl.DataFrame:
    """The rows, with a failure naming the file at fault."""
    try:
        return rows.collect()
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as error:
        raise DataError(_describe_read_failure(files, fs, error)) from None


def _window_rows(logs: pl.LazyFrame, window: Window, *, ts: str, file: str) -> pl.LazyFrame:
    """The window's rows, bounds typed like the column so Parquet statistics still prune."""
    try:
        dtype = logs.collect_schema().get(ts)
    except (pl.exceptions.PolarsError, OSError) as error:
        raise DataError(f"corrupt or unreadable Parquet file {file}: {error}") from None
    if dtype is None:
        raise DataError(f"timestamp column '{ts}' not in the logs ({file})")
    if not isinstance(dtype, pl.Datetime):
        raise DataError(f"timestamp column '{ts}' is {dtype}, not a timestamp ({file})")
    if dtype.time_zone is None:  # naive timestamps are taken as UTC
        start, end = window.start.replace(tzinfo=None), window.end.replace(tzinfo=None)
    else:
        start = pl.lit(window.start).dt.convert_time_zone(dtype.time_zone)
        end = pl.lit(window.end).dt.convert_time_zone(dtype.time_zone)
    return logs.filter((pl.col(ts) >= start) & (pl.col(ts) < end))


def _describe_read_failure(files: list[str], fs: pafs.FileSystem, error: Exception) -> str:
    for path in files:
        try:
            pq.read_metadata(fs.open_input_file(path))
        except Exception as file_error:  # noqa: BLE001 - any failure here names the culprit
            return f"corrupt or unreadable Parquet file {path}: {file_error}"
    return f"cannot read logs ({files[0].rpartition('/')[0]}): {error}"


def write_sample(ds: date, config: Config) -> pl.DataFrame:
    """Sample the day and stream its rows to ``samples/ds=…/window=N/part-0.parquet``,
    replacing the day whole; returns the window summary (also written, as ``_windows.parquet``).

    One window's sampled rows are held at a time, so memory is set by the sample size,
    however busy the day.
    """
    choices = choose_events(ds, config)
    summary = window_summary(choices)

    def write_windows(day: Location) -> None:
        for choice in choices:
            if choice.summary.events_sampled:
                _write_window(choice, storage.join(day, f"window={choice.window.index}"))

    replace_day(ds, config, write_windows, summary)
    return summary


def replace_day(ds: date, config: Config, write_windows, summary: pl.DataFrame) -> None:
    """Replace the day's sample with what ``write_windows(folder)`` writes, and ``summary``.

    A local day is written to a temporary folder and swapped in by rename, so readers never
    see a half-written day and a crash leaves the previous sample. Object storage has no
    rename: ``_windows.parquet``, which marks a day as sampled, is removed first and written
    last, so a crash leaves no sample rather than a mixed one.
    """
    final = partition_dir(config.paths.samples, ds)
    local = not storage.is_uri(final)
    day = storage.join(config.paths.samples, f"ds={ds.isoformat()}.tmp") if local else final
    storage.remove(storage.join(final, WINDOWS_FILE))
    storage.remove(day)
    write_windows(day)
    storage.write_parquet(summary, storage.join(day, WINDOWS_FILE))
    if local:
        _swap_in(day, final)


def _write_window(choice: WindowChoice, folder: Location) -> None:
    storage.write_parquet(_sampled_rows(choice), storage.join(folder, ROWS_FILE))


def _sampled_rows(choice: WindowChoice) -> pl.DataFrame:
    """The window's sampled rows, in the logs' order: only they are held, the rest of the
    window is filtered out as it is read."""
    return _collect(choice.rows, choice.files, choice.fs)


def _swap_in(staging: Path, final: Path) -> None:
    retired = final.with_name(final.name + ".old")
    shutil.rmtree(retired, ignore_errors=True)
    if final.exists():
        final.rename(retired)
    staging.rename(final)
    shutil.rmtree(retired, ignore_errors=True)


def sampled_query_events(days: list[date], root: Location, *, event_id: str, query: str) -> pl.DataFrame:
    """Sampled events per query over the days whose samples exist: ``query``, ``n``."""
    days_events = []
    for ds in days:
        if not is_sampled(ds, root):
            continue
        rows = sample_files(ds, root)
        # a day sampled before the query column existed has nothing to say about bands
        if {event_id, query} <= set(rows.schema.names):
            events = pl.from_arrow(rows.to_table(columns=[event_id, query]))
            days_events.append(events.unique().get_column(query))  # an event id is unique within its day
    if not days_events:
        return pl.DataFrame(schema={"query": pl.String, "n": pl.Int64})
    queries = pl.concat(days_events).drop_nulls().cast(pl.String)
    return queries.value_counts(name="n").rename({queries.name: "query"}).cast({"n": pl.Int64})


def is_sampled(ds: date, root: Location) -> bool:
    return storage.exists(storage.join(partition_dir(root, ds), WINDOWS_FILE))


def sample_files(ds: date, root: Location) -> pads.Dataset:
    """The day's sampled rows as a dataset with their ``window`` column, read lazily."""
    import pyarrow.dataset as pads  # slow to import, so only when needed

    if not is_sampled(ds, root):
        raise DataError(f"no sample for {ds} under {root} (run the sample step first)")
    fs, day = storage.filesystem_for(partition_dir(root, ds))
    files = sorted((f for f in storage.files_under(partition_dir(root, ds)) if "/window=" in f),
                   key=lambda f: (int(f.rpartition("/window=")[2].partition("/")[0]), f))
    partitioning = pads.partitioning(pa.schema([("window", pa.int16())]), flavor="hive")
    return pads.dataset(files, filesystem=fs, format="parquet", partitioning=partitioning,
                        partition_base_dir=day)


def read_sample(ds: date, root: Location) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read back a day's sample rows (with ``window``) and its window summary, in memory."""
    rows = pl.from_arrow(sample_files(ds, root).to_table())
    return rows, storage.read_parquet(storage.join(partition_dir(root, ds), WINDOWS_FILE))
