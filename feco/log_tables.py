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
are never opened. The table's current schema is the logs' schema: a file written before a
column was added reads that column as NULL, and a Delta partition column (not stored in its
files) reads as the file's partition value.

Not read (refused, naming the table): Iceberg tables with delete files (merge-on-read deletes:
compact them first) and Delta tables with deletion vectors or column mapping; both would need
the table format's reader rather than its Parquet files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from feco.errors import DataError, UsageError

PREFIXES = ("iceberg:", "delta:")


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


@dataclass(frozen=True)
class TableFiles:
    """What the table's metadata says about a day's windows."""

    schema: pa.Schema  # the table's current schema
    windows: list[list[str]]  # per window, its data files (URIs or local paths), in the table's order
    constants: dict[str, dict[str, object]]  # by file: values of columns its file does not store
    committed_at: datetime  # the table's last commit (UTC)


def table_files(location: str, windows: list[tuple[datetime, datetime]], *, timestamp: str,
                catalog: dict[str, str]) -> TableFiles:
    """The data files whose partitions or statistics overlap each window ``[start, end)``."""
    kind, _, name = location.partition(":")
    try:
        if kind == "iceberg":
            return _iceberg(name, windows, timestamp=timestamp, catalog=catalog)
        return _delta(name, windows, timestamp=timestamp)
    except (DataError, UsageError):
        raise
    except ImportError:
        raise UsageError(f"reading {location} needs the table extra: pip install 'feco[tables]'") from None
    except Exception as error:  # noqa: BLE001 - the table libraries raise many types; one line names the table
        raise DataError(f"cannot read the log table {location}: {type(error).__name__}: "
                        f"{str(error).splitlines()[0] if str(error) else ''}") from None


def _iceberg(name: str, windows, *, timestamp: str, catalog: dict[str, str]) -> TableFiles:
    from pyiceberg.catalog import load_catalog
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan

    catalog_name, _, identifier = name.partition("/")
    table = load_catalog(catalog_name, **catalog).load_table(identifier)
    schema = table.schema().as_arrow()
    _check_timestamp(schema, timestamp, f"iceberg:{name}")
    naive = schema.field(timestamp).type.tz is None
    files = []
    for start, end in windows:
        bounds = And(GreaterThanOrEqual(timestamp, _literal(start, naive)), LessThan(timestamp, _literal(end, naive)))
        tasks = list(table.scan(row_filter=bounds).plan_files())
        if any(task.delete_files for task in tasks):
            raise DataError(f"the log table iceberg:{name} has delete files (merge-on-read deletes), which feco "
                            "does not apply: compact the table (rewrite its data files) first")
        files.append([task.file.file_path for task in tasks])
    snapshot = table.current_snapshot()
    committed = datetime.fromtimestamp(snapshot.timestamp_ms / 1000, timezone.utc) if snapshot else _EPOCH
    return TableFiles(schema, files, {}, committed)


def _delta(location: str, windows, *, timestamp: str) -> TableFiles:
    from deltalake import DeltaTable

    table = DeltaTable(location, storage_options=_delta_storage_options(location))
    protocol = table.protocol()
    unsupported = sorted({"deletionVectors", "columnMapping"} & set(protocol.reader_features or []))
    if unsupported:
        raise DataError(f"the log table delta:{location} uses {', '.join(unsupported)}, which feco does not read "
                        "(it reads the table's Parquet files as they are)")
    schema = pa.schema(table.schema().to_arrow())
    _check_timestamp(schema, timestamp, f"delta:{location}")
    actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    partitions = table.metadata().partition_columns
    root = table.table_uri.rstrip("/")
    located = [(_data_file(root, action["path"]), action) for action in actions]
    files = [[path for path, action in located if _overlaps(action, timestamp, start, end)] for start, end in windows]
    constants = {path: {column: action.get(f"partition.{column}") for column in partitions} for path, action in located}
    history = table.history(1)
    committed = datetime.fromtimestamp(history[0]["timestamp"] / 1000, timezone.utc) if history else _EPOCH
    return TableFiles(schema, files, constants if partitions else {}, committed)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _overlaps(action: dict, timestamp: str, start: datetime, end: datetime) -> bool:
    """A file's timestamp statistics overlap [start, end); without statistics it may."""
    low, high = action.get(f"min.{timestamp}"), action.get(f"max.{timestamp}")
    if low is None or high is None:
        return True
    if low.tzinfo is None:  # naive timestamps are taken as UTC
        start, end = start.replace(tzinfo=None), end.replace(tzinfo=None)
    # Delta truncates timestamp statistics to milliseconds, never past a window's whole minute
    return low < end and high >= start


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
    if timestamp not in schema.names:
        raise DataError(f"timestamp column '{timestamp}' not in the log table {table}")
    if not pa.types.is_timestamp(schema.field(timestamp).type):
        raise DataError(f"timestamp column '{timestamp}' is {schema.field(timestamp).type}, not a timestamp ({table})")
