"""Logs in a Delta Lake table, read with deltalake: ``[paths] logs = "delta:LOCATION"``.

The table is at a folder (relative to the config's folder, ``feco.sources.resolve``) or a URI
(``delta:s3://bucket/events``; credentials from the ``AWS_*`` environment, as for folders).

A window's data files are the table's add actions whose ``min``/``max`` statistics of the
timestamp overlap the window (a file without statistics is read). Columns match by field id
(column mapping in ``id`` mode), by physical name (``name`` mode) or by name (no column
mapping); a partition column reads as the file's partition value, and deletion vectors are
applied (feco.sources.tables says how the files are read). A read is of one version, recorded
as ``sample_windows.table_version``.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from feco.errors import UsageError
from feco.sources.tables import EPOCH, TableFiles, TableLogs, check_timestamp


class DeltaLogs(TableLogs):
    """The ``LogSource`` of logs in a Delta table."""

    def read_files(self, windows: list[tuple[datetime, datetime]], *, as_of: str | None) -> TableFiles:
        return _delta(self.name, windows, timestamp=self.config.logs.timestamp, as_of=as_of)

    def read_version(self) -> str | None:
        return str(_delta_table(self.name, None).version())


def _delta(location: str, windows, *, timestamp: str, as_of: str | None) -> TableFiles:
    import pyarrow as pa

    table = _delta_table(location, as_of)
    schema = pa.schema(table.schema().to_arrow())
    check_timestamp(schema, timestamp, f"delta:{location}")
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
    committed = datetime.fromtimestamp(history[0]["timestamp"] / 1000, UTC) if history else EPOCH
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
