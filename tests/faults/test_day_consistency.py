"""A day's coverage, scores, alerts and incidents are one: a rerun killed at any point leaves
the previous run's day or the complete new one, never new coverage beside old alerts.

The two runs differ (another sample size, so other rows, alerts and incident figures), and a
run is SIGKILLed at random points in many rounds; after each kill every table of the day
equals one run's, whole. The run after the last kill repairs the day.
"""

import os
import random
import signal
import subprocess
import sys
import time
from datetime import date, timedelta

import duckdb
import polars as pl
import pytest

from logbuilder import FEATURES, make_events, write_config_file, write_logs

DAY = date(2026, 4, 6)
ABSENT = ["f_gone_a", "f_gone_b"]  # logged the day before, not on DAY: an alert each
ROUNDS = 16
DAY_TABLES = {
    "runs": "SELECT * EXCLUDE (published_at) FROM runs",
    "sample_windows": "SELECT * FROM sample_windows",
    "coverage_states": "SELECT * FROM coverage_states",
    "feature_status": "SELECT * FROM feature_status",
    "alerts": "SELECT * FROM alerts",
    "unjudged": "SELECT * FROM unjudged",
    "incidents": "SELECT * FROM incidents",
    "incident_costs": "SELECT * FROM incident_costs",
}


def write_configs(folder) -> dict[str, str]:
    """Two configs over the same logs and warehouse, taking 100 or 200 of the ~270 events a window."""
    paths = {}
    for name, events in (("small", 100), ("large", 200)):
        (folder / name).mkdir()
        # min_rows between the two samples' region sizes: one run lists regions as not judged
        path = write_config_file(folder / name, features=FEATURES + ABSENT, events_per_window=events,
                                 extra="[alerts]\nmin_rows = 5000\n")
        text = path.read_text().replace('"logs"', '"../logs"').replace('"samples"', '"../samples"') \
            .replace('"feco.duckdb"', '"../feco.duckdb"')
        path.write_text(text)
        paths[name] = str(path)
    return paths


def run(config: str, ds: date = DAY) -> list:
    return [sys.executable, "-m", "feco", "run", "--ds", str(ds), "--config", config]


def day_state(folder) -> dict[str, list]:
    with duckdb.connect(str(folder / "feco.duckdb"), read_only=True) as conn:
        return {table: conn.sql(sql + " ORDER BY ALL").fetchall() for table, sql in DAY_TABLES.items()}


def judgement_agrees_with_coverage(folder) -> bool:
    """Every stored alert and unjudged segment of DAY that counts rows (an unjudged one in its
    detail) counts those of its segment in the published coverage. (The day before keeps its
    judgement as detected when DAY's query bands restate its coverage.)"""
    with duckdb.connect(str(folder / "feco.duckdb"), read_only=True) as conn:
        return conn.sql("""
            SELECT count(*)
            FROM (SELECT ds, segment_dim, segment_value, n_rows FROM alerts
                  UNION ALL SELECT ds, segment_dim, segment_value,
                      nullif(replace(regexp_extract(detail, '^([0-9,]+) sampled rows', 1), ',', ''), '')::BIGINT
                  FROM unjudged) judged
            LEFT JOIN (SELECT ds, segment_dim, segment_value, max(n_rows) AS n_rows FROM feco_daily GROUP BY ALL) d
                USING (ds, segment_dim, segment_value)
            WHERE judged.ds = $day AND judged.n_rows IS NOT NULL AND judged.n_rows IS DISTINCT FROM d.n_rows""",
            params={"day": DAY}).fetchall() == [(0,)]


@pytest.fixture
def folder(tmp_path):
    write_logs(tmp_path / "logs", make_events(DAY - timedelta(days=1), events=2_000, seed=2).with_columns(
        *(pl.lit(0.5).alias(name) for name in ABSENT)))
    write_logs(tmp_path / "logs", make_events(DAY, events=40_000, seed=3, rows_per_event=8))
    return tmp_path


# The soak (16 random kills, ~50 s): slow. tests/faults/test_failed_rerun.py kills a rerun at
# every file operation, and test_faults.py a run at random moments, in the suite.
@pytest.mark.slow
def test_a_rerun_killed_anywhere_leaves_one_run_s_whole_day_and_the_next_run_repairs(folder):
    configs = write_configs(folder)
    assert subprocess.run(run(configs["large"], DAY - timedelta(days=1)), capture_output=True).returncode == 0
    runs = {}
    for name in ("small", "large"):  # each run's day, as a clean run writes it
        started = time.monotonic()
        assert subprocess.run(run(configs[name]), capture_output=True).returncode == 0
        runs[name] = (day_state(folder), time.monotonic() - started)
    assert runs["small"][0]["alerts"] and runs["small"][0]["unjudged"] != runs["large"][0]["unjudged"]

    current, chance = "large", random.Random(34)
    for _ in range(ROUNDS):
        other = "small" if current == "large" else "large"
        process = subprocess.Popen(run(configs[other]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(runs[other][1] * chance.uniform(0.3, 1.1))
        process.send_signal(signal.SIGKILL)
        process.wait()
        state = day_state(folder)
        assert state in (runs["small"][0], runs["large"][0]), "a day mixing two runs"
        assert judgement_agrees_with_coverage(folder)
        current = "small" if state == runs["small"][0] else "large"

    assert subprocess.run(run(configs["large"]), capture_output=True).returncode == 0
    assert day_state(folder) == runs["large"][0]
    assert not any(name.endswith(".tmp") for name in os.listdir(folder / "samples"))
