"""The Parquet files every log source gives: the windows they are asked about, each file's
footer, the checks of the logs' columns, the rows no window takes, and reading a file as the
logs' rows.

A source (feco.sources.folder, .iceberg, .delta) finds the files of a day's sampling windows;
from there all read the same way, so a table's data files are sampled by the same code as a
folder's hour files. A table's file reads through its ``FileLayout`` (feco.sources.tables):
its columns under the table's names, without the rows the table deletes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from feco.config import Config, OptionalColumn
from feco.dimensions import by_source
from feco.errors import DataError

if TYPE_CHECKING:
    from feco.sources.tables import FileLayout


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
    midnight, _ = utc_day(ds)
    length = timedelta(minutes=config.sampling.window_minutes)
    return [
        Window(i, midnight + timedelta(minutes=m), midnight + timedelta(minutes=m) + length)
        for i, m in enumerate(config.sampling.start_minutes())
    ]


def utc_day(ds: date) -> tuple[datetime, datetime]:
    midnight = datetime(ds.year, ds.month, ds.day, tzinfo=UTC)
    return midnight, midnight + timedelta(days=1)



FILE = "__feco_file"  # a row's file, by its index in a window's LogFiles (feco.sampling); never written
ROW = "__feco_row"  # a row's position in its file, where a table deletes rows of it; never written
RESERVED_COLUMNS = ("window", FILE, ROW)  # columns feco adds: the logs must not have them


class LogFiles(NamedTuple):
    """Log files: where each is, for reading it, and how to name it in a message."""

    fs: pafs.FileSystem
    paths: list[str]  # paths of fs
    names: list[str]  # each as the configured logs location names it (with its scheme)
    # A table's files: by path, how each reads as the table's rows (feco.sources.tables). None: a
    # folder's files, read by column name as they are.
    layouts: dict[str, FileLayout] | None = None

    def subset(self, paths: list[str]) -> LogFiles:
        name = dict(zip(self.paths, self.names))
        return LogFiles(self.fs, paths, [name[p] for p in paths], self.layouts)


class WindowFiles(NamedTuple):
    window: Window
    files: LogFiles  # the hour files it reads
    null_timestamps: int  # their rows without a timestamp; a file two windows read counts in the first
    hours_missing: list[int]  # hours it reads that have no files
    rows_outside_day: int  # their rows stamped on another day, never in a sample; counted as null_timestamps
    table_version: str | None = None  # the log table's snapshot id or version read; None: a folder


def with_counts(windows: list[Window], read: list[LogFiles], missing: list[list[int]],
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


def named(windows: list[Window]) -> str:
    return ", ".join(f"{w.index} ({w.start:%H:%M}-{w.end:%H:%M})" for w in windows)


class Footers(NamedTuple):
    files: LogFiles
    metadata: dict[str, pq.FileMetaData]  # by path

    def name(self, path: str) -> str:
        return self.files.names[self.files.paths.index(path)]


def read_footers(files: LogFiles) -> Footers:
    """Each file's Parquet footer (its schema, row groups and statistics), naming a file that
    cannot be read."""
    footers = {}
    for path, name in zip(files.paths, files.names):
        try:
            footers[path] = pq.read_metadata(files.fs.open_input_file(path))
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"corrupt or unreadable Parquet file {name}: {error}") from None
    return Footers(files, footers)


def check_columns(columns: pl.Schema, source: str, *, config: Config) -> None:
    """The logs' columns hold the timestamp, the event id, the segments' columns and the
    optional columns the config names, the features are numbers where present, and no name is
    one feco adds: checked before a day is sampled, each error naming the file (or table) and
    the config's key."""
    logs, named = config.logs, f"in {config.source}"
    reserved = [c for c in RESERVED_COLUMNS if c in columns]
    if reserved:
        raise DataError(f"the logs have a column '{reserved[0]}', a name feco's sample adds ({source}); "
                        "rename it in the logs")
    for role, key in (("timestamp", "timestamp"), ("event id", "event_id")):
        if getattr(logs, key) not in columns:
            raise DataError(f"{role} column '{getattr(logs, key)}' not in the logs ({source}; [logs] {key} {named})")
    for optional in config.optional_columns():  # a column the config names is one it expects
        if optional.named and optional.column not in columns:
            raise DataError(f"column '{optional.column}' not in the logs ({source}; {optional.key} {named}): it "
                            f"turns on {optional.turns_on}; name the column that holds it, or leave the key out "
                            "to run without it")
    if not isinstance(columns[logs.timestamp], pl.Datetime):
        raise DataError(f"timestamp column '{logs.timestamp}' is {columns[logs.timestamp]}, not a timestamp ({source})")
    used = {d for dims in config.segments.names() for d in dims}
    for key, dimensions in by_source().items():  # the [logs] key of each dimension, for the error
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


def not_measured(columns: Iterable[str], *, config: Config) -> list[OptionalColumn]:
    """The optional columns (``Config.optional_columns``) not among ``columns``: what feco
    does not measure on these logs.

    Examples
    --------
    Logs with a label but neither the served position nor a product id:

    >>> from pathlib import Path
    >>> from feco.config import parse_config
    >>> config = parse_config({"paths": {"logs": "l", "samples": "s", "warehouse": "w.duckdb"},
    ...                        "logs": {"features": ["f"]}}, source=Path("/tmp/feco.toml"))
    >>> [(o.key, o.column) for o in not_measured(["event_ts", "event_id", "f", "label"], config=config)]
    [('[ranker] position', 'position'), ('[logs] product_id', 'product_id')]
    """
    present = set(columns)
    return [optional for optional in config.optional_columns() if optional.column not in present]


class _LeftOut(NamedTuple):
    """A log file's rows that no window takes for their timestamp."""

    null: int  # without a timestamp
    outside_day: int  # stamped on another day than the one whose folder holds the file


def timestamp_counts(footers: Footers, column: str, fs: pafs.FileSystem, *,
                      day: date | None) -> dict[str, _LeftOut]:
    """Per file, its rows whose timestamp ``column`` is NULL or (``day`` given) not on ``day``
    (UTC): from the row groups' statistics, or by reading the column where they cannot tell
    (a writer left them out, or the row group reaches past the day)."""
    bounds = None if day is None else utc_day(day)
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


def scan(files: LogFiles, schema: pl.Schema) -> pl.LazyFrame:
    """The files as one lazy frame, columns in ``schema``'s order, each row with its file's
    index (FILE). Polars' own reader on a local disk (it decodes the other columns only for
    rows that pass the filter), pyarrow's on any other filesystem."""
    layouts = files.layouts or {}
    try:
        return pl.concat([scan_file(path, files.fs, schema, layouts.get(path))
                          .with_columns(pl.lit(index, pl.UInt32).alias(FILE))
                          for index, path in enumerate(files.paths)])
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as error:
        raise DataError(describe_read_failure(files, error)) from None


def scan_file(path: str, fs: pafs.FileSystem, schema: pl.Schema, layout: FileLayout | None) -> pl.LazyFrame:
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


def describe_read_failure(files: LogFiles, error: Exception) -> str:
    """The file that fails when read whole, a batch at a time (only on this failure path)."""
    for path, name in zip(files.paths, files.names):
        try:
            for _ in pq.ParquetFile(files.fs.open_input_file(path)).iter_batches():
                pass
        except Exception as file_error:  # noqa: BLE001 - any failure here names the culprit
            return f"corrupt or unreadable Parquet file {name}: {file_error}"
    return f"cannot read logs ({files.names[0].rpartition('/')[0]}): {str(error).splitlines()[0]}"
