"""The Spark engine (local mode) chooses the DuckDB engine's events and writes its states."""

import os
import shutil
import subprocess
import sys
import venv
from datetime import date, timedelta

import polars as pl
import pytest

from feco import tasks
from feco.sample_folder import read_sample
from feco.warehouse import open_read_only
from logbuilder import blank_event_keys, engine_sections, make_config, write_config_file

pytest.importorskip("pyspark", reason="pyspark (the spark extra) is not installed")
if shutil.which("java") is None:
    pytest.skip("the Spark engine needs Java (17+) on PATH", allow_module_level=True)

DAY = date(2026, 3, 2)
FEATURES = ["text_bm25_title", "eng_ctr_7d", "price_vs_category", "pers_recent_view", "meta_in_stock"]
STATE_KEY = ["window_index", "feature", "segment_dim", "segment_value"]


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from feco.generator import generate_logs

    root = tmp_path_factory.mktemp("logs")
    generate_logs(root, start=DAY, days=2, events_per_day=30_000, seed=3)
    # rows without an event id in window 1 (04:25-04:35), and without a timestamp
    blank_event_keys(next((root / f"ds={DAY}" / "hour=04").glob("*.parquet")), event_ids=5, timestamps=3)
    return root


def _config(folder, logs, **sections):
    return make_config(folder, paths={"logs": str(logs), "samples": "samples", "warehouse": "feco.duckdb"},
                       logs={"features": FEATURES}, coverage={"rules": {"price_vs_category": "!= 0"}},
                       sampling={"events_per_window": 40, "seed": 5},
                       segments={"crosses": [["region", "query_band"]], "band_days": 2}, **sections)


def _states(config) -> pl.DataFrame:
    with open_read_only(config.paths.warehouse) as conn:
        return conn.sql("SELECT * FROM coverage_states").pl().sort(["ds", *STATE_KEY])


def _run_both(tmp_path, logs, days):
    duck = _config(tmp_path / "duckdb", logs)
    spark = _config(tmp_path / "spark", logs, **engine_sections("spark"))
    for ds in days:
        for config in (duck, spark):
            tasks.run_day(ds, config, deliver=False)
        duck_rows, duck_windows = read_sample(ds, duck.paths.samples)
        spark_rows, spark_windows = read_sample(ds, spark.paths.samples)
        assert spark_windows.equals(duck_windows)
        if ds == DAY:
            assert duck_windows.filter(window=1).select("rows_null_event_id", "rows_null_timestamp").row(0) == (5, 3)
        assert duck_windows["events_sampled"].sum() == 8 * 40  # a sample, not whole windows
        chosen = [rows.select("window", "event_id").unique().sort("window", "event_id")
                  for rows in (duck_rows, spark_rows)]
        assert chosen[1].equals(chosen[0])
        assert spark_rows.height == duck_rows.height
    assert _states(spark).height > 0
    assert _states(spark).equals(_states(duck))


def test_spark_chooses_the_same_events_and_writes_identical_states(tmp_path, logs):
    _run_both(tmp_path, logs, [DAY])


@pytest.mark.slow
def test_query_bands_over_two_days_are_identical_too(tmp_path, logs):
    _run_both(tmp_path, logs, [DAY, DAY + timedelta(days=1)])  # the second day's bands use the first's


def _config_file(folder, logs, *, spark: str = ""):
    """A feco.toml over ``logs`` in ``folder``, for `feco run`; ``spark``: the engine's TOML."""
    folder.mkdir()
    (folder / "logs").symlink_to(logs)
    config = write_config_file(folder, features=FEATURES, events_per_window=40,
                               extra='[coverage.rules]\nprice_vs_category = "!= 0"\n')
    config.write_text(spark + config.read_text())
    return config


def _feco_run(config, **env):
    return subprocess.run([sys.executable, "-m", "feco", "run", "--ds", DAY.isoformat(), "--config", str(config)],
                          capture_output=True, text=True, timeout=600, check=False, env=os.environ | env)


@pytest.mark.slow  # a local Spark session (~10 s)
def test_executors_without_feco_are_told_to_set_their_python(tmp_path, logs):
    """The executors' Python is the first thing a cluster gets wrong: a bare environment."""
    bare = tmp_path / "bare"
    venv.create(bare, with_pip=False)
    config = _config_file(tmp_path / "run", logs, spark='engine = "spark"\n[spark]\nmaster = "local[1]"\nconf = { '
                          f'"spark.ui.enabled" = "false", "spark.pyspark.python" = "{bare / "bin" / "python"}" }}\n')
    done = _feco_run(config)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "the Spark executors' Python has no module" in done.stderr
    assert "spark.pyspark.python" in done.stderr
    assert not (tmp_path / "run" / "samples" / f"ds={DAY}").exists()


# Imported by the Python workers (PYTHONPATH): window 3's first attempt dies right after it
# has written its rows.
CRASH_ONCE = """
import os, pathlib
import feco.sampling.write as sampling

_write_rows = sampling.write_rows


def write_rows_then_crash_once(rows, location):
    _write_rows(rows, location)
    marker = pathlib.Path(os.environ["FECO_TEST_CRASHED"])
    if "window=3" in str(location) and not marker.exists():
        marker.touch()
        os._exit(1)


sampling.write_rows = write_rows_then_crash_once
"""


@pytest.mark.slow  # a local Spark session killed and run again (~14 s)
def test_a_window_whose_worker_dies_is_run_again_and_the_day_is_whole(tmp_path, logs):
    """Nothing lost when an executor's Python dies mid-day: Spark runs the window again, which
    writes its file again (through a temporary name), and the day is the DuckDB engine's."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(CRASH_ONCE)
    marker = tmp_path / "crashed"
    duck = _config_file(tmp_path / "duckdb", logs)
    assert _feco_run(duck).returncode == 0
    # local[2,2]: two threads, a task tried twice (local mode otherwise never retries)
    spark = _config_file(tmp_path / "spark", logs, spark='engine = "spark"\n[spark]\nmaster = "local[2,2]"\n'
                         'conf = { "spark.ui.enabled" = "false" }\n')
    done = _feco_run(spark, PYTHONPATH=f"{hook}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
                     FECO_TEST_CRASHED=str(marker))
    assert done.returncode == 0, done.stderr[-3000:]
    assert marker.exists()  # a worker did die
    spark_rows, spark_windows = read_sample(DAY, spark.parent / "samples")
    duck_rows, duck_windows = read_sample(DAY, duck.parent / "samples")
    assert spark_windows.equals(duck_windows)
    assert spark_rows.sort(spark_rows.columns).equals(duck_rows.sort(duck_rows.columns))
    assert not [p for p in (spark.parent / "samples").rglob("*") if p.name.endswith(".tmp")]
