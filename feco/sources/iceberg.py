"""Logs in an Apache Iceberg table, read with pyiceberg: ``[paths] logs = "iceberg:CATALOG/NAMESPACE.TABLE"``.

The table is in the pyiceberg catalog ``CATALOG``, whose properties come from pyiceberg's own
configuration (``~/.pyiceberg.yaml``, the environment's ``PYICEBERG_CATALOG__CATALOG__*``:
secrets belong there) and ``[paths] iceberg_catalog`` (``type``, ``uri``, ``warehouse``: a SQL
catalog on SQLite is ``{type = "sql", uri = "sqlite:////data/catalog.db", warehouse =
"file:///data/warehouse"}``).

A window's data files are those of an Iceberg scan planned with the window's bounds
(partitions, such as a ``hour(event_ts)`` transform, and the manifests' column statistics
prune). Columns match by field id, or by the table's name mapping for files written without
field ids; Parquet position deletes are applied (feco.sources.tables says how the files are read).
A read is of one snapshot, its id recorded as ``sample_windows.table_version``.

Refused in one line, naming the table: equality deletes (pyiceberg's planner does not read
them either) and delete files other than Parquet ones (Iceberg v3 deletion vectors are Puffin
files).
"""

from __future__ import annotations

from datetime import UTC, datetime

from feco.errors import DataError, UsageError
from feco.sources.tables import EPOCH, TableFiles, TableLogs, check_timestamp


class IcebergLogs(TableLogs):
    """The ``LogSource`` of logs in an Iceberg table."""

    def read_files(self, windows: list[tuple[datetime, datetime]], *, as_of: str | None) -> TableFiles:
        return _iceberg(self.name, windows, timestamp=self.config.logs.timestamp,
                        catalog=self.config.paths.iceberg_catalog, as_of=as_of)

    def read_version(self) -> str | None:
        snapshot = _iceberg_table(self.name, self.config.paths.iceberg_catalog).current_snapshot()
        return None if snapshot is None else str(snapshot.snapshot_id)


def _iceberg(name: str, windows, *, timestamp: str, catalog: dict[str, str], as_of: str | None) -> TableFiles:
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan

    table = _iceberg_table(name, catalog)
    snapshot = table.current_snapshot() if as_of is None else _iceberg_snapshot(table, as_of, f"iceberg:{name}")
    snapshot_id = snapshot.snapshot_id if snapshot else None
    # as pyiceberg reads: the current schema, or the one a pinned snapshot was written with
    schema = table.schema() if as_of is None else table.scan(snapshot_id=snapshot_id).projection()
    arrow = schema.as_arrow()
    check_timestamp(arrow, timestamp, f"iceberg:{name}")
    naive = arrow.field(timestamp).type.tz is None
    planned = []
    for start, end in windows:
        bounds = And(GreaterThanOrEqual(timestamp, _literal(start, naive)), LessThan(timestamp, _literal(end, naive)))
        planned.append(_plan(table.scan(row_filter=bounds, snapshot_id=snapshot_id), f"iceberg:{name}"))
    committed = datetime.fromtimestamp(snapshot.timestamp_ms / 1000, UTC) if snapshot else EPOCH
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



def _literal(moment: datetime, naive: bool) -> str:
    return (moment.replace(tzinfo=None) if naive else moment).isoformat()

