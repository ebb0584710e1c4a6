"""Systematic sampling of search events from a day of logs.

For each configured window of a day, the window's events are ordered by timestamp (ties by
event id) and every k-th event is taken after a seeded random start, k = available / wanted.
An event is taken with all its rows, so ranked lists stay whole. Only the hour partitions
that overlap a window are read, in two passes: the (event id, timestamp) columns to choose the
events, then the chosen events' rows, one window at a time, so memory is set by the sample
and not by traffic. Logs and samples may live on any filesystem feco.storage knows.

feco.sampling.study measures this sample against simple random and reservoir samples.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from feco import storage
from feco.config import Config
from feco.errors import DataError
from feco.log_tables import FileLayout, is_table, table_files
from feco.sample_folder import ROWS_FILE, keep_day_query_events, query_event_pairs, write_rows
from feco.sampling.day_folder import replace_day
from feco.storage import Location, partition_dir


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
    midnight, _ = _utc_day(ds)
    length = timedelta(minutes=config.sampling.window_minutes)
    return [
        Window(i, midnight + timedelta(minutes=m), midnight + timedelta(minutes=m) + length)
        for i, m in enumerate(config.sampling.start_minutes())
    ]


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


FILE = "__feco_file"  # a row's file, by its index in WindowChoice.files; never written
ROW = "__feco_row"  # a row's position in its file, where a table deletes rows of it; never written
RESERVED_COLUMNS = ("window", FILE, ROW)  # columns feco adds: the logs must not have them
# The [logs] key naming the column of each segment dimension, for the error that names it
# (product_age and age_band both come from the product's first-seen date).
SEGMENT_KEYS = {"product_group": ("product_group",), "region": ("region",), "query": ("query_band",),
                "product_first_seen": ("product_age", "age_band")}


def choose_events(ds: date, config: Config, *, allow_incomplete: bool = False) -> list[WindowChoice]:
    """Choose each window's events from its (event id, timestamp) columns alone.

    Memory grows with the events in a window (two columns of them), not with their rows; the
    rows are read afterwards, only those of the chosen events (``sample_day``, ``write_sample``).
    """
    schema, windows = window_files(ds, config, allow_incomplete=allow_incomplete)
    choices = [_choose(w, schema, ds=ds, config=config) for w in windows]
    check_windows(ds, config, windows, [c.summary for c in choices], allow_incomplete=allow_incomplete)
    return choices


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
    empty = [w.window for w, s in zip(windows, summaries) if not s.events_available and not s.rows_null_event_id]
    if not any(s.events_sampled for s in summaries):
        problem = f"no search events in any sampling window of {ds}"
    elif empty and not allow_incomplete:
        problem = _empty_windows_message(ds, config, empty)
    else:
        return
    raise DataError(problem + _hour_folders_disagree(ds, config, windows))


def sample_day(ds: date, config: Config, *, allow_incomplete: bool = False) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Sample the configured windows of one day, in memory.

    Returns the sampled rows (every log column plus ``window``) and one row per window for
    the ``sample_windows`` table (ds, window, window_start, window_end, events_available,
    events_sampled, step, rows_null_event_id, rows_null_timestamp, hours_missing,
    rows_outside_day, table_version). The same logs, config and seed give the same sample.
    The pipeline streams the rows to files instead (``write_sample``).
    """
    choices = choose_events(ds, config, allow_incomplete=allow_incomplete)
    samples = [_sampled_rows(c).with_columns(window=pl.lit(c.window.index, pl.Int16))
               for c in choices if c.summary.events_sampled]
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
    "rows_null_event_id": pl.Int64,
    "rows_null_timestamp": pl.Int64,
    "hours_missing": pl.List(pl.Int16),
    "rows_outside_day": pl.Int64,
    "table_version": pl.String,
}
_HOUR_FOLDER = re.compile(r"hour=(\d{1,2})")


class LogFiles(NamedTuple):
    """Log files: where each is, for reading it, and how to name it in a message."""

    fs: pafs.FileSystem
    paths: list[str]  # paths of fs
    names: list[str]  # each as the configured logs location names it (with its scheme)
    # A table's files: by path, how each reads as the table's rows (feco.log_tables). None: a
    # folder's files, read by column name as they are.
    layouts: dict[str, FileLayout] | None = None

    def subset(self, paths: list[str]) -> LogFiles:
        name = dict(zip(self.paths, self.names))
        return LogFiles(self.fs, paths, [name[p] for p in paths], self.layouts)


def hour_files(ds: date, logs: Location) -> tuple[LogFiles, dict[int, list[str]]]:
    """The day's Parquet files, and their paths by hour. Files and folders named ``.*`` or
    ``_*`` are left out, as Spark and Hive do; any other file must sit in a folder ``hour=0``
    … ``hour=23``."""
    day = partition_dir(logs, ds)
    if not storage.is_dir(day):
        raise DataError(f"no log partition for {ds}: {day} does not exist{_days_held(logs, ds)}")
    fs, day_path = storage.filesystem_for(day)
    paths = storage.files_under(day)
    by_hour: dict[int, list[str]] = {}
    for path in paths:
        folder, _, name = path.removeprefix(day_path.rstrip("/") + "/").rpartition("/")
        hour = _HOUR_FOLDER.fullmatch(folder)
        if not folder:
            raise DataError(f"log file {name!r} is in {day} itself, not in an hour folder hour=00 … hour=23 "
                            "within it: feco reads ds=YYYY-MM-DD/hour=HH/*.parquet (move the day's files into "
                            "the folders of their hours)")
        if not hour or int(hour.group(1)) > 23:
            raise DataError(f"log file {name!r} is in folder {folder!r} of {day}, not in an hour folder "
                            "hour=00 … hour=23 (rename the folder, or move the file)")
        by_hour.setdefault(int(hour.group(1)), []).append(path)
    if not by_hour:
        raise DataError(f"empty log partition for {ds}: no hour=HH/*.parquet files under {day}")
    return LogFiles(fs, paths, [str(storage.location_of(day, day_path, p)) for p in paths]), by_hour


def _days_held(logs: Location, ds: date) -> str:
    """What the logs hold instead of ``ds``'s folder: the day under another name (``ds=20261001``,
    ``dt=2026-10-01``), else the first and last day folders, else that there are none."""
    fs, path = storage.filesystem_for(logs)
    folders = sorted(info.base_name for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
                     if info.type == pafs.FileType.Directory)
    same_day = [name for name in folders if re.sub(r"\D", "", name) == ds.strftime("%Y%m%d")]
    if same_day:
        return (f"; the logs hold {same_day[0]!r}, which names that day otherwise: feco reads day folders named "
                f"ds=YYYY-MM-DD (rename it ds={ds.isoformat()})")
    days = [name for name in folders if re.fullmatch(r"ds=\d{4}-\d{2}-\d{2}", name)]
    if days:
        return f" (the logs hold {days[0]} to {days[-1]})"
    return f"; {logs} holds no day folder named ds=YYYY-MM-DD"


class WindowFiles(NamedTuple):
    window: Window
    files: LogFiles  # the hour files it reads
    null_timestamps: int  # their rows without a timestamp; a file two windows read counts in the first
    hours_missing: list[int]  # hours it reads that have no files
    rows_outside_day: int  # their rows stamped on another day, never in a sample; counted as null_timestamps
    table_version: str | None = None  # the log table's snapshot id or version read; None: a folder


def window_files(ds: date, config: Config, *, allow_incomplete: bool = False) -> tuple[pl.Schema, list[WindowFiles]]:
    """The logs' columns and each window's hour files, once the files have been checked:
    every hour a window reads has files (unless ``allow_incomplete``), and their footers show
    the same columns (in any order) of the same types, the timestamp and the event id among
    them. These are the input checks of both engines, with ``check_one_file_per_event``.
    Logs in a table (feco.log_tables): the files its metadata gives each window."""
    if is_table(config.paths.logs):
        return _table_window_files(ds, config, allow_incomplete=allow_incomplete)
    day_files, by_hour = hour_files(ds, config.paths.logs)
    windows = day_windows(ds, config)
    missing = [[h for h in w.hours() if h not in by_hour] for w in windows]
    if any(missing) and not allow_incomplete:
        raise DataError(_missing_hours_message(ds, config, windows, missing))
    read = [day_files.subset([f for h in w.hours() for f in by_hour.get(h, [])]) for w in windows]
    footers = _read_footers(day_files.subset(list(dict.fromkeys(f for files in read for f in files.paths))))
    schema = _check_log_schema(footers, config=config)
    counts = _timestamp_counts(footers, config.logs.timestamp, day_files.fs, day=ds)
    return schema, _with_counts(windows, read, missing, counts)


def _table_window_files(ds: date, config: Config, *, allow_incomplete: bool) -> tuple[pl.Schema, list[WindowFiles]]:
    """``window_files`` for logs in a table, at its current snapshot or version or at
    ``[paths] logs_as_of``: its metadata chooses each window's data files, its schema there is
    the logs' schema, and each file reads through its layout (columns matched as the table
    matches them, deleted rows left out; see feco.log_tables)."""
    table, windows = config.paths.logs, day_windows(ds, config)
    found = table_files(table, [(w.start, w.end) for w in windows], timestamp=config.logs.timestamp,
                        catalog=config.paths.iceberg_catalog, as_of=config.paths.logs_as_of)
    empty = [w for w, files in zip(windows, found.windows) if not files]
    if empty and not allow_incomplete:
        raise DataError(f"the log table {table} has no data files for {ds} in sampling windows {_named(empty)}: "
                        "complete the logs, or run with --allow-incomplete to record those windows as missing")
    named = list(dict.fromkeys(f for files in found.windows for f in files))
    fs = storage.filesystem_for(named[0])[0] if named else pafs.LocalFileSystem()
    path = {f: storage.filesystem_for(f)[1] for f in named}
    footers = _read_footers(LogFiles(fs, list(path.values()), named))
    day_files = LogFiles(fs, list(path.values()), named, {
        path[f]: found.layout(f, footers.metadata[path[f]].schema.to_arrow_schema()) for f in named})
    read = [day_files.subset([path[f] for f in files]) for files in found.windows]
    schema = pl.from_arrow(found.schema.empty_table()).schema
    _check_columns(schema, table, config=config)
    # A row of another day in a table is read on its own day: none is left out.
    counts = _timestamp_counts(Footers(day_files, footers.metadata), config.logs.timestamp, fs, day=None)
    missing = [[] if files.paths else window.hours() for window, files in zip(windows, read)]
    return schema, [w._replace(table_version=found.version) for w in _with_counts(windows, read, missing, counts)]


def _with_counts(windows: list[Window], read: list[LogFiles], missing: list[list[int]],
                 counts: dict[str, _LeftOut]) -> list[WindowFiles]:
    """Each window's files, hours missing and the rows of its files in no window; a file two
    windows read is counted in the first, so that a day's counts add up."""
    counted, checked = set(), []
    for window, files, hours in zip(windows, read, missing):
        new = [f for f in files.paths if f not in counted]
        checked.append(WindowFiles(window, files, sum(counts[f].null for f in new), hours,
                                   sum(counts[f].outside_day for f in new)))
        counted.update(new)
    return checked


def _missing_hours_message(ds: date, config: Config, windows: list[Window], missing: list[list[int]]) -> str:
    affected = _named([w for w, hs in zip(windows, missing) if hs])
    return (f"the logs of {ds} have no files for {_folders(h for hs in missing for h in hs)} under "
            f"{partition_dir(config.paths.logs, ds)}, which sampling windows {affected} read: complete the logs, "
            "or run with --allow-incomplete to record those windows as missing")


def _empty_windows_message(ds: date, config: Config, empty: list[Window]) -> str:
    where = (f"the log table {config.paths.logs}" if is_table(config.paths.logs) else
             f"{_folders(h for w in empty for h in w.hours())} under {partition_dir(config.paths.logs, ds)}")
    return (f"the logs of {ds} have files but no rows in the time of sampling windows {_named(empty)} ({where}): "
            "complete the logs, or run with --allow-incomplete to record those windows as missing")


def _named(windows: list[Window]) -> str:
    return ", ".join(f"{w.index} ({w.start:%H:%M}-{w.end:%H:%M})" for w in windows)


def _folders(hours: Iterable[int]) -> str:
    return ", ".join(f"hour={h:02d}" for h in sorted(set(hours)))


def _hour_folders_disagree(ds: date, config: Config, windows: list[WindowFiles]) -> str:
    """``: <how>`` when most rows of the hour files the windows read are stamped a whole
    number of hours (not 0) away from their folder's hour, as when the logs are written in
    local time; else empty. It reads the files' timestamp column, so only a refusal asks."""
    paths = list(dict.fromkeys(p for w in windows for p in w.files.paths))
    if is_table(config.paths.logs) or not paths:
        return ""
    fs, ts, (midnight, _) = windows[0].files.fs, config.logs.timestamp, _utc_day(ds)
    folder = {p: int(_HOUR_FOLDER.fullmatch(p.rsplit("/", 2)[-2]).group(1)) for p in paths}
    shifts = pl.concat([
        (pl.from_arrow(pq.ParquetFile(fs.open_input_file(p)).read(columns=[ts]).column(0)).dt.epoch("s")
         - int(midnight.timestamp())) // 3600 - folder[p]
        for p in paths
    ]).drop_nulls()
    if shifts.is_empty():
        return ""
    shift, rows = shifts.value_counts(sort=True).row(0)
    if shift == 0 or 2 * rows <= shifts.len():
        return ""
    example = next((h for h in sorted(folder.values()) if 0 <= h + shift < 24), min(folder.values()))
    hours = f"{abs(shift)} hour{'s' if abs(shift) > 1 else ''} {'later' if shift > 0 else 'earlier'}"
    return (f": the rows in the hour folders are stamped {hours} than their folder (UTC; hour={example:02d} holds "
            f"rows stamped {(example + shift) % 24:02d}:xx): timestamps and hour folders disagree, and feco reads "
            "hour folders and naive timestamps as UTC: are the timestamps or the folders in local time?")


class Footers(NamedTuple):
    files: LogFiles
    metadata: dict[str, pq.FileMetaData]  # by path

    def name(self, path: str) -> str:
        return self.files.names[self.files.paths.index(path)]


def _read_footers(files: LogFiles) -> Footers:
    """Each file's Parquet footer (its schema, row groups and statistics), naming a file that
    cannot be read."""
    footers = {}
    for path, name in zip(files.paths, files.names):
        try:
            footers[path] = pq.read_metadata(files.fs.open_input_file(path))
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"corrupt or unreadable Parquet file {name}: {error}") from None
    return Footers(files, footers)


def _check_log_schema(footers: Footers, *, config: Config) -> pl.Schema:
    """The logs' columns (those of the first file), once every file has the same columns of the
    same types, in any order, with the timestamp and the event id among them."""
    if not footers.metadata:
        return pl.Schema()
    # as polars reads them: Parquet's string and large_string are both String
    schemas = {footers.name(path): pl.from_arrow(footer.schema.to_arrow_schema().empty_table()).schema
               for path, footer in footers.metadata.items()}
    (first, columns), *others = schemas.items()
    for path, schema in others:
        for name in [*columns, *schema]:
            if name not in schema or name not in columns:
                has, lacks = (first, path) if name in columns else (path, first)
                raise DataError(f"the logs' columns differ: {has} has column '{name}', {lacks} does not")
            if schema[name] != columns[name]:
                raise DataError(f"the logs' columns differ: column '{name}' is {columns[name]} in {first}, "
                                f"{schema[name]} in {path}")
    _check_columns(columns, first, config=config)
    return columns


def _check_columns(columns: pl.Schema, source: str, *, config: Config) -> None:
    """The logs' columns hold the timestamp, the event id and the segments' columns, the
    features are numbers where present, and no name is one feco adds: checked before a day is
    sampled, each error naming the file (or table) and the config's key."""
    logs, named = config.logs, f"in {config.source}"
    reserved = [c for c in RESERVED_COLUMNS if c in columns]
    if reserved:
        raise DataError(f"the logs have a column '{reserved[0]}', a name feco's sample adds ({source}); "
                        "rename it in the logs")
    for role, key in (("timestamp", "timestamp"), ("event id", "event_id"), ("label", "label")):
        if getattr(logs, key) not in columns:
            raise DataError(f"{role} column '{getattr(logs, key)}' not in the logs ({source}; [logs] {key} {named})"
                            + (": the graded label the NDCG of the served order and of the ranker is taken on, "
                               "from the first day" if key == "label" else ""))
    if not isinstance(columns[logs.timestamp], pl.Datetime):
        raise DataError(f"timestamp column '{logs.timestamp}' is {columns[logs.timestamp]}, not a timestamp ({source})")
    used = {d for dims in config.segments.names() for d in dims}
    for key, dimensions in SEGMENT_KEYS.items():
        wanted = [d for d in dimensions if d in used]
        if wanted and getattr(logs, key) not in columns:
            raise DataError(f"segment column '{getattr(logs, key)}' (for the {' and '.join(wanted)} segments) is not "
                            f"in the logs ({source}): set [logs] {key} {named} to the column that holds it, or leave "
                            f"{' and '.join(wanted)} out of [segments] dimensions and crosses")
    for feature in logs.features:
        dtype = columns.get(feature)
        if dtype is not None and not (dtype.is_numeric() or dtype in (pl.Boolean, pl.Null)):
            raise DataError(f"feature column '{feature}' is {dtype}, not numeric ({source}; listed in [logs] features "
                            f"{named}): write it as numbers in the logs, or leave it out of features")


class _LeftOut(NamedTuple):
    """A log file's rows that no window takes for their timestamp."""

    null: int  # without a timestamp
    outside_day: int  # stamped on another day than the one whose folder holds the file


def _timestamp_counts(footers: Footers, column: str, fs: pafs.FileSystem, *,
                      day: date | None) -> dict[str, _LeftOut]:
    """Per file, its rows whose timestamp ``column`` is NULL or (``day`` given) not on ``day``
    (UTC): from the row groups' statistics, or by reading the column where they cannot tell
    (a writer left them out, or the row group reaches past the day)."""
    bounds = None if day is None else _utc_day(day)
    counts = {}
    for path, footer in footers.metadata.items():
        layout = (footers.files.layouts or {}).get(path)
        if layout is not None and (layout.deleted or column not in layout.columns):
            counts[path] = _LeftOut(_table_null_timestamps(path, footer, fs, layout, column), 0)
            continue
        stored = layout.columns[column] if layout else column  # a table's file may name it otherwise
        index = [footer.schema.column(i).path for i in range(footer.num_columns)].index(stored)
        null = outside = 0
        for group in range(footer.num_row_groups):
            statistics = footer.row_group(group).column(index).statistics
            if (statistics is not None and statistics.has_null_count
                    and (bounds is None or _within(statistics, bounds))):
                null += statistics.null_count
                continue
            table = pq.ParquetFile(fs.open_input_file(path)).read_row_group(group, columns=[stored])
            stamps = pl.from_arrow(table.column(0))
            null += stamps.null_count()
            outside += 0 if bounds is None else _outside(stamps, bounds)
        counts[path] = _LeftOut(null, outside)
    return counts


def _table_null_timestamps(path: str, footer: pq.FileMetaData, fs: pafs.FileSystem, layout: FileLayout,
                           column: str) -> int:
    """A table's data file's rows without a timestamp, read: its statistics count the rows the
    table deletes too. A file without the column has it NULL in every row (or its partition value)."""
    if column not in layout.columns:
        return 0 if layout.constants.get(column) is not None else footer.num_rows - len(layout.deleted)
    stamps = pq.ParquetFile(fs.open_input_file(path)).read(columns=[layout.columns[column]]).column(0)
    kept = np.ones(len(stamps), bool)
    kept[list(layout.deleted)] = False
    return stamps.filter(pa.array(kept)).null_count


def _utc_day(ds: date) -> tuple[datetime, datetime]:
    midnight = datetime(ds.year, ds.month, ds.day, tzinfo=UTC)
    return midnight, midnight + timedelta(days=1)


def _within(statistics: pq.Statistics, bounds: tuple[datetime, datetime]) -> bool:
    """Whether a row group's statistics show all its timestamps within ``bounds``."""
    if not statistics.has_min_max or not isinstance(statistics.min, datetime):
        return False
    low, high = (v if v.tzinfo else v.replace(tzinfo=UTC) for v in (statistics.min, statistics.max))
    return bounds[0] <= low and high < bounds[1]


def _outside(stamps: pl.Series, bounds: tuple[datetime, datetime]) -> int:
    """Timestamps outside ``bounds``, naive ones taken as UTC (their epoch is their wall clock's)."""
    start, end = (int(b.timestamp()) * 1_000_000 for b in bounds)
    epoch = stamps.dt.epoch("us")
    return int(((epoch < start) | (epoch >= end)).sum())


def _choose(window: WindowFiles, schema: pl.Schema, *, ds: date, config: Config) -> WindowChoice:
    ts, event_id = config.logs.timestamp, config.logs.event_id
    files = window.files
    if not files.paths:
        summary = WindowSummary.of(ds, window, available=0, wanted=config.sampling.events_per_window, null_event_ids=0)
        return WindowChoice(window.window, None, summary, files)
    rows = _window_rows(_scan(files, schema), window.window, ts=ts, dtype=schema[ts])
    keys = _collect(rows.select(pl.col(event_id).alias("event_id"), pl.col(ts).alias("ts"), FILE), files)
    events = (keys.drop_nulls("event_id").group_by("event_id")
              .agg(pl.col("ts").min().alias("first_ts"), pl.col(FILE).min().alias("first_file"),
                   pl.col(FILE).max().alias("last_file")))
    chosen, summary = chosen_events(events, window, ds=ds, config=config,
                                    null_event_ids=keys.get_column("event_id").null_count())
    rows = rows.filter(pl.col(event_id).is_not_null() if chosen is None else pl.col(event_id).is_in(chosen.implode()))
    return WindowChoice(window.window, rows, summary, files)


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


def systematic_positions(available: int, wanted: int, *, seed: int, ds: date, window: int) -> np.ndarray:
    """Positions (in event order) of the ``wanted`` events out of ``available``: every k-th,
    k = available / wanted, after a random start seeded by (seed, day, window)."""
    step = available / wanted
    rng = np.random.default_rng([seed, ds.toordinal(), window])
    offsets = np.floor(rng.uniform(0, step) + step * np.arange(wanted)).astype(np.int64)
    return np.minimum(offsets, available - 1)


def _scan(files: LogFiles, schema: pl.Schema) -> pl.LazyFrame:
    """The files as one lazy frame, columns in ``schema``'s order, each row with its file's
    index (FILE). Polars' own reader on a local disk (it decodes the other columns only for
    rows that pass the filter), pyarrow's on any other filesystem."""
    layouts = files.layouts or {}
    try:
        return pl.concat([_scan_file(path, files.fs, schema, layouts.get(path))
                          .with_columns(pl.lit(index, pl.UInt32).alias(FILE))
                          for index, path in enumerate(files.paths)])
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as error:
        raise DataError(describe_read_failure(files, error)) from None


def _scan_file(path: str, fs: pafs.FileSystem, schema: pl.Schema, layout: FileLayout | None) -> pl.LazyFrame:
    """One file's rows with ``schema``'s columns in its order. A folder's files all have them
    by name (window_files checks). A table's file reads through its layout: its columns under
    the table's names, NULL for a column it lacks (added later) or its partition value, as the
    type the table may have widened since; without the rows the table deletes."""
    if fs.type_name == "local":
        scan = pl.scan_parquet(path, hive_partitioning=False)
    else:
        import pyarrow.dataset as pads

        scan = pl.scan_pyarrow_dataset(pads.dataset(path, filesystem=fs, format="parquet"))
    if layout is not None and layout.deleted:
        deleted = pl.Series(layout.deleted, dtype=pl.get_index_type()).implode()
        scan = scan.with_row_index(ROW).filter(~pl.col(ROW).is_in(deleted))
    found = scan.collect_schema()
    if layout is None and found == schema:
        return scan
    columns = layout.columns if layout is not None else {name: name for name in found}
    constants = layout.constants if layout is not None else {}
    # picked by position, as a name may read as a pattern (^a$, *)
    names = found.names()
    return scan.select([pl.nth(names.index(columns[name])).cast(dtype).alias(name) if name in columns
                        else pl.lit(constants.get(name)).cast(dtype).alias(name) for name, dtype in schema.items()])


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


def describe_read_failure(files: LogFiles, error: Exception) -> str:
    """The file that fails when read whole, a batch at a time (only on this failure path)."""
    for path, name in zip(files.paths, files.names):
        try:
            for _ in pq.ParquetFile(files.fs.open_input_file(path)).iter_batches():
                pass
        except Exception as file_error:  # noqa: BLE001 - any failure here names the culprit
            return f"corrupt or unreadable Parquet file {name}: {file_error}"
    return f"cannot read logs ({files.names[0].rpartition('/')[0]}): {str(error).splitlines()[0]}"


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


def sample_window(window: WindowFiles, schema: pl.Schema, day: Location, *, ds: date,
                  config: Config) -> tuple[WindowSummary, pl.DataFrame | None]:
    """One window whole: choose its events and write their rows into the day's folder ``day``;
    its summary row and the rows' query_event_pairs (None: nothing sampled). What the Spark
    engine runs in a task, a window to a task."""
    choice = _choose(window, schema, ds=ds, config=config)
    return choice.summary, _write_window(choice, day, config) if choice.summary.events_sampled else None


def _write_window(choice: WindowChoice, day: Location, config: Config) -> pl.DataFrame | None:
    """Write the window's rows under ``day``/window=N/; return their query_event_pairs."""
    rows = _sampled_rows(choice)
    write_rows(rows, storage.join(day, f"window={choice.window.index}", ROWS_FILE))
    return query_event_pairs(rows, event_id=config.logs.event_id, query=config.logs.query)


def _sampled_rows(choice: WindowChoice) -> pl.DataFrame:
    """The window's sampled rows, in the logs' order: only they are held, the rest of the
    window is filtered out as it is read."""
    return _collect(choice.rows, choice.files).drop(FILE)
