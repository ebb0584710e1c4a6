"""The Spark engine on a real Spark standalone cluster: a master and two workers on 127.0.0.1,
started with the launcher pyspark ships. `feco run` with engine = "spark" against
spark://127.0.0.1:…, and the same day through spark-submit run by an Airflow task (the command
Airflow's SparkSubmitOperator builds), write the DuckDB engine's states; the master saw both
applications through to the end."""

import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from dags.conftest import airflow_home  # noqa: F401 - the fixture, for the Airflow route
from dags.test_feco_daily import LOAD_BAG, run_in_airflow
from feco.warehouse import open_read_only
from logbuilder import write_config_file

pytest.importorskip("pyspark", reason="pyspark (the spark extra) is not installed")
if shutil.which("java") is None:
    pytest.skip("a Spark cluster needs Java (17+) on PATH", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from _spark_cluster import environment, spark_cluster

pytestmark = pytest.mark.slow

DAY = date(2026, 3, 2)
FEATURES = ["text_bm25_title", "eng_ctr_7d", "price_vs_category", "pers_recent_view", "meta_in_stock"]
STATE_KEY = ["ds", "window_index", "feature", "segment_dim", "segment_value"]
# Small executors: two of them, the master, the workers and the driver share 2 cores. The
# executors' Python is this one, which has feco (on a cluster: the environment shipped to them).
SPARK_CONF = {"spark.ui.enabled": "false", "spark.executor.memory": "768m", "spark.cores.max": "2",
              "spark.pyspark.python": sys.executable}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with spark_cluster(tmp_path_factory.mktemp("spark-cluster"), workers=2) as running:
        yield running


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    from feco.generator import generate_logs

    root = tmp_path_factory.mktemp("logs")
    generate_logs(root, start=DAY, days=1, events_per_day=30_000, seed=3)
    return root


def _config(folder: Path, logs: Path, *, spark: str = "") -> Path:
    """A config over ``logs`` whose sample and warehouse are in ``folder``; ``spark``: TOML
    put before its tables (the engine and its settings)."""
    folder.mkdir()
    path = write_config_file(folder, features=FEATURES, events_per_window=40,
                             extra='[coverage.rules]\nprice_vs_category = "!= 0"\n')
    path.write_text(spark + path.read_text().replace('logs = "logs"', f'logs = "{logs}"'))
    return path


def _spark_section(master: str | None) -> str:
    conf = ", ".join(f'"{key}" = "{value}"' for key, value in SPARK_CONF.items())
    return 'engine = "spark"\n[spark]\n' + (f'master = "{master}"\n' if master else "") + f"conf = {{ {conf} }}\n"


def _run(command: list[str], env: dict | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900, check=False)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]


def _feco_run(config: Path) -> None:
    _run([sys.executable, "-m", "feco", "run", "--ds", DAY.isoformat(), "--config", str(config)])


def _states(config: Path) -> pl.DataFrame:
    with open_read_only(config.parent / "feco.duckdb") as conn:
        return conn.sql("SELECT * FROM coverage_states").pl().sort(STATE_KEY)


@pytest.fixture(scope="module")
def duckdb_states(tmp_path_factory, logs):
    config = _config(tmp_path_factory.mktemp("duckdb") / "run", logs)
    _feco_run(config)
    states = _states(config)
    assert states.height > 0
    return states


def _completed_apps(cluster) -> int:
    return sum(app["state"] == "FINISHED" for app in cluster.status()["completedapps"])


def test_feco_run_on_the_cluster_writes_the_duckdb_engines_states(tmp_path, cluster, logs, duckdb_states):
    assert sum(w["state"] == "ALIVE" for w in cluster.status()["workers"]) == 2
    finished = _completed_apps(cluster)
    config = _config(tmp_path / "spark", logs, spark=_spark_section(cluster.master))
    _feco_run(config)
    assert _states(config).equals(duckdb_states)
    assert _completed_apps(cluster) == finished + 1  # the run was an application of this master


# The Airflow route of docs/lake.md: a task runs spark-submit with a one-line driver kept
# outside the package, spark-submit's master (the config leaves [spark] master unset), client
# mode, the day from the run's {{ ds }}. The command is the one SparkSubmitOperator builds; a
# BashOperator runs it, as the Spark provider is not in the project's extras (docs/lake.md).
SUBMIT_DAG = """
import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.sdk import dag


@dag(dag_id="feco_spark_submit", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"))
def feco_spark_submit():
    BashOperator(task_id="feco_run", bash_command={command!r}, env={env!r}, append_env=True)


feco_spark_submit()
"""


def test_spark_submit_from_airflow_to_the_cluster_writes_the_duckdb_engines_states(
        tmp_path, cluster, logs, duckdb_states, airflow_home):  # noqa: F811 - the imported fixture
    driver = tmp_path / "feco_main.py"
    driver.write_text("from feco.cli import main; raise SystemExit(main())\n")
    config = _config(tmp_path / "submitted", logs, spark=_spark_section(None))
    command = (f"{cluster.home / 'bin' / 'spark-submit'} --master {cluster.master} --deploy-mode client {driver} "
               f"run --ds {{{{ ds }}}} --config {config}")
    spark_env = {k: v for k, v in environment(cluster.home).items() if k.startswith(("SPARK_", "PYSPARK_"))}
    dags = tmp_path / "dags"
    dags.mkdir()
    (dags / "feco_spark_submit.py").write_text(SUBMIT_DAG.format(command=command, env=spark_env))
    finished = _completed_apps(cluster)
    state = run_in_airflow(airflow_home, LOAD_BAG.format(dags=dags) + f"""
    import pendulum
    dag = bag.get_dag("feco_spark_submit")
    print(dag.test(logical_date=pendulum.datetime({DAY.year}, {DAY.month}, {DAY.day}, tz="UTC")).state)
    """, AIRFLOW__CORE__DAGS_FOLDER=str(dags))  # dag.test() runs DAGs of the configured folder
    assert state == "success"
    assert _states(config).equals(duckdb_states)
    assert _completed_apps(cluster) == finished + 1
