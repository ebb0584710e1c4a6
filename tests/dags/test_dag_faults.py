"""Faults under Airflow itself: the real feco_daily DAG under `dag.test()`, with a task that
fails and is retried by Airflow, and with a CLI backfill holding the warehouse."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from datetime import date, timedelta

import duckdb
import polars as pl
import pytest

from dags.conftest import DAGS, airflow_env
from dags.test_feco_daily import LOAD_BAG, run_in_airflow
from feco import tasks
from feco.config import load_config
from logbuilder import FEATURES, make_events, write_config_file, write_logs

# Apart from the other DAG tests' days: dag.test() clears its day's task instances. Each run
# starts at midnight after DAY, as the scheduled run for DAY does.
DAY = date(2026, 1, 5)
# task id -> the feco.tasks function it calls
STEPS = {"wait_for_logs": "check_logs", "sample": "sample", "sample_reference": "sample_reference",
         "coverage": "compute_coverage", "publish": "publish", "notify": "notify", "report": "report"}
ABSENT = ["f_gone_a", "f_gone_b"]  # logged the day before DAY, not on DAY: an incident each


def write_logs_gone_on_day(logs) -> None:
    """The day before DAY logs every configured feature; DAY lacks ABSENT's (a feature never
    logged on any day is a config error, not an incident)."""
    write_logs(logs, make_events(DAY - timedelta(days=1), events=2000, seed=2).with_columns(
        *(pl.lit(0.5).alias(name) for name in ABSENT)))
    write_logs(logs, make_events(DAY, events=2000, seed=3))


def write_config(folder):
    return write_config_file(folder, features=FEATURES + ABSENT, extra="""
        [alerts.notify]
        jsonl = "alerts.jsonl"
        webhook_url_env = "FECO_TEST_NO_WEBHOOK"
    """)


def end_state(folder) -> dict:
    with duckdb.connect(str(folder / "feco.duckdb"), read_only=True) as conn:
        tables = {
            "runs": "SELECT * EXCLUDE (published_at) FROM runs",
            "sample_windows": "SELECT * FROM sample_windows",
            "coverage_states": "SELECT * FROM coverage_states",
            "feature_status": "SELECT * FROM feature_status",
            "alerts": "SELECT * FROM alerts",
            "incidents": "SELECT * FROM incidents",
            "page_deliveries": "SELECT * EXCLUDE (last_attempt_at) FROM page_deliveries",
        }
        state = {name: conn.sql(sql + " ORDER BY ALL").fetchall() for name, sql in tables.items()}
    state["alerts.jsonl"] = sorted((folder / "alerts.jsonl").read_text().splitlines())
    return state


FAIL_EACH_TASK_ONCE = """
    import json
    from datetime import timedelta

    import pendulum
    from airflow.utils.session import create_session
    from feco import tasks

    dag = bag.get_dag("feco_daily")
    for operator in dag.tasks:
        operator.retry_delay = timedelta(0)

    calls = {{}}

    def fails_once_after_its_work(name):
        real = getattr(tasks, name)

        def step(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            result = real(*args, **kwargs)
            if calls[name] == 1:
                raise RuntimeError(f"injected fault after {{name}} did its work")
            return result

        setattr(tasks, name, step)

    for name in {steps!r}.values():
        fails_once_after_its_work(name)
    run = dag.test(logical_date=pendulum.datetime({day.year}, {day.month}, {day.day}, tz="UTC").add(days=1))
    with create_session() as session:
        tries = {{ti.task_id: [str(ti.state), ti.try_number] for ti in run.get_task_instances(session=session)}}
    print(json.dumps({{"state": str(run.state), "tries": tries, "calls": calls}}))
"""


def test_airflow_retries_each_failed_task_and_the_day_equals_a_clean_run(airflow_home, tmp_path):
    """Every task of feco_daily fails on its first try; Airflow retries it; the day equals a clean run.

    `dag.test()` in Airflow 3 honours retries (read in airflow/sdk/definitions/dag.py): a task
    that raises is marked `up_for_retry` by the execution API while tries remain (the DAG's
    `retries=2`), and dag.test's loop schedules it again, with `try_number` 2, once its
    `retry_delay` has passed. Only that delay is changed here, from the DAG's 5 minutes to 0, on
    the loaded DAG object (the file is untouched); the decision to retry and the re-run are
    Airflow's. dag.test() runs tasks in its own process, so the fault is a wrapper around the
    `feco.tasks` function each task calls: its first call does the real work and then raises,
    the worst case for a retry (the step's effects landed, yet Airflow saw the task fail).
    """
    retried, clean = tmp_path / "retried", tmp_path / "clean"
    for folder in (retried, clean):
        folder.mkdir()
        write_config(folder)
    write_logs_gone_on_day(retried / "logs")
    os.symlink(retried / "logs", clean / "logs")
    for folder in (retried, clean):
        tasks.run_day(DAY - timedelta(days=1), load_config(folder / "feco.toml"), echo=lambda line: None)

    out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + FAIL_EACH_TASK_ONCE.format(steps=STEPS, day=DAY),
                         FECO_CONFIG=str(retried / "feco.toml"))
    facts = json.loads(out)
    assert facts["state"] == "success"
    assert facts["calls"] == {step: 2 for step in STEPS.values()}  # each ran twice: the failed try and Airflow's retry
    assert facts["tries"] == {step: ["success", 2] for step in STEPS}

    tasks.run_day(DAY, load_config(clean / "feco.toml"), echo=lambda line: None)
    expected = end_state(clean)
    assert len(expected["alerts.jsonl"]) == len(ABSENT)  # a notify retry sends nothing twice
    assert {row[2] for row in expected["alerts"]} >= set(ABSENT)  # (ds, alert_id, feature, …)
    assert end_state(retried) == expected


RUN_ONE_DAY = """
    import json

    import pendulum
    from airflow.utils.session import create_session

    run = bag.get_dag("feco_daily").test(logical_date=pendulum.datetime({day.year}, {day.month}, {day.day}, tz="UTC").add(days=1))
    with create_session() as session:
        tries = {{ti.task_id: [str(ti.state), ti.try_number, ti.end_date.timestamp()]
                 for ti in run.get_task_instances(session=session)}}
    print(json.dumps({{"state": str(run.state), "tries": tries}}))
"""


def sample_task_running(home) -> bool:
    with sqlite3.connect(f"file:{home / 'airflow.db'}?mode=ro", uri=True, timeout=5) as db:
        return db.execute("SELECT count(*) FROM task_instance WHERE dag_id = 'feco_daily' "
                          "AND task_id = 'sample' AND state = 'running'").fetchone()[0] > 0


def lock_held_by(pid: int, lock) -> bool:
    """Whether process ``pid`` holds a flock on ``lock`` (from /proc/locks, without taking it)."""
    if not lock.exists():
        return False
    inode = os.stat(lock).st_ino
    with open("/proc/locks") as locks:
        return any(fields[1] == "FLOCK" and fields[4] == str(pid) and fields[5].endswith(f":{inode}")
                   for fields in map(str.split, locks))


# ~21 s: slow. A second run waiting on the warehouse is in the suite (tests/faults/test_faults.py).
@pytest.mark.slow
def test_the_dag_waits_while_a_cli_backfill_holds_the_warehouse(airflow_home, tmp_path):
    """The DAG started while `feco backfill` runs: its first task waits for the run lock (no failed
    try, no retry needed), runs once the backfill is done, and nothing is counted twice.

    The backfill is paused (SIGSTOP) while it holds the lock, so the DAG's sample task is sure to
    start during the backfill rather than after it, however fast or loaded the machine is.
    """
    days = [DAY + timedelta(days=10 + i) for i in range(3)]
    write_logs(tmp_path / "logs", make_events(days[0], events=2000, seed=0).with_columns(
        *(pl.lit(0.5).alias(name) for name in ABSENT)))  # its configured features all logged (see write_config)
    for i, ds in enumerate(days[1:], start=1):
        write_logs(tmp_path / "logs", make_events(ds, events=2000, seed=i))
    config = write_config(tmp_path)
    lock = tmp_path / "feco.duckdb.lock"
    backfill = subprocess.Popen([sys.executable, "-m", "feco", "backfill", "--start", str(days[0]),
                                 "--end", str(days[-1]), "--config", str(config)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    dag_run = None
    try:
        deadline = time.monotonic() + 60
        while not lock_held_by(backfill.pid, lock) and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(backfill.pid, signal.SIGSTOP)
        assert lock_held_by(backfill.pid, lock), "the backfill never took the run lock"
        script = LOAD_BAG.format(dags=DAGS) + RUN_ONE_DAY.format(day=days[-1])
        dag_run = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                                   env={**airflow_env(airflow_home), "FECO_CONFIG": str(config)},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not sample_task_running(airflow_home) and dag_run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sample_task_running(airflow_home), "the DAG's sample task never started"
        time.sleep(1)  # the sample task is now waiting for the run lock
        resumed = time.time()
    finally:
        os.kill(backfill.pid, signal.SIGCONT)
    assert backfill.wait(timeout=120) == 0, backfill.stderr.read()
    out, err = dag_run.communicate(timeout=300)
    assert dag_run.returncode == 0, err[-3000:]
    facts = json.loads(out.strip().splitlines()[-1])
    assert facts["state"] == "success"
    assert {task: tries[:2] for task, tries in facts["tries"].items()} == {
        task: ["success", 1] for task in STEPS}  # it waited: no failed try
    assert facts["tries"]["sample"][2] >= resumed  # and finished only after the backfill went on

    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        assert [ds for (ds,) in conn.sql("SELECT ds FROM runs ORDER BY ds").fetchall()] == days
        keys = conn.sql('SELECT ds, window_index, feature, segment_dim, segment_value FROM coverage_states').fetchall()
        assert len(keys) == len(set(keys))
