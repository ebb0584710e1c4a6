"""The daily DAG: it parses cleanly and cheaply, keeps the house policies, and runs a day."""

import json
import shutil
import subprocess
import sys
import textwrap
from datetime import date

import duckdb

from dags.conftest import DAGS, airflow_env
from logbuilder import make_events, write_config_file, write_logs

DAY = date(2026, 1, 3)
HEAVY = ("polars", "duckdb", "lightgbm", "shap", "pyarrow", "numpy", "feco")


def run_in_airflow(home, script: str, **env) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                            env={**airflow_env(home), **env}, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip().splitlines()[-1]


# As Airflow's dag-processor and task runner load a bundle: its folder on sys.path, so the
# DAG files import their shared feco_support module.
LOAD_BAG = """
    try:
        from airflow.dag_processing.dagbag import BundleDagBag
        bag = BundleDagBag(dag_folder=r"{dags}", bundle_path=r"{dags}")
    except ImportError:  # Airflow before 3.1
        import sys
        from airflow.models.dagbag import DagBag
        sys.path.append(r"{dags}")
        bag = DagBag(dag_folder=r"{dags}")
"""


def test_dagbag_has_no_import_errors_and_keeps_the_policies(airflow_home):
    out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + """
    import json
    dag = bag.get_dag("feco_daily")
    print(json.dumps({
        "errors": {k: str(v) for k, v in bag.import_errors.items()},
        "tasks": [t.task_id for t in dag.topological_sort()] if hasattr(dag, "topological_sort")
                 else sorted(dag.task_ids),
        "max_active_runs": dag.max_active_runs,
        "retries": [t.retries for t in dag.tasks],
        "tags": sorted(dag.tags),
        "schedule": str(dag.schedule),
        "pools": {t.task_id: t.pool for t in dag.tasks},
        "timeouts": [t.execution_timeout.total_seconds() for t in dag.tasks if t.execution_timeout],
        "failure_callbacks": sum(bool(t.on_failure_callback) for t in dag.tasks),
        "outlets": {t.task_id: [a.name for a in t.outlets] for t in dag.tasks if t.outlets},
        "params": sorted(dag.params),
    }))
    """)
    facts = json.loads(out)
    assert facts["errors"] == {}
    assert facts["tasks"][:5] == ["wait_for_logs", "sample", "sample_reference", "coverage", "publish"]
    assert sorted(facts["tasks"][5:]) == ["notify", "report"]
    assert facts["max_active_runs"] == 1
    assert min(facts["retries"]) >= 1
    assert facts["tags"] == ["feco"]
    assert facts["schedule"].startswith("CronDataIntervalTimetable(")  # which day a run takes: test_schedule.py
    writers = {task for task, pool in facts["pools"].items() if pool == "feco_warehouse"}
    assert writers == set(facts["tasks"]) - {"wait_for_logs"}  # the sensor only lists files
    assert len(facts["timeouts"]) == len(facts["tasks"]) == facts["failure_callbacks"]
    assert facts["outlets"] == {"publish": ["feco_coverage"]}
    assert facts["params"] == ["allow_incomplete", "as_of", "config", "ds"]


def test_parsing_the_dags_imports_no_heavy_library(airflow_home):
    # the DAGs' folder is not put on sys.path here: each file finds feco_support itself
    out = run_in_airflow(airflow_home, f"""
    import importlib.util, json, sys
    for name in ("feco_daily", "feco_ranker"):
        spec = importlib.util.spec_from_file_location(name, rf"{DAGS}/{{name}}.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
    """)
    assert json.loads(out) == []


def test_dag_test_runs_a_day_end_to_end(airflow_home, tmp_path):
    # A manual run at midnight after DAY, as the scheduled run fires: it processes DAY.
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=3))
    config = write_config_file(tmp_path)
    out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + f"""
    import pendulum
    run = bag.get_dag("feco_daily").test(logical_date=pendulum.datetime({DAY.year}, {DAY.month}, {DAY.day}, tz="UTC").add(days=1))
    print(run.state)
    """, FECO_CONFIG=str(config))
    assert out == "success"
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT ds, events_sampled FROM runs").fetchall() == [(DAY, 40)]
        assert conn.execute("SELECT count(DISTINCT feature) FROM feco_daily").fetchone() == (3,)


def test_a_rerun_with_allow_incomplete_samples_a_day_missing_an_hour(airflow_home, tmp_path):
    """Without the param, the day would wait for hour=04 and then be refused; with it, the
    window that reads hour=04 is recorded as missing and the volume rule says so."""
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=3))
    shutil.rmtree(tmp_path / "logs" / f"ds={DAY}" / "hour=04")
    config = write_config_file(tmp_path)
    out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + f"""
    run = bag.get_dag("feco_daily").test(run_conf={{"ds": "{DAY}", "allow_incomplete": True}})
    print(run.state)
    """, FECO_CONFIG=str(config))
    assert out == "success"
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT window_index FROM sample_windows WHERE len(hours_missing) > 0").fetchall() == [(1,)]
        assert conn.execute("SELECT detail FROM alerts WHERE rule = 'volume_drop'").fetchone()[0].startswith(
            "1 window without logs")
