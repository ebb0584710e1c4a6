"""Systematic sampling of search events from a day of logs.

For each configured window of a day, the window's events are ordered by timestamp (ties by
event id) and every k-th event is taken after a seeded random start, k = available / wanted.
An event is taken with all its rows, so ranked lists stay whole. Only the hour partitions
that overlap a window are read.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq

from feco.config import Config
from feco.errors import DataError


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


def partition_dir(root: Path, ds: date) -> Path:
    return root / f"ds={ds.isoformat()}"


def sample_day(ds: date, config: Config) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Sample the configured windows of one day.

    Returns the sampled rows (every log column plus ``window``) and one row per window for
    the ``sample_windows`` table. The same logs, config and seed give the same sample.

    Examples
    --------
    >>> rows, windows = sample_day(date(2026, 1, 5), config)  # doctest: +SKIP
    >>> windows.columns
    ['ds', 'window', 'window_start', 'window_end', 'events_available', 'events_sampled', 'step']
    """
    files_by_hour = _hour_files(ds, config.paths.logs)
    windows = day_windows(ds, config)
    window_files = [[f for h in w.hours() for f in files_by_hour.get(h, [])] for w in windows]
    frames = _read_windows(window_files, windows, config)
    samples, summaries = [], []
    for window, rows in zip(windows, frames):
        picked, summary = _pick_events(rows, window, ds=ds, config=config)
        samples.append(picked.with_columns(pl.lit(window.index, pl.Int16).alias("window")))
        summaries.append(summary)
    non_empty = [s for s in samples if s.height]
    if not non_empty:
        raise DataError(f"no search events in any sampling window of {ds}")
    rows = pl.concat(non_empty, how="vertical_relaxed")
    return rows, pl.DataFrame(summaries, schema=_WINDOW_SCHEMA, orient="row")


_WINDOW_SCHEMA = {
    "ds": pl.Date,
    "window": pl.Int16,
    "window_start": pl.Datetime("us", "UTC"),
    "window_end": pl.Datetime("us", "UTC"),
    "events_available": pl.Int64,
    "events_sampled": pl.Int64,
    "step": pl.Float64,
}


def _hour_files(ds: date, logs: Path) -> dict[int, list[Path]]:
    day = partition_dir(logs, ds)
    if not day.is_dir():
        raise DataError(f"no log partition for {ds}: {day} does not exist")
    files: dict[int, list[Path]] = {}
    for path in sorted(day.glob("hour=*/*.parquet")):
        hour = path.parent.name.removeprefix("hour=")
        if hour.isdigit() and 0 <= int(hour) < 24:
            files.setdefault(int(hour), []).append(path)
    if not files:
        raise DataError(f"empty log partition for {ds}: no hour=HH/*.parquet files under {day}")
    return files


def _read_windows(window_files: list[list[Path]], windows: list[Window], config: Config) -> list[pl.DataFrame]:
    """Each window's rows, read in parallel; Parquet statistics skip row groups outside it."""
    ts = config.logs.timestamp
    every_file = sorted({f for files in window_files for f in files})
    if not every_file:
        return [pl.DataFrame() for _ in windows]
    try:
        schema = pl.scan_parquet(every_file[0], hive_partitioning=False).collect_schema()
        if ts not in schema:
            raise DataError(f"timestamp column '{ts}' not in the logs ({every_file[0]})")
        scans = {}
        for index, (files, window) in enumerate(zip(window_files, windows)):
            if files:
                start, end = _bounds_like(schema[ts], window, ts=ts, file=files[0])
                scans[index] = pl.scan_parquet(files, hive_partitioning=False).filter(
                    (pl.col(ts) >= start) & (pl.col(ts) < end))
        read = dict(zip(scans, pl.collect_all(list(scans.values()))))
    except (pl.exceptions.PolarsError, OSError) as error:
        raise DataError(_describe_read_failure(every_file, error)) from None
    return [read.get(index, pl.DataFrame()) for index in range(len(windows))]


def _bounds_like(dtype: pl.DataType, window: Window, *, ts: str, file: Path):
    """Window bounds as literals of the column's own type, so Parquet statistics still prune."""
    if not isinstance(dtype, pl.Datetime):
        raise DataError(f"timestamp column '{ts}' is {dtype}, not a timestamp ({file})")
    if dtype.time_zone is None:  # naive timestamps are taken as UTC
        return window.start.replace(tzinfo=None), window.end.replace(tzinfo=None)
    return (pl.lit(window.start).dt.convert_time_zone(dtype.time_zone),
            pl.lit(window.end).dt.convert_time_zone(dtype.time_zone))


def _describe_read_failure(files: list[Path], error: Exception) -> str:
    for path in files:
        try:
            pq.ParquetFile(path).metadata
        except Exception as file_error:  # noqa: BLE001 - any failure here names the culprit
            return f"corrupt or unreadable Parquet file {path}: {file_error}"
    return f"cannot read logs ({files[0].parent.parent}): {error}"


def _pick_events(rows: pl.DataFrame, window: Window, *, ds: date, config: Config):
    ts, event_id = config.logs.timestamp, config.logs.event_id
    wanted = config.sampling.events_per_window
    if rows.height == 0:
        return rows, (ds, window.index, window.start, window.end, 0, 0, None)
    if event_id not in rows.columns:
        raise DataError(f"event id column '{event_id}' not in the logs")
    events = rows.group_by(event_id).agg(pl.col(ts).min()).sort([ts, event_id]).get_column(event_id)
    available = events.len()
    if available <= wanted:  # a short window is taken whole, in the logs' own row order
        return rows, (ds, window.index, window.start, window.end, available, available, 1.0)
    step = available / wanted
    rng = np.random.default_rng([config.sampling.seed, ds.toordinal(), window.index])
    offsets = np.floor(rng.uniform(0, step) + step * np.arange(wanted)).astype(np.int64)
    chosen = events.gather(np.minimum(offsets, available - 1))
    picked = rows.filter(pl.col(event_id).is_in(chosen.implode()))
    return picked, (ds, window.index, window.start, window.end, available, wanted, round(step, 6))


def write_sample(ds: date, rows: pl.DataFrame, windows: pl.DataFrame, root: Path) -> Path:
    """Write a day's sample as ``root/ds=…/window=N/part-0.parquet``, replacing it whole.

    The day is written to a temporary folder and swapped in by rename, so readers never see
    a half-written day and a crash leaves the previous sample.
    """
    final = partition_dir(root, ds)
    staging = final.with_name(final.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for index in windows.get_column("window").to_list():
        window_rows = rows.filter(pl.col("window") == index).drop("window")
        (staging / f"window={index}").mkdir()
        window_rows.write_parquet(staging / f"window={index}" / "part-0.parquet")
    windows.write_parquet(staging / "_windows.parquet")
    _swap_in(staging, final)
    return final


def _swap_in(staging: Path, final: Path) -> None:
    retired = final.with_name(final.name + ".old")
    shutil.rmtree(retired, ignore_errors=True)
    if final.exists():
        final.rename(retired)
    staging.rename(final)
    shutil.rmtree(retired, ignore_errors=True)


def sampled_query_events(days: list[date], root: Path, *, event_id: str, query: str) -> pl.DataFrame:
    """Sampled events per query over the days whose samples exist: ``query``, ``n``."""
    days_events = []
    for ds in days:
        files = sorted(partition_dir(root, ds).glob("window=*/part-0.parquet"))
        # a day sampled before the query column existed has nothing to say about bands
        readable = [f for f in files if {event_id, query} <= set(pl.read_parquet_schema(f))]
        frames = [f for f in (pl.read_parquet(f, columns=[event_id, query]) for f in readable) if f.height]
        if frames:  # an event id is only unique within its day
            days_events.append(pl.concat(frames, how="vertical_relaxed").unique().get_column(query))
    if not days_events:
        return pl.DataFrame(schema={"query": pl.String, "n": pl.Int64})
    queries = pl.concat(days_events).drop_nulls().cast(pl.String)
    return queries.value_counts(name="n").rename({queries.name: "query"}).cast({"n": pl.Int64})


def read_sample(ds: date, root: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read back a day's sample rows (with ``window``) and its window summary."""
    day = partition_dir(root, ds)
    summary = day / "_windows.parquet"
    if not summary.exists():
        raise DataError(f"no sample for {ds} under {root} (run the sample step first)")
    windows = pl.read_parquet(summary)
    parts = [
        pl.read_parquet(day / f"window={w}" / "part-0.parquet")
        .with_columns(pl.lit(w, pl.Int16).alias("window"))
        for w in windows.get_column("window").to_list()
    ]
    parts = [p for p in parts if p.height] or parts[:1]
    return pl.concat(parts, how="vertical_relaxed"), windows

