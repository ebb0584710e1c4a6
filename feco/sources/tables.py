"""What the table sources share (feco.sources.iceberg, feco.sources.delta): reading a day's
windows and readiness from a table's metadata, how a data file reads as the table's rows, and
one-line errors naming the table.

Which data files a sampling window reads comes from the table's own metadata, never from a
listing (each format's module says how); files left behind in the table's folder and files of
other times are never opened.

The sampler reads those files itself (the same code as a folder's hour files,
feco.sources.logfiles), each through its ``FileLayout``: the table's columns are matched to a
file's Parquet columns as the format's own readers match them, by field id (Iceberg; Delta
with column mapping in ``id`` mode) or by the physical name the table's schema gives them
(Delta's column mapping in ``name`` mode; a Delta table without column mapping by name). So a
renamed column reads under its new name in files written before the rename, a dropped column
stays dropped when a column of the same name is added again, and a column a file lacks reads
as NULL (a Delta partition column, which its files do not store, as the file's partition
value). Rows a table deletes without rewriting its files are left out: Iceberg position
deletes (Parquet files) and Delta deletion vectors.

One read is of one snapshot (Iceberg) or version (Delta): the current one, or ``as_of``
(``[paths] logs_as_of``, ``feco run --as-of``); ``TableFiles.version`` records which, and the
table's schema at it is the logs' schema.

Refused in one line, naming the table: a data file without Parquet field ids in a table that
matches by field id and has no name mapping (and what each format's module refuses).

pyarrow is imported where a table is read: ``feco status`` asks a table its version alone.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, NamedTuple

from feco.config import Config
from feco.errors import DataError, UsageError

if TYPE_CHECKING:
    import polars as pl
    import pyarrow as pa

    from feco.sources.logfiles import Window, WindowFiles

FIELD_ID = b"PARQUET:field_id"  # where Parquet's field id sits in an Arrow field's metadata
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # the commit time of a table never committed to


class FileLayout(NamedTuple):
    """How one data file reads as rows of the table."""

    columns: dict[str, str]  # the table's column -> the file's Parquet column holding it
    constants: dict[str, object]  # the table's columns the file does not store, with their value
    deleted: tuple[int, ...]  # positions (from 0) of the file's rows the table deletes, ascending


@dataclass(frozen=True)
class TableFiles:
    """What the table's metadata says about a day's windows, at one snapshot or version."""

    schema: pa.Schema  # the table's schema at that snapshot or version
    windows: list[list[str]]  # per window, its data files (URIs or local paths), in the table's order
    committed_at: datetime  # the commit read (UTC)
    version: str | None  # the Iceberg snapshot id or Delta version read; None: an empty Iceberg table
    by_id: dict[int, str]  # Parquet field id -> the table's column; empty: columns match by name
    by_name: dict[str, str]  # Parquet column name -> the table's column, for files matched by name
    constants: dict[str, dict[str, object]] = field(default_factory=dict)  # by file: see FileLayout
    deleted: dict[str, tuple[int, ...]] = field(default_factory=dict)  # by file: see FileLayout

    def layout(self, file: str, parquet: pa.Schema) -> FileLayout:
        """How ``file``, whose Parquet schema (as Arrow reads its footer) is ``parquet``, reads
        as the table's rows: by field id when the table matches by id and the file has them,
        else by name (an Iceberg table's name mapping, a Delta table's physical names)."""
        ids = [(column.metadata or {}).get(FIELD_ID) for column in parquet]
        if self.by_id and None not in ids:
            owners = [self.by_id.get(int(i)) for i in ids]
        elif self.by_id and not self.by_name:
            raise DataError(f"data file {file} of the log table has no Parquet field ids, which the table matches "
                            "columns by, and the table no name mapping (schema.name-mapping.default) for such files")
        else:
            owners = [self.by_name.get(column.name) for column in parquet]
        columns = {owner: column.name for owner, column in zip(owners, parquet) if owner is not None}
        return FileLayout(columns, self.constants.get(file, {}), self.deleted.get(file, ()))


@dataclass(frozen=True)
class TableLogs:
    """A ``LogSource`` of logs in a table; each format reads its metadata (``read_files``,
    ``read_version``), the rest is the same for all."""

    config: Config
    versioned = True  # a read is of one snapshot or version

    @property
    def name(self) -> str:
        """The table's name in ``[paths] logs``, after its prefix."""
        return self.config.paths.logs.partition(":")[2]

    def read_files(self, windows: list[tuple[datetime, datetime]], *, as_of: str | None) -> TableFiles:
        raise NotImplementedError

    def read_version(self) -> str | None:
        raise NotImplementedError

    def table_files(self, windows: list[tuple[datetime, datetime]], *, as_of: str | None = None) -> TableFiles:
        """The data files whose partitions or statistics overlap each window ``[start, end)``, at
        the table's current snapshot or version, or at ``as_of``."""
        with one_line_errors(self.config.paths.logs):
            return self.read_files(windows, as_of=as_of)

    def version(self) -> str | None:
        """The table's current snapshot id (Iceberg) or version (Delta); None: an empty Iceberg table."""
        with one_line_errors(self.config.paths.logs):
            return self.read_version()

    def window_files(self, ds: date, *, allow_incomplete: bool = False) -> tuple[pl.Schema, list[WindowFiles]]:
        """The windows' files at the table's current snapshot or version or at ``[paths]
        logs_as_of``: its metadata chooses each window's data files, its schema there is the
        logs' schema, and each file reads through its layout (columns matched as the table
        matches them, deleted rows left out; see the module)."""
        import polars as pl
        import pyarrow.fs as pafs

        from feco import storage
        from feco.sources import logfiles
        from feco.sources.logfiles import Footers, LogFiles

        config = self.config
        table, windows = config.paths.logs, logfiles.day_windows(ds, config)
        found = self.table_files([(w.start, w.end) for w in windows], as_of=config.paths.logs_as_of)
        empty = [w for w, files in zip(windows, found.windows) if not files]
        if empty and not allow_incomplete:
            raise DataError(f"the log table {table} has no data files for {ds} in sampling windows "
                            f"{logfiles.named(empty)}: complete the logs, or run with --allow-incomplete to record "
                            "those windows as missing")
        named = list(dict.fromkeys(f for files in found.windows for f in files))
        fs = storage.filesystem_for(named[0])[0] if named else pafs.LocalFileSystem()
        path = {f: storage.filesystem_for(f)[1] for f in named}
        footers = logfiles.read_footers(LogFiles(fs, list(path.values()), named))
        day_files = LogFiles(fs, list(path.values()), named, {
            path[f]: found.layout(f, footers.metadata[path[f]].schema.to_arrow_schema()) for f in named})
        read = [day_files.subset([path[f] for f in files]) for files in found.windows]
        schema = pl.from_arrow(found.schema.empty_table()).schema
        logfiles.check_columns(schema, table, config=config)
        # A row of another day in a table is read on its own day: none is left out.
        counts = logfiles.timestamp_counts(Footers(day_files, footers.metadata), config.logs.timestamp, fs, day=None)
        missing = [[] if files.paths else window.hours() for window, files in zip(windows, read)]
        return schema, [w._replace(table_version=found.version)
                        for w in logfiles.with_counts(windows, read, missing, counts)]

    def settled(self, ds: date, *, now: datetime) -> tuple[bool, str]:
        """A table's day is complete when every window has data files and either the table
        already holds later events (the log job has moved on) or its last commit is
        ``[readiness] settle_minutes`` old."""
        from feco.sources.logfiles import day_windows

        config = self.config
        settle = timedelta(minutes=config.readiness.settle_minutes)
        windows = day_windows(ds, config)
        day_end = datetime.combine(ds + timedelta(days=1), time(), UTC)
        bounds = [(w.start, w.end) for w in windows] + [(day_end, day_end + timedelta(days=366))]
        found = self.table_files(bounds)
        *days, later = found.windows
        empty = [str(w.index) for w, files in zip(windows, days) if not files]
        if empty:
            return False, (f"the log table {config.paths.logs} has no data files for sampling windows "
                           f"{', '.join(empty)}")
        if later:
            return True, "every window has data files and the table holds later events"
        if now - found.committed_at < settle:
            return False, (f"the log table {config.paths.logs} was committed to at {found.committed_at:%H:%M:%S} "
                           f"UTC, less than {settle} before {now:%H:%M:%S}, and holds nothing later than {ds}")
        return True, f"every window has data files and the table's last commit is {settle} old"

    def where(self, ds: date, windows: list[Window]) -> str:
        return f"the log table {self.config.paths.logs}"

    def stamped_elsewhere(self, ds: date, windows: list[WindowFiles]) -> str:
        return ""  # a table places a row by its timestamp alone, not by a folder


@contextmanager
def one_line_errors(location: str):
    try:
        yield
    except (DataError, UsageError):
        raise
    except ImportError:
        raise UsageError(f"reading {location} needs the table extra: pip install 'feco[tables]'") from None
    except Exception as error:  # noqa: BLE001 - the table libraries raise many types; one line names the table
        raise DataError(f"cannot read the log table {location}: {type(error).__name__}: "
                        f"{str(error).splitlines()[0] if str(error) else ''}") from None


def check_timestamp(schema: pa.Schema, timestamp: str, table: str) -> None:
    import pyarrow as pa

    if timestamp not in schema.names:
        raise DataError(f"timestamp column '{timestamp}' not in the log table {table}")
    if not pa.types.is_timestamp(schema.field(timestamp).type):
        raise DataError(f"timestamp column '{timestamp}' is {schema.field(timestamp).type}, not a timestamp ({table})")
