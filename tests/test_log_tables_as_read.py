"""Logs in a table read as the format's own reader reads them: columns matched by Iceberg field
id (renames, drops and re-adds, the timestamp and event id too) and by Delta's column mapping,
rows deleted by Iceberg position deletes and Delta deletion vectors left out; and the snapshot
or version each day read, recorded and pinned by a rerun.

Each table is written by pyiceberg or deltalake (a delete file or deletion vector, which
neither writes, is added to their metadata by hand), every event of a window is sampled, and
feco's coverage states per window, feature and region equal the counts over the rows the
format's reader gives for the window (pyiceberg's ``scan(row_filter=…)``, deltalake's
``scan(predicate=…)``)."""

import json
import struct
import textwrap
from datetime import date

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from feco import tasks
from feco.cli import main
from feco.errors import ConfigError, DataError, UsageError
from feco.sampling import day_windows
from logbuilder import FEATURES, make_config, make_events, write_logs
from test_log_tables import hour_files, iceberg_catalog, states, windows, write_delta

pytest.importorskip("pyiceberg", reason="pyiceberg (the tables extra) is not installed")
pytest.importorskip("deltalake", reason="deltalake (the tables extra) is not installed")

DAY = date(2026, 3, 2)
COUNTS = ["n_rows", "n_present", "n_covered"]
KEY = ["window_index", "feature", "segment_dim", "segment_value"]


def config_for(tmp_path, location, **logs):
    """Every event of a window sampled, ``x > 0`` for every feature, segments all and region."""
    return make_config(tmp_path / "run", paths={"logs": location, "samples": "samples", "warehouse": "feco.duckdb",
                                               "iceberg_catalog": iceberg_catalog(tmp_path)},
                       logs={"features": FEATURES, **logs}, coverage={"rules": {}},
                       sampling={"windows": 8, "window_minutes": 10, "events_per_window": 100_000, "seed": 7},
                       segments={"dimensions": ["region"], "crosses": []})


def assert_counts_as_read(config, read_window) -> None:
    """feco's states of the day equal the counts over ``read_window(window)``, the rows the
    format's own reader gives for it."""
    tasks.run_day(DAY, config, deliver=False)
    rows = pl.concat([read_window(w).with_columns(window_index=pl.lit(w.index)) for w in day_windows(DAY, config)],
                     how="diagonal_relaxed")
    assert rows.height > 0
    long = rows.unpivot(index=["window_index", config.logs.region], on=config.logs.features, variable_name="feature")
    counted = [("all", pl.lit("all")), ("region", pl.col(config.logs.region))]
    expected = pl.concat([
        long.group_by("window_index", "feature", value.alias("segment_value"))
        .agg(n_rows=pl.len(), n_present=pl.col("value").is_not_null().sum(),
             n_covered=(pl.col("value") > 0).fill_null(False).sum())
        .with_columns(segment_dim=pl.lit(dim))
        for dim, value in counted
    ])
    found = states(config).filter(pl.col("segment_dim").is_in(["all", "region"]))
    assert_frame_equal(found.select(*KEY, *COUNTS).sort(KEY), expected.select(*KEY, *COUNTS).sort(KEY),
                       check_dtypes=False)


# --- Iceberg ------------------------------------------------------------------------------------


def iceberg_table(tmp_path, events: pl.DataFrame):
    """An Iceberg table partitioned by hour(event_ts) holding ``events`` (one append)."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.transforms import HourTransform

    catalog = load_catalog("search", **iceberg_catalog(tmp_path))
    catalog.create_namespace_if_not_exists("logs")
    data = iceberg_types(events)
    table = catalog.create_table("logs.events", schema=data.schema)
    with table.update_spec() as spec:
        spec.add_field("event_ts", HourTransform(), "event_hour")
    table.append(data)
    return table


def iceberg_types(events: pl.DataFrame) -> pa.Table:
    """Iceberg has no 8- or 16-bit integers: written as 32-bit (as Spark writes them)."""
    return events.with_columns(pl.col(pl.Int8, pl.Int16).cast(pl.Int32)).to_arrow()


def iceberg_reader(tmp_path, timestamp="event_ts"):
    """pyiceberg's own reading of a window: the table's rows in it, deletes applied."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.expressions import And, GreaterThanOrEqual, LessThan

    table = load_catalog("search", **iceberg_catalog(tmp_path)).load_table("logs.events")

    def read(window) -> pl.DataFrame:
        start, end = window.start.isoformat(), window.end.isoformat()
        bounds = And(GreaterThanOrEqual(timestamp, start), LessThan(timestamp, end))
        return pl.from_arrow(table.scan(row_filter=bounds).to_arrow())

    return read


def added(name: str):
    """An update adding a column ``name`` of doubles."""
    from pyiceberg.types import DoubleType

    return lambda update: update.add_column(name, DoubleType())


# Each: the schema changes between the morning's append and the afternoon's (one commit each),
# the afternoon's rows as the new schema has them, and the config's [logs] for the new names.
CHANGES = {
    "a feature renamed": ([lambda u: u.rename_column("f_sparse", "f_ctr")],
                          lambda f: f.rename({"f_sparse": "f_ctr"}),
                          {"features": ["f_dense", "f_ctr", "f_signed"]}),
    "a segment column renamed": ([lambda u: u.rename_column("region", "market")],
                                 lambda f: f.rename({"region": "market"}), {"region": "market"}),
    "the timestamp and event id renamed": ([lambda u: u.rename_column("event_ts", "ts"),
                                            lambda u: u.rename_column("event_id", "search_id")],
                                           lambda f: f.rename({"event_ts": "ts", "event_id": "search_id"}),
                                           {"timestamp": "ts", "event_id": "search_id"}),
    "a feature dropped and added again": ([lambda u: u.delete_column("f_dense"), added("f_dense")],
                                          lambda f: f, {}),
    "a feature renamed and its old name added again": (
        [lambda u: u.rename_column("f_sparse", "f_sparse_v1"), added("f_sparse")],
        lambda f: f.rename({"f_sparse": "f_sparse_v1"}).with_columns(f_sparse=pl.col("f_dense") - 0.5),
        {"features": [*FEATURES, "f_sparse_v1"]}),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_iceberg_columns_are_matched_by_field_id(tmp_path, change):
    """Files written before the change read as pyiceberg reads them: a renamed column under
    its new name, a dropped one not at all (NULL in the column added under its name)."""
    updates, afternoon, logs = CHANGES[change]
    events = make_events(DAY, events=3000, seed=11)
    table = iceberg_table(tmp_path, events.filter(pl.col("event_ts").dt.hour() < 12))
    for update in updates:
        with table.update_schema() as schema:
            update(schema)
    late = iceberg_types(afternoon(events.filter(pl.col("event_ts").dt.hour() >= 12)))
    table.append(late.select(table.schema().column_names))
    config = config_for(tmp_path, "iceberg:search/logs.events", **logs)
    assert_counts_as_read(config, iceberg_reader(tmp_path, config.logs.timestamp))


def test_iceberg_files_without_field_ids_are_matched_by_the_tables_name_mapping(tmp_path):
    """Files imported with add_files (plain Parquet) match by the name mapping pyiceberg keeps,
    which a rename extends; without a name mapping they are refused."""
    from pyiceberg.catalog import load_catalog

    events = iceberg_types(make_events(DAY, events=3000, seed=18))
    catalog = load_catalog("search", **iceberg_catalog(tmp_path))
    catalog.create_namespace_if_not_exists("logs")
    table = catalog.create_table("logs.events", schema=events.schema)
    imported = [tmp_path / "morning.parquet", tmp_path / "afternoon.parquet"]
    hours = pc.hour(events["event_ts"])
    pq.write_table(events.filter(pc.less(hours, 12)), imported[0])
    pq.write_table(events.filter(pc.greater_equal(hours, 12)), imported[1])
    table.add_files([f"file://{path}" for path in imported])
    with table.update_schema() as schema:
        schema.rename_column("f_sparse", "f_ctr")
    config = config_for(tmp_path, "iceberg:search/logs.events", features=["f_dense", "f_ctr", "f_signed"])
    assert_counts_as_read(config, iceberg_reader(tmp_path))
    with table.transaction() as transaction:
        transaction.remove_properties("schema.name-mapping.default")
    with pytest.raises(DataError, match="has no Parquet field ids, which the table matches columns by, and the table no name mapping"):
        tasks.sample(DAY, config)


def delete_file(table, content, rows: pa.Table, target, tmp_path):
    """A delete file of ``content`` (position or equality deletes) over ``target``'s partition,
    added to the table as a commit of its own: pyiceberg reads them but writes neither. Its fast
    append lists it in a data manifest (the spec wants a delete manifest), which pyiceberg's
    planner takes as it is: it sorts a manifest's entries by their content."""
    import os

    from pyiceberg.manifest import DataFile, FileFormat

    path = tmp_path / f"deletes-{content.name.lower()}.parquet"
    pq.write_table(rows, path)
    extra = {"equality_ids": [2]} if content.name == "EQUALITY_DELETES" else {}
    deletes = DataFile.from_args(content=content, file_path=f"file://{path}", file_format=FileFormat.PARQUET,
                                 partition=target.partition, record_count=rows.num_rows,
                                 file_size_in_bytes=os.path.getsize(path), spec_id=target.spec_id, **extra)
    with table.transaction() as transaction, transaction.update_snapshot().fast_append() as append:
        append.append_data_file(deletes)


def window_file(table, window):
    """The data file of ``window``'s hour (the table is partitioned by hour)."""
    return next(task.file for task in table.scan().plan_files()
                if task.file.partition[0] == int(window.start.timestamp()) // 3600)


def test_iceberg_position_deletes_are_applied(tmp_path):
    from pyiceberg.manifest import DataFileContent

    table = iceberg_table(tmp_path, make_events(DAY, events=3000, seed=12))
    window = day_windows(DAY, config_for(tmp_path, "iceberg:search/logs.events"))[1]
    target = window_file(table, window)
    stamps = pq.read_table(target.file_path.removeprefix("file://"), columns=["event_ts"]).column(0).to_pylist()
    inside = [i for i, t in enumerate(stamps) if window.start <= t < window.end]
    positions = inside[::3] + [0, len(stamps) - 1]  # some of the window's rows, two of others
    schema = pa.schema([pa.field("file_path", pa.string(), False, {b"PARQUET:field_id": b"2147483546"}),
                        pa.field("pos", pa.int64(), False, {b"PARQUET:field_id": b"2147483545"})])
    rows = pa.table({"file_path": [target.file_path] * len(positions), "pos": sorted(positions)}, schema=schema)
    delete_file(table, DataFileContent.POSITION_DELETES, rows, target, tmp_path)
    assert any(task.delete_files for task in table.refresh().scan().plan_files())
    config = config_for(tmp_path, "iceberg:search/logs.events")
    assert_counts_as_read(config, iceberg_reader(tmp_path))
    assert windows(config)["rows_null_timestamp"].sum() == 0


def test_iceberg_equality_deletes_are_refused_in_one_line(tmp_path):
    from pyiceberg.manifest import DataFileContent

    events = make_events(DAY, events=500, seed=13)
    table = iceberg_table(tmp_path, events)
    config = config_for(tmp_path, "iceberg:search/logs.events")
    target = window_file(table, day_windows(DAY, config)[1])
    rows = pa.table({"event_id": pa.array(events["event_id"][:3].to_list(), pa.int64())},
                    schema=pa.schema([pa.field("event_id", pa.int64(), False, {b"PARQUET:field_id": b"2"})]))
    delete_file(table, DataFileContent.EQUALITY_DELETES, rows, target, tmp_path)
    with pytest.raises(DataError, match=r"^the log table iceberg:search/logs.events has equality delete files .*"
                                        "which feco does not apply.*: rewrite the data files they touch first"):
        tasks.sample(DAY, config)


# --- Delta --------------------------------------------------------------------------------------


def delta_reader(location, timestamp="event_ts"):
    """deltalake's own reading of a window (its DataFusion scan: column mapping and deletion
    vectors applied)."""
    from deltalake import DeltaTable

    table = DeltaTable(str(location))

    def read(window) -> pl.DataFrame:
        predicate = f"{timestamp} >= '{window.start.isoformat()}' AND {timestamp} < '{window.end.isoformat()}'"
        return pl.from_arrow(pa.table(table.scan(predicate=predicate)))

    return read


@pytest.mark.parametrize("mode", ["name", "id"])
def test_delta_column_mapping_is_read_through_physical_names(tmp_path, mode):
    """deltalake writes the columns as col-<uuid> (with field ids); the partition column, kept
    in the log only, is keyed by its own name there."""
    from deltalake import write_deltalake

    events = make_events(DAY, events=3000, seed=14).with_columns(log_hour=pl.col("event_ts").dt.hour().cast(pl.Int32))
    location = tmp_path / "delta"
    write_deltalake(str(location), events.to_arrow(), partition_by=["log_hour"],
                    configuration={"delta.columnMapping.mode": mode})
    stored = pq.read_schema(next(location.rglob("*.parquet")))
    assert all(name.startswith("col-") for name in stored.names)
    config = config_for(tmp_path, f"delta:{location}")
    assert_counts_as_read(config, delta_reader(location))


def test_delta_deletion_vectors_are_applied(tmp_path):
    events = make_events(DAY, events=3000, seed=15)
    write_logs(tmp_path / "folder", events)
    location = tmp_path / "delta"
    write_delta(location, hour_files(tmp_path / "folder"), configuration={"delta.enableDeletionVectors": "true"})
    window = day_windows(DAY, config_for(tmp_path, f"delta:{location}"))[1]
    add = add_action(location, hour=window.start.hour)
    stamps = pq.read_table(location / add["path"], columns=["event_ts"]).column(0).to_pylist()
    inside = [i for i, t in enumerate(stamps) if window.start <= t < window.end]
    delete_with_deletion_vector(location, add, inside[::3][:10] + [0, len(stamps) - 1])
    config = config_for(tmp_path, f"delta:{location}")
    assert_counts_as_read(config, delta_reader(location))


def add_action(location, *, hour: int) -> dict:
    """The add action of the data file holding ``hour``'s rows (one file an hour)."""
    from deltalake import DeltaTable

    table = DeltaTable(str(location))
    actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
    path = next(a["path"] for a in actions if a["min.event_ts"].hour == hour)
    for commit in sorted((location / "_delta_log").glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if action.get("add", {}).get("path") == path:
                return action["add"]
    raise AssertionError(f"no add action for {path}")


def delete_with_deletion_vector(location, add: dict, positions: list[int]) -> None:
    """Commit a deletion vector for ``add``'s file, deleting the rows at ``positions`` (an even
    number of them, below 65,536), as a DELETE with deletion vectors writes it: the file
    removed and added again with the vector inline (deltalake reads them but rewrites files)."""
    from deltalake import DeltaTable

    version = DeltaTable(str(location)).version() + 1
    commit = [
        {"commitInfo": {"timestamp": add["modificationTime"] + 1, "operation": "DELETE", "operationParameters": {}}},
        {"remove": {"path": add["path"], "dataChange": True, "deletionTimestamp": add["modificationTime"] + 1,
                    "extendedFileMetadata": True, "partitionValues": add["partitionValues"], "size": add["size"]}},
        {"add": {**add, "dataChange": True, "deletionVector": inline_deletion_vector(positions)}},
    ]
    (location / "_delta_log" / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in commit) + "\n")


def inline_deletion_vector(positions: list[int]) -> dict:
    """Delta's inline deletion vector of ``positions``: a RoaringBitmapArray (magic number, one
    32-bit bitmap of one array container in the portable Roaring format) in Z85."""
    rows = sorted(set(positions))
    assert len(rows) % 2 == 0 and rows[-1] < 1 << 16  # Z85 takes whole 4-byte groups
    bitmap = struct.pack("<IIHHI", 12346, 1, 0, len(rows) - 1, 16) + struct.pack(f"<{len(rows)}H", *rows)
    data = struct.pack("<iqi", 1681511377, 1, 0) + bitmap
    return {"storageType": "i", "pathOrInlineDv": z85(data), "sizeInBytes": len(data), "cardinality": len(rows)}


def z85(data: bytes) -> str:
    alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
    words = (int.from_bytes(data[i:i + 4], "big") for i in range(0, len(data), 4))
    return "".join(alphabet[word // 85 ** k % 85] for word in words for k in range(4, -1, -1))


# --- What was read, and a rerun pinned to it ------------------------------------------------------


@pytest.mark.parametrize("kind", ["iceberg", "delta"])
def test_a_rerun_pinned_to_what_a_day_read_gives_its_states_after_a_late_append(tmp_path, kind, capsys):
    events = make_events(DAY, events=3000, seed=16)
    late = (pl.col("event_ts").dt.hour() == 10) & (pl.col("event_id") % 2 == 0)  # in window 3, 10:25-10:35
    write_logs(tmp_path / "on_time", events.filter(~late))
    write_logs(tmp_path / "late", events.filter(late))
    if kind == "iceberg":
        table, location = iceberg_table(tmp_path, events.filter(~late)), "iceberg:search/logs.events"
    else:
        location = write_delta(tmp_path / "delta", hour_files(tmp_path / "on_time"))

    def append_late():
        if kind == "iceberg":
            table.append(iceberg_types(events.filter(late)))
        else:
            write_delta(tmp_path / "delta", hour_files(tmp_path / "late"))
    config_file = tmp_path / "feco.toml"
    config_file.write_text(textwrap.dedent(f"""
        [paths]
        logs = "{location}"
        samples = "samples"
        warehouse = "feco.duckdb"
        iceberg_catalog = {json.dumps(iceberg_catalog(tmp_path)).replace('":', '" =')}
        [logs]
        features = {json.dumps(FEATURES)}
    """))
    config = tasks.as_config(str(config_file))

    def run(*options) -> tuple[pl.DataFrame, str]:
        assert main(["run", "--ds", str(DAY), *options, "--config", str(config_file)]) == 0
        versions = windows(config)["table_version"].unique()
        assert versions.len() == 1
        return states(config), versions.item()

    first, read_at = run()
    append_late()
    later, now_at = run()
    assert now_at != read_at and not later.equals(first)
    pinned, pinned_at = run("--as-of", read_at)
    assert pinned_at == read_at and pinned.equals(first)
    capsys.readouterr()
    assert main(["status", "--config", str(config_file)]) == 0
    status = capsys.readouterr().out
    assert f"at {now_at};" in status and f"{DAY} was read at {read_at}" in status and "--as-of" in status


def test_as_of_is_refused_in_one_line_for_a_version_the_table_lacks_and_for_a_folder(tmp_path):
    write_logs(tmp_path / "folder", make_events(DAY, events=300, seed=17))
    delta = write_delta(tmp_path / "delta", hour_files(tmp_path / "folder"))
    paths = {"logs": delta, "samples": "samples", "warehouse": "feco.duckdb"}
    with pytest.raises(UsageError, match=r"^--as-of 99: the log table delta:\S+ has no version 99 \(its versions "
                                         r"run from 0 to 23\)$"):
        tasks.sample(DAY, make_config(tmp_path / "run", paths=paths), as_of="99")
    pinned = make_config(tmp_path / "run", paths={**paths, "logs_as_of": 99})  # a Delta version as a number
    with pytest.raises(UsageError, match="has no version 99"):
        tasks.sample(DAY, pinned)
    folder = {**paths, "logs": str(tmp_path / "folder")}
    with pytest.raises(UsageError, match="--as-of 3 pins a log table's snapshot or version, and the logs are a folder"):
        tasks.sample(DAY, make_config(tmp_path / "run", paths=folder), as_of="3")
    with pytest.raises(ConfigError, match="key 'paths': logs_as_of pins a log table's snapshot or version"):
        make_config(tmp_path / "run", paths={**folder, "logs_as_of": "3"})
