"""Logs kept in a table format: an Apache Iceberg table (pyiceberg) or a Delta Lake table (deltalake).

``[paths] logs`` names one instead of a Hive-style folder:

- ``iceberg:CATALOG/NAMESPACE.TABLE``: the table in the pyiceberg catalog ``CATALOG``, whose
  properties come from pyiceberg's own configuration (``~/.pyiceberg.yaml``, the environment's
  ``PYICEBERG_CATALOG__CATALOG__*``: secrets belong there) and ``[paths] iceberg_catalog``
  (``type``, ``uri``, ``warehouse``: a SQL catalog on SQLite is ``{type = "sql", uri =
  "sqlite:////data/catalog.db", warehouse = "file:///data/warehouse"}``);
- ``delta:LOCATION``: the Delta table at a folder (relative to the config's folder) or a URI
  (``delta:s3://bucket/events``; credentials from the ``AWS_*`` environment, as for folders).

Which data files a sampling window reads comes from the table's own metadata, never from a
listing: an Iceberg scan planned with the window's bounds (partitions, such as a
``hour(event_ts)`` transform, and the manifests' column statistics prune), or a Delta table's
add actions whose ``min``/``max`` statistics of the timestamp overlap the window (a file
without statistics is read). Files left behind in the table's folder and files of other times
are never opened.

The sampler reads those files itself (the same code as a folder's hour files), each through
its ``FileLayout``: the table's columns are matched to a file's Parquet columns as the format's
own readers match them, by field id (Iceberg; Delta with column mapping in ``id`` mode) or by
the physical name the table's schema gives them (Delta's column mapping in ``name`` mode; a
Delta table without column mapping by name). So a renamed column reads under its new name
in files written before the rename, a dropped column stays dropped when a column of the same
name is added again, and a column a file lacks reads as NULL (a Delta partition column, which
its files do not store, as the file's partition value). Rows a table deletes without rewriting
its files are left out: Iceberg position deletes (Parquet files) and Delta deletion vectors.

One read is of one snapshot (Iceberg) or version (Delta): the current one, or ``as_of``
(``[paths] logs_as_of``, ``feco run --as-of``); ``TableFiles.version`` records which, and the
table's schema at it is the logs' schema.

Refused in one line, naming the table: Iceberg equality deletes (pyiceberg's planner does not
read them either) and delete files other than Parquet ones (Iceberg v3 deletion vectors are
Puffin files); a data file without Parquet field ids in a table that matches by field id and
has no name mapping.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from feco.errors import DataError, UsageError

if TYPE_CHECKING:  # pyarrow is imported where a table is read: the config imports this module
    import pyarrow as pa

PREFIXES = ("iceberg:", "delta:")
FIELD_ID = b"PARQUET:field_id"  # where Parquet's field id sits in an Arrow field's metadata


def is_table(location) -> bool:
    """Whether ``[paths] logs`` names a table rather than a folder."""
    return isinstance(location, str) and location.startswith(PREFIXES)


def resolve(location: str, base: Path) -> str:
    """A Delta table's relative folder, resolved against the config's folder.

    Examples
    --------
    >>> resolve("delta:logs/events", Path("/etc/feco"))
    'delta:/etc/feco/logs/events'
    >>> resolve("iceberg:search/logs.events", Path("/etc/feco"))
    'iceberg:search/logs.events'
    """
    kind, _, rest = location.partition(":")
    if kind == "delta" and "://" not in rest:
        return f"delta:{(base / rest).resolve()}"
    return location


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


def table_files(location: str, windows: list[tuple[datetime, datetime]], *, timestamp: str,
                catalog: dict[str, str], as_of: str | None = None) -> TableFiles:
    """The data files whose partitions or statistics overlap each window ``[start, end)``, at
    the table's current snapshot or version, or at ``as_of``."""
    kind, _, name = location.partition(":")
    with _one_line_errors(location):
        if kind == "iceberg":
            return _iceberg(name, windows, timestamp=timestamp, catalog=catalog, as_of=as_of)
        return _delta(name, windows, timestamp=timestamp, as_of=as_of)


def table_version(location: str, *, catalog: dict[str, str]) -> str | None:
    """The table's current snapshot id (Iceberg) or version (Delta); None: an empty Iceberg table."""
    kind, _, name = location.partition(":")
    with _one_line_errors(location):
        if kind == "iceberg":
            snapshot = _iceberg_table(name, catalog).current_snapshot()
            return None if snapshot is None else str(snapshot.snapshot_id)
        return str(_delta_table(name, None).version())


@contextmanager
def _one_line_errors(location: str):
    try:
        yield
    except (DataError, UsageError):
        raise
    except ImportError:
        raise UsageError(f"reading {location} needs the table extra: pip install 'feco[tables]'") from None
    except Exception as error:  # noqa: BLE001 - the table libraries raise many types; one line names the table
        raise DataError(f"cannot read the log table {location}: {type(error).__name__}: "
                        f"{str(error).splitlines()[0] if str(error) else ''}") from None


def _iceberg(name: str, windows, *, timestamp: str, catalog: dict[str, str], as_of: str | None) -> TableFiles:
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan

    table = _iceberg_table(name, catalog)
    snapshot = table.current_snapshot() if as_of is None else _iceberg_snapshot(table, as_of, f"iceberg:{name}")
    snapshot_id = snapshot.snapshot_id if snapshot else None
    # as pyiceberg reads: the current schema, or the one a pinned snapshot was written with
    schema = table.schema() if as_of is None else table.scan(snapshot_id=snapshot_id).projection()
    arrow = schema.as_arrow()
    _check_timestamp(arrow, timestamp, f"iceberg:{name}")
    naive = arrow.field(timestamp).type.tz is None
    planned = []
    for start, end in windows:
        bounds = And(GreaterThanOrEqual(timestamp, _literal(start, naive)), LessThan(timestamp, _literal(end, naive)))
        planned.append(_plan(table.scan(row_filter=bounds, snapshot_id=snapshot_id), f"iceberg:{name}"))
    committed = datetime.fromtimestamp(snapshot.timestamp_ms / 1000, UTC) if snapshot else _EPOCH
    by_id = {column.field_id: column.name for column in schema.fields}
    # files written without field ids (imported ones) match by the table's name mapping
    by_name = {alias: by_id[mapped.field_id] for mapped in table.metadata.name_mapping() or []
               if mapped.field_id in by_id for alias in mapped.names}
    return TableFiles(arrow, [[task.file.file_path for task in tasks] for tasks in planned], committed,
                      None if snapshot is None else str(snapshot.snapshot_id), by_id, by_name,
                      deleted=_position_deletes(table.io, [task for tasks in planned for task in tasks], name))


def _plan(scan, location: str) -> list:
    """The scan's file tasks. pyiceberg's planner refuses equality deletes (ValueError): said
    here in feco's words, with what to do."""
    try:
        return list(scan.plan_files())
    except ValueError as error:
        if "equality deletes" not in str(error):
            raise
        raise DataError(f"the log table {location} has equality delete files (rows deleted by value), which feco "
                        "does not apply, nor does pyiceberg, which plans its reads: rewrite the data files they "
                        "touch first (Spark: rewrite_data_files with delete-file-threshold 1)") from None


def _iceberg_table(name: str, catalog: dict[str, str]):
    from pyiceberg.catalog import load_catalog

    catalog_name, _, identifier = name.partition("/")
    return load_catalog(catalog_name, **catalog).load_table(identifier)


def _iceberg_snapshot(table, as_of: str, location: str):
    snapshot = table.snapshot_by_id(int(as_of)) if as_of.lstrip("-").isdigit() else None
    if snapshot is None:
        raise UsageError(f"--as-of {as_of}: the log table {location} has no snapshot {as_of} "
                         "(an Iceberg table is pinned by a snapshot id, as sample_windows.table_version records it)")
    return snapshot


def _position_deletes(io, tasks, name: str) -> dict[str, tuple[int, ...]]:
    """By data file, the positions of its rows that the position delete files its scan task
    lists delete (each delete file read once)."""
    from pyiceberg.manifest import FileFormat

    read: dict[str, dict[str, list[int]]] = {}
    deleted = {}
    for task in tasks:
        positions = set()
        for delete in task.delete_files:
            if delete.file_format != FileFormat.PARQUET:
                raise DataError(f"the log table iceberg:{name} has {delete.file_format.value} delete files "
                                f"({delete.file_path}), which feco does not apply (it applies Parquet position "
                                "deletes): rewrite the data files they touch (compact the table) first")
            if delete.file_path not in read:
                read[delete.file_path] = _read_position_deletes(io, delete.file_path)
            positions.update(read[delete.file_path].get(task.file.file_path, ()))
        if positions:
            deleted[task.file.file_path] = tuple(sorted(positions))
    return deleted


def _read_position_deletes(io, path: str) -> dict[str, list[int]]:
    """A position delete file's positions, by the data file they delete rows of."""
    import pyarrow.parquet as pq

    with io.new_input(path).open() as stream:
        rows = pq.read_table(stream, columns=["file_path", "pos"]).group_by("file_path").aggregate([("pos", "list")])
    return dict(zip(rows["file_path"].to_pylist(), rows["pos_list"].to_pylist()))


def _delta(location: str, windows, *, timestamp: str, as_of: str | None) -> TableFiles:
    import pyarrow as pa

    table = _delta_table(location, as_of)
    schema = pa.schema(table.schema().to_arrow())
    _check_timestamp(schema, timestamp, f"delta:{location}")
    fields, mode = table.schema().fields, table.metadata().configuration.get("delta.columnMapping.mode", "none")
    physical = {f.name: f.metadata["delta.columnMapping.physicalName"] if mode != "none" else f.name for f in fields}
    # column mapping matches by field id in "id" mode (its physical names are kept for the
    # statistics), by physical name in "name" mode
    by_id = {int(f.metadata["delta.columnMapping.id"]): f.name for f in fields} if mode == "id" else {}
    by_name = {} if by_id else {stored: name for name, stored in physical.items()}
    actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    partitions = table.metadata().partition_columns
    root = table.table_uri.rstrip("/")
    located = [(_data_file(root, action["path"]), action) for action in actions]
    files = [[path for path, action in located if _overlaps(action, (physical[timestamp], timestamp), start, end)]
             for start, end in windows]
    constants = {path: {column: _value(action, "partition", (physical[column], column)) for column in partitions}
                 for path, action in located} if partitions else {}
    history = table.history(1)
    committed = datetime.fromtimestamp(history[0]["timestamp"] / 1000, UTC) if history else _EPOCH
    return TableFiles(schema, files, committed, str(table.version()), by_id, by_name, constants,
                      _deletion_vectors(table, {path for window in files for path in window}))


def _delta_table(location: str, as_of: str | None):
    from deltalake import DeltaTable

    table = DeltaTable(location, storage_options=_delta_storage_options(location))
    if as_of is None:
        return table
    if not as_of.isdigit() or int(as_of) > table.version():
        raise UsageError(f"--as-of {as_of}: the log table delta:{location} has no version {as_of} "
                         f"(its versions run from 0 to {table.version()})")
    table.load_as_version(int(as_of))
    return table


def _deletion_vectors(table, files: set[str]) -> dict[str, tuple[int, ...]]:
    """By data file among ``files``, the positions its deletion vector deletes. deltalake
    reads every file's vector into memory, so only a table that may have them is asked."""
    from urllib.parse import unquote

    import numpy as np
    import pyarrow as pa

    if "deletionVectors" not in (table.protocol().reader_features or []):
        return {}
    wanted = {unquote(path): path for path in files}
    vectors = pa.table(table.deletion_vectors())
    deleted = {}
    for index, path in enumerate(vectors["filepath"].to_pylist()):
        if unquote(path) in wanted:  # a vector keeps rows (True); rows past its end are kept too
            keep = vectors["selection_vector"][index].values.to_numpy(zero_copy_only=False)
            deleted[wanted[unquote(path)]] = tuple(np.flatnonzero(~keep).tolist())
    return deleted


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _overlaps(action: dict, timestamp: tuple[str, str], start: datetime, end: datetime) -> bool:
    """A file's timestamp statistics overlap [start, end); without statistics it may."""
    low, high = _value(action, "min", timestamp), _value(action, "max", timestamp)
    if low is None or high is None:
        return True
    if low.tzinfo is None:  # naive timestamps are taken as UTC
        start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    # Delta truncates timestamp statistics to milliseconds, never past a window's whole minute
    return low < end and high >= start


def _value(action: dict, kind: str, names: tuple[str, str]):
    """An add action's ``kind`` (min, max, partition) of a column, under its physical name or
    its own: deltalake keys statistics by physical name and partition values by the column's."""
    return next((action[key] for key in (f"{kind}.{name}" for name in names) if key in action), None)


def _data_file(root: str, path: str) -> str:
    """A data file's location: the action's path is relative to the table's root, or absolute."""
    from urllib.parse import unquote

    if "://" in path:
        return path
    return f"{root}/{unquote(path)}"


def _delta_storage_options(location: str) -> dict[str, str]:
    """deltalake reads the ``AWS_*`` environment itself; a plain-http endpoint (a local
    S3-compatible server) must be allowed explicitly."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    if "://" in location and endpoint:
        return {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": str(endpoint.startswith("http://")).lower()}
    return {}


def _literal(moment: datetime, naive: bool) -> str:
    return (moment.replace(tzinfo=None) if naive else moment).isoformat()


def _check_timestamp(schema: pa.Schema, timestamp: str, table: str) -> None:
    import pyarrow as pa

    if timestamp not in schema.names:
        raise DataError(f"timestamp column '{timestamp}' not in the log table {table}")
    if not pa.types.is_timestamp(schema.field(timestamp).type):
        raise DataError(f"timestamp column '{timestamp}' is {schema.field(timestamp).type}, not a timestamp ({table})")
