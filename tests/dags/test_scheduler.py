"""The path a team takes: the real Airflow scheduler, dag-processor and API server on a
throw-away AIRFLOW_HOME (SQLite, LocalExecutor), feco_daily with a start date three days back
and catchup. The warehouse must then hold exactly the three finished days, not today."""

import os
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta

import duckdb
import pytest

from dags.conftest import airflow_env
from logbuilder import make_events, write_config_file, write_logs

pytestmark = pytest.mark.slow  # ~2-4 minutes: three components start and run four DAG runs
WAIT_SECONDS = 480


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_serving(url: str, seconds: float = 180) -> None:
    """Tasks call the API server; one that starts before it answers fails its first try."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(2)
    pytest.fail(f"the API server did not answer {url} in {seconds:g}s")


def dag_runs(home) -> dict[str, list[str]]:
    """Run states per DAG, from the metadata database."""
    with sqlite3.connect(f"file:{home / 'airflow.db'}?mode=ro", uri=True, timeout=5) as db:
        rows = db.execute("SELECT dag_id, state FROM dag_run ORDER BY run_after").fetchall()
    runs: dict[str, list[str]] = {}
    for dag_id, state in rows:
        runs.setdefault(dag_id, []).append(state)
    return runs


def test_the_scheduler_runs_each_finished_day_once(tmp_path):
    pytest.importorskip("airflow")
    today = datetime.now(UTC).date()
    days = [today - timedelta(days=n) for n in (3, 2, 1)]
    for day in days + [today]:  # today's logs are partial: no run may take them
        write_logs(tmp_path / "logs", make_events(day, events=1500, seed=day.toordinal()))
    config = write_config_file(tmp_path)
    home = tmp_path / "airflow"
    home.mkdir()
    port = free_port()
    env = {**airflow_env(home), "FECO_CONFIG": str(config), "FECO_START_DATE": days[0].isoformat(),
           "AIRFLOW__CORE__EXECUTOR": "LocalExecutor", "AIRFLOW__CORE__PARALLELISM": "2",
           "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
           "AIRFLOW__API__HOST": "127.0.0.1", "AIRFLOW__API__PORT": str(port),
           "AIRFLOW__API__BASE_URL": f"http://127.0.0.1:{port}",
           "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
           "AIRFLOW__API_AUTH__JWT_SECRET": "feco-test-secret-not-for-production",
           "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
           "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
           "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2"}
    airflow = [sys.executable, "-m", "airflow"]
    subprocess.run(airflow + ["db", "migrate"], env=env, check=True, capture_output=True)
    subprocess.run(airflow + ["pools", "set", "feco_warehouse", "1", "feco: one writer"], env=env,
                   check=True, capture_output=True)
    components = []
    try:
        for name in ("api-server", "dag-processor", "scheduler"):
            log = open(home / f"{name}.log", "w")  # noqa: SIM115 - the component writes it until the end
            components.append(subprocess.Popen(airflow + [name], env=env, stdout=log, stderr=subprocess.STDOUT,
                                               start_new_session=True))
            if name == "api-server":
                wait_until_serving(f"http://127.0.0.1:{port}/api/v2/monitor/health")
        deadline = time.monotonic() + WAIT_SECONDS
        runs = {}
        while time.monotonic() < deadline:
            time.sleep(5)
            runs = dag_runs(home) if (home / "airflow.db").exists() else {}
            daily = runs.get("feco_daily", [])
            if len(daily) >= 3 and all(state in ("success", "failed") for state in daily):
                break
        else:
            pytest.fail(f"feco_daily did not finish three runs in {WAIT_SECONDS}s: {runs}; logs in {home}")
        time.sleep(10)  # a fourth run, for today, would have been created by now
        runs = dag_runs(home)
    finally:
        for process in components:
            os.killpg(process.pid, 15)
        for process in components:
            process.wait(timeout=60)

    assert runs["feco_daily"] == ["success"] * 3, f"logs in {home}"
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        published = [row[0] for row in conn.execute("SELECT ds FROM runs ORDER BY ds").fetchall()]
    assert published == days
    assert (tmp_path / "report" / "index.html").exists()
    # feco_ranker ran on the published asset and, with too few days for a model, trained nothing
    assert runs.get("feco_ranker") and set(runs["feco_ranker"]) == {"success"}
