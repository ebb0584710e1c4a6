"""Logs in an Iceberg table (a SQL catalog on SQLite) and a Delta table give the events and
states of the same rows in a Hive-style folder; only the files the table's metadata places in
a window are opened; a column added mid-period reads as the table defines it."""

import shutil
from datetime import UTC, date, timedelta

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from feco import tasks
from feco.errors import DataError
from feco.sample_folder import read_sample
from feco.sampling import window_files
from feco.warehouse import open_read_only
from logbuilder import FEATURES, blank_event_keys, engine_sections, make_config, make_events, write_logs

pytest.importorskip("pyiceberg", reason="pyiceberg (the tables extra) is not installed")
pytest.importorskip("deltalake", reason="deltalake (the tables extra) is not installed")

DAY = date(2026, 3, 2)
STATE_KEY = ["ds", "window_index", "feature", "segment_dim", "segment_value"]
# Hours no sampling window reads: windows start at 01:25, 04:25, … 22:25
UNREAD_HOURS = [0, 2, 3, 5]


def hour_files(folder):
    return sorted(folder.glob("ds=*/hour=*/*.parquet"))


def iceberg_catalog(tmp_path) -> dict:
    (tmp_path / "iceberg").mkdir(exist_ok=True)
    return {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": f"file://{tmp_path / 'iceberg'}"}


def write_iceberg(tmp_path, files, *, catalog=None) -> str:
    """An Iceberg table partitioned by hour(event_ts), one append per log file, in order; new
    columns are added to the table's schema as they appear."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.transforms import HourTransform

    catalog = load_catalog("search", **(catalog or iceberg_catalog(tmp_path)))
    catalog.create_namespace_if_not_exists("logs")
    table = None
    for path in files:
        data = _iceberg_types(pq.read_table(path))
        if table is None:
            table = catalog.create_table("logs.events", schema=data.schema)
            with table.update_spec() as spec:
                spec.add_field("event_ts", HourTransform(), "event_hour")
        elif set(data.schema.names) - set(table.schema().column_names):
            with table.update_schema() as schema:
                schema.union_by_name(data.schema)
        table.append(data)
    return "iceberg:search/logs.events"


def _iceberg_types(data: pa.Table) -> pa.Table:
    """Iceberg has no 8- or 16-bit integers: written as 32-bit (as Spark writes them)."""
    narrow = {pa.int8(), pa.int16()}
    return data.cast(pa.schema([pa.field(f.name, pa.int32() if f.type in narrow else f.type) for f in data.schema]))


def write_delta(location, files, **options) -> str:
    from deltalake import write_deltalake

    for path in files:
        write_deltalake(str(location), pq.read_table(path), mode="append", schema_mode="merge", **options)
    return f"delta:{location}"


def run(tmp_path, name, location, **sections):
    config = make_config(tmp_path / name, paths={"logs": str(location), "samples": "samples",
                                                 "warehouse": "feco.duckdb", "iceberg_catalog": iceberg_catalog(tmp_path)},
                         **sections)
    tasks.run_day(DAY, config, deliver=False)
    return config


def states(config) -> pl.DataFrame:
    with open_read_only(config.paths.warehouse) as conn:
        return conn.sql("SELECT * FROM coverage_states").pl().sort(STATE_KEY)


def windows(config) -> pl.DataFrame:
    with open_read_only(config.paths.warehouse) as conn:
        return conn.sql("SELECT * FROM sample_windows ORDER BY ds, window_index").pl()


def read_alike(config) -> pl.DataFrame:
    """The windows' rows but the table version read (NULL for a folder) and the sampled files'
    digest (their bytes differ from source to source)."""
    return windows(config).drop("table_version", "sample_digest")


def chosen(config, ds=DAY) -> pl.DataFrame:
    rows, _ = read_sample(ds, config.paths.samples)
    return rows.select("window", "event_id").unique().sort("window", "event_id")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Two days in a folder (rows without an event id in window 1), and the same files in an
    Iceberg table and a Delta table."""
    root = tmp_path_factory.mktemp("three_ways")
    folder = root / "folder"
    for offset in range(2):
        write_logs(folder, make_events(DAY + timedelta(days=offset), events=4000, seed=offset))
    blank_event_keys(folder / f"ds={DAY}" / "hour=04" / "part-0.parquet", event_ids=5, timestamps=0)
    files = hour_files(folder)
    return root, folder, write_iceberg(root, files), write_delta(root / "delta", files)


def test_the_same_rows_as_a_folder_an_iceberg_table_and_a_delta_table_give_identical_states(logs, tmp_path):
    root, folder, iceberg, delta = logs
    days = [DAY, DAY + timedelta(days=1)]
    configs = {}
    for name, location in (("folder", folder), ("iceberg", iceberg), ("delta", delta)):
        config = make_config(tmp_path / name, paths={"logs": str(location), "samples": "samples",
                                                     "warehouse": "feco.duckdb", "iceberg_catalog": iceberg_catalog(root)},
                             segments={"crosses": [["region", "query_band"]], "band_days": 2})
        for ds in days:
            tasks.run_day(ds, config, deliver=False)
        configs[name] = config
    folder_states = states(configs["folder"])
    assert folder_states.height > 0 and windows(configs["folder"])["rows_null_event_id"].sum() == 5
    for name in ("iceberg", "delta"):
        assert read_alike(configs[name]).equals(read_alike(configs["folder"])), name
        for ds in days:
            assert chosen(configs[name], ds).equals(chosen(configs["folder"], ds)), name
        assert states(configs[name]).equals(folder_states), name


def test_only_the_files_the_tables_metadata_places_in_a_window_are_opened(logs, tmp_path):
    """Data files of hours no window reads are corrupted, and a copy of a read hour's file is
    left in the table's folder (not in the table): a listing would fail on either."""
    _, folder, _, _ = logs
    source = [f for f in hour_files(folder) if f"ds={DAY}" in str(f)]
    iceberg = write_iceberg(tmp_path, source)
    delta = write_delta(tmp_path / "delta", source)
    for table_folder in (tmp_path / "iceberg", tmp_path / "delta"):
        data = sorted(table_folder.rglob("*.parquet"))
        unread = [f for f in data if _hours_in(f) <= set(UNREAD_HOURS)]
        assert unread, table_folder
        for path in unread:
            path.write_bytes(b"corrupt: a file no window's metadata overlaps")
        shutil.copy(next(f for f in data if _hours_in(f) == {4}), table_folder / "orphan-copy-of-hour-04.parquet")
    expected = run(tmp_path, "folder", folder)
    for name, location in (("iceberg", iceberg), ("delta", delta)):
        config = run(tmp_path, name, location)
        _, read = window_files(DAY, config)
        opened = {path for w in read for path in w.files.paths}
        assert all(_hours_in(path) & {w.window.start.hour for w in read} for path in opened), name
        assert states(config).equals(states(expected)), name


def _hours_in(path) -> set[int]:
    try:
        hours = pq.read_table(path, columns=["event_ts"]).column(0).to_pylist()
    except pa.ArrowException:
        return set(UNREAD_HOURS)  # corrupted above: it held only unread hours
    return {t.hour for t in hours if t is not None}


def test_a_column_added_mid_day_reads_as_null_before_it_existed(tmp_path):
    """f_new appears at noon: the folder of those files is refused (its columns differ), the
    tables read it as the table defines it, NULL before noon."""
    events = make_events(DAY, events=4000, seed=3).with_columns(f_new=pl.lit(None, pl.Float64))
    early = events.filter(pl.col("event_ts").dt.hour() < 12).drop("f_new")
    late = events.filter(pl.col("event_ts").dt.hour() >= 12).with_columns(f_new=pl.col("f_dense") * 2)
    folder, nulls_folder = tmp_path / "folder", tmp_path / "nulls"
    write_logs(folder, early)
    write_logs(folder, late)
    write_logs(nulls_folder, pl.concat([early.with_columns(f_new=pl.lit(None, pl.Float64)), late]))
    files = hour_files(folder)
    iceberg, delta = write_iceberg(tmp_path, files), write_delta(tmp_path / "delta", files)
    features = {"logs": {"features": [*FEATURES, "f_new"]}}

    refused = make_config(tmp_path / "refused", paths={"logs": str(folder), "samples": "s", "warehouse": "w.duckdb"},
                          **features)
    with pytest.raises(DataError, match="columns differ"):
        tasks.sample(DAY, refused)
    expected = states(run(tmp_path, "nulls", nulls_folder, **features))
    f_new = expected.filter(feature="f_new", segment_dim="all").sort("window_index")
    assert f_new["n_present"].to_list()[:4] == [0] * 4 and min(f_new["n_present"].to_list()[4:]) > 0
    for name, location in (("iceberg", iceberg), ("delta", delta)):
        assert states(run(tmp_path, name, location, **features)).equals(expected), name


def test_a_delta_partition_column_reads_as_its_files_partition_value(tmp_path):
    events = make_events(DAY, events=3000, seed=5)
    folder = tmp_path / "folder"
    write_logs(folder, events.with_columns(log_hour=pl.col("event_ts").dt.hour().cast(pl.Int32)))
    delta = write_delta(tmp_path / "delta", hour_files(folder), partition_by=["log_hour"])
    stored = pq.read_table(next((tmp_path / "delta").rglob("*.parquet")))
    assert "log_hour" not in stored.column_names  # Delta keeps partition values in its log only
    config = run(tmp_path, "delta", delta)
    rows, _ = read_sample(DAY, config.paths.samples)
    assert rows["log_hour"].to_list() == rows["event_ts"].dt.hour().cast(pl.Int32).to_list()
    assert states(config).equals(states(run(tmp_path, "folder", folder)))


def test_a_window_with_no_data_files_is_refused_unless_incomplete_is_allowed(tmp_path):
    events = make_events(DAY, events=3000, seed=6).filter(pl.col("event_ts").dt.hour() != 4)
    write_logs(tmp_path / "folder", events)
    delta = write_delta(tmp_path / "delta", hour_files(tmp_path / "folder"))
    config = make_config(tmp_path / "run", paths={"logs": delta, "samples": "samples", "warehouse": "feco.duckdb"})
    with pytest.raises(DataError, match=r"no data files for 2026-03-02 in sampling windows 1 \(04:25-04:35\)"):
        tasks.sample(DAY, config)
    tasks.run_day(DAY, config, deliver=False, allow_incomplete=True)
    assert windows(config).filter(pl.col("hours_missing").list.len() > 0)["window_index"].to_list() == [1]


def test_readiness_of_a_table_comes_from_its_metadata(tmp_path):
    from datetime import datetime

    from feco.readiness import check_logs

    write_logs(tmp_path / "folder", make_events(DAY, events=2000, seed=7))
    files = hour_files(tmp_path / "folder")
    delta_location = tmp_path / "delta"
    delta = write_delta(delta_location, [f for f in files if "hour=22" not in str(f)])
    config = make_config(tmp_path / "run", paths={"logs": delta, "samples": "samples", "warehouse": "feco.duckdb"},
                         readiness={"settle_minutes": 30})
    now = datetime.now(UTC)
    waiting = check_logs(DAY, config, now=now)
    assert not waiting.ready and "no data files for sampling windows 7" in waiting.reason
    write_delta(delta_location, [f for f in files if "hour=22" in str(f)])
    assert not check_logs(DAY, config, now=now + timedelta(minutes=1)).ready  # committed just now
    assert check_logs(DAY, config, now=now + timedelta(minutes=31)).ready
    write_logs(tmp_path / "next", make_events(DAY + timedelta(days=1), events=100, seed=8))
    write_delta(delta_location, hour_files(tmp_path / "next"))  # the log job has moved on
    assert check_logs(DAY, config, now=now).ready


@pytest.mark.slow  # a local Spark session (~11 s); the engines agree on the folder in tests/test_spark_engine.py
def test_the_spark_engine_samples_the_tables_as_the_duckdb_engine_samples_the_folder(logs, tmp_path):
    pytest.importorskip("pyspark", reason="pyspark (the spark extra) is not installed")
    if shutil.which("java") is None:
        pytest.skip("the Spark engine needs Java (17+) on PATH")
    root, folder, iceberg, delta = logs
    configs = {name: make_config(tmp_path / name, paths={"logs": str(location), "samples": "samples",
                                                         "warehouse": "feco.duckdb", "iceberg_catalog": iceberg_catalog(root)},
                                 **(engine_sections("spark") if name != "folder" else {}))
               for name, location in (("folder", folder), ("iceberg", iceberg), ("delta", delta))}
    for config in configs.values():
        tasks.run_day(DAY, config, deliver=False)
    for name in ("iceberg", "delta"):
        assert read_alike(configs[name]).equals(read_alike(configs["folder"])), name
        assert chosen(configs[name]).equals(chosen(configs["folder"])), name
        assert states(configs[name]).equals(states(configs["folder"])), name
