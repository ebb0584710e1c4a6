"""Hand-made search logs for tests: small, exact, and independent of the generator."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np
import polars as pl

from feco.config import parse_config

FEATURES = ["f_dense", "f_sparse", "f_signed"]


def make_events(ds: date, *, events: int, seed: int = 0, rows_per_event: int = 3,
                minutes: list[int] | None = None) -> pl.DataFrame:
    """``events`` search events spread over ``ds`` (or at the given minutes of the day)."""
    rng = np.random.default_rng(seed)
    midnight = datetime(ds.year, ds.month, ds.day, tzinfo=UTC)
    minute = np.asarray(minutes) if minutes is not None else rng.integers(0, 24 * 60, events)
    seconds = rng.integers(0, 60, len(minute))
    event_ts = [midnight + timedelta(minutes=int(m), seconds=int(s)) for m, s in zip(minute, seconds)]
    n = len(minute) * rows_per_event
    event_index = np.repeat(np.arange(len(minute)), rows_per_event)
    return pl.DataFrame({
        "event_ts": pl.Series([event_ts[i] for i in event_index], dtype=pl.Datetime("us", "UTC")),
        "event_id": ds.toordinal() * 1_000_000 + event_index,
        "position": np.tile(np.arange(1, rows_per_event + 1), len(minute)).astype(np.int16),
        "product_group": rng.choice(["books", "toys"], n),
        "region": np.repeat(rng.choice(["US", "DE"], len(minute)), rows_per_event),
        "query": np.repeat([f"q{int(q)}" for q in rng.zipf(1.5, len(minute)) % 50], rows_per_event),
        "product_first_seen": [ds - timedelta(days=int(d)) for d in rng.integers(0, 90, n)],
        "label": rng.integers(0, 3, n).astype(np.int8),
        "f_dense": rng.uniform(0.1, 1, n),
        "f_sparse": np.where(rng.random(n) < 0.3, rng.uniform(0, 1, n), 0.0),
        "f_signed": rng.normal(size=n),
    }).sort(["event_ts", "event_id"])


def write_logs(root: Path, frame: pl.DataFrame) -> None:
    """Write ``frame`` hive-partitioned as ``root/ds=…/hour=HH/part-0.parquet``."""
    utc = pl.col("event_ts")
    if frame.schema["event_ts"].time_zone is not None:  # partitions are UTC days and hours
        utc = utc.dt.convert_time_zone("UTC")
    keyed = frame.with_columns(utc.dt.date().alias("_ds"), utc.dt.hour().alias("_hour"))
    for (ds, hour), part in keyed.group_by(["_ds", "_hour"]):
        folder = root / f"ds={ds.isoformat()}" / f"hour={hour:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        part.drop("_ds", "_hour").write_parquet(folder / "part-0.parquet")


def blank_event_keys(path: Path, *, event_ids: int, timestamps: int) -> None:
    """Rewrite one hour file: ``event_ids`` rows between minutes 25 and 34 of the hour (the
    default windows' second one, 04:25-04:35, in hour 4) lose their event id, the next
    ``timestamps`` rows their timestamp."""
    frame = pl.read_parquet(path).with_row_index()
    rows = frame.filter(pl.col("event_ts").dt.minute().is_between(25, 34))["index"]
    blank = {"event_id": rows[:event_ids], "event_ts": rows[event_ids:event_ids + timestamps]}
    frame.with_columns(
        pl.when(pl.col("index").is_in(picked.implode())).then(None).otherwise(column).alias(column)
        for column, picked in blank.items()
    ).drop("index").write_parquet(path)


def make_config(tmp: Path, **sections) -> Config:  # noqa: F821 - returned type is feco's Config
    """A config over ``tmp`` with test features; ``sections`` override whole tables."""
    raw = {
        "paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
        "logs": {"features": FEATURES},
        "sampling": {"windows": 8, "window_minutes": 10, "events_per_window": 5, "seed": 7},
        "coverage": {"rules": {"f_signed": "!= 0"}},
        "segments": {"crosses": [["region", "query_band"]]},
    }
    raw.update(sections)
    return parse_config(raw, source=tmp / "feco.toml")


# The Spark engine as the tests run it: local mode on two cores, no web UI, few partitions.
SPARK_TEST_SETTINGS = {"master": "local[2]", "conf": {"spark.ui.enabled": "false"}}


def engine_sections(engine: str) -> dict:
    """The config sections that select ``engine`` ("duckdb" or "spark"), for ``make_config``."""
    return {"engine": engine, "spark": SPARK_TEST_SETTINGS} if engine == "spark" else {}


def write_config_file(folder: Path, *, features: list[str] = FEATURES, events_per_window: int = 5,
                      extra: str = "", readiness: str = "settle_minutes = 0", engine: str = "duckdb") -> Path:
    """A feco.toml in ``folder`` over its logs/, samples/ and feco.duckdb, for CLI and DAG tests;
    ``extra`` is appended TOML. Logs count as complete once written (``readiness``), since the
    tests write them just before the run."""
    spark = "" if engine == "duckdb" else (f'engine = "{engine}"\n[spark]\nmaster = "{SPARK_TEST_SETTINGS["master"]}"\n'
                                           + "conf = " + json.dumps(SPARK_TEST_SETTINGS["conf"]).replace('":', '" =') + "\n")
    path = folder / "feco.toml"
    path.write_text(spark + textwrap.dedent(f"""
        [paths]
        logs = "logs"
        samples = "samples"
        warehouse = "feco.duckdb"
        [logs]
        features = {json.dumps(features)}
        [sampling]
        events_per_window = {events_per_window}
        [readiness]
        {readiness}
    """) + textwrap.dedent(extra))
    return path


def write_empty_warehouse_config(folder: Path) -> str:
    """write_config_file's feco.toml, its warehouse created with every table empty; its path."""
    from feco.warehouse import open_for_write

    path = write_config_file(folder)
    with open_for_write(folder / "feco.duckdb"):
        pass
    return str(path)


def write_states(conn, coverages: dict[date, float], segment: tuple[str, str] = ("all", "all"),
                 rows_per_window: int = 1000) -> None:
    """Coverage states of feature f_dense in one segment: eight windows a day, at each day's
    coverage give or take 0.1 point."""
    n = rows_per_window
    rows = [
        (ds, window, "f_dense", *segment, n, n, round(n * (coverage + 0.002 * (window % 2 - 0.5))))
        for ds, coverage in coverages.items() for window in range(8)
    ]
    conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def write_local_logs(root: Path, frame: pl.DataFrame, zone: str) -> None:
    """Write ``frame`` as a log job working in local time does: partitioned by the day and hour
    of its timestamps in ``zone`` (naive ones taken as UTC), the timestamps as they are."""
    local = pl.col("event_ts")
    if frame.schema["event_ts"].time_zone is None:
        local = local.dt.replace_time_zone("UTC")
    local = local.dt.convert_time_zone(zone)
    keyed = frame.with_columns(local.dt.date().alias("_ds"), local.dt.hour().alias("_hour"))
    for (ds, hour), part in keyed.group_by(["_ds", "_hour"]):
        folder = root / f"ds={ds.isoformat()}" / f"hour={hour:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        part.drop("_ds", "_hour").write_parquet(folder / "part-0.parquet")
