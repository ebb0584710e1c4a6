"""Which day a feco_daily run processes, as Airflow's scheduler sees the DAG, and what a person
is told when a run cannot finish."""

import json
from datetime import UTC, date

import pytest

from dags.conftest import DAGS
from dags.test_feco_daily import LOAD_BAG, run_in_airflow
from logbuilder import make_events, write_config_file, write_logs

# The DAG's own timetable, serialised as the dag-processor stores it for the scheduler, asked
# for the runs it makes from FECO_START_DATE with catchup; each run's day from its context.
NEXT_RUNS = """
    import json
    from airflow.serialization.serialized_objects import DagSerialization
    from feco_support import day_of_run

    dag = DagSerialization.from_dict(DagSerialization.to_dict(bag.get_dag("feco_daily")))
    runs, info = [], None
    for _ in range(3):
        info = dag.next_dagrun_info(last_automated_run_info=info)
        context = {"params": {"ds": ""}, "data_interval_end": info.data_interval.end}
        runs.append([info.run_after.isoformat(), str(day_of_run(context))])
    print(json.dumps({"catchup": dag.catchup, "runs": runs}))
"""


def test_each_scheduled_run_processes_the_day_that_ended_when_it_fires(airflow_home):
    facts = json.loads(run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + NEXT_RUNS,
                                      FECO_START_DATE="2026-01-01"))
    assert facts["catchup"] is True
    assert facts["runs"] == [["2026-01-02T00:00:00+00:00", "2026-01-01"],
                             ["2026-01-03T00:00:00+00:00", "2026-01-02"],
                             ["2026-01-04T00:00:00+00:00", "2026-01-03"]]


def test_without_a_start_date_only_the_latest_day_runs(airflow_home):
    facts = json.loads(run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + NEXT_RUNS))
    assert facts["catchup"] is False


RUN = """
    import pendulum
    from datetime import timedelta

    dag = bag.get_dag("feco_daily")
    for operator in dag.tasks:
        operator.retry_delay = timedelta(0)
    run = dag.test({how})
    print(run.state)
"""
# The run that fires at midnight after the day, as the scheduled one does; or a manual rerun
# that names its day.
AT_MIDNIGHT_AFTER = 'logical_date=pendulum.datetime({day.year}, {day.month}, {day.day}, tz="UTC").add(days=1)'
NAMING_THE_DAY = 'run_conf={{"ds": "{day}"}}'


def messages(folder) -> list[str]:
    path = folder / "alerts.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["message"] for line in lines if "message" in json.loads(line)]


def configured(folder, readiness: str):
    return write_config_file(folder, readiness=readiness, extra="""
        [alerts.notify]
        jsonl = "alerts.jsonl"
        webhook_url_env = "FECO_TEST_NO_WEBHOOK"
    """)


def test_logs_not_ready_by_the_deadline_fail_with_one_message(airflow_home, tmp_path):
    day = date(2026, 1, 7)  # its deadline, 06:00 the next day, has long passed
    write_logs(tmp_path / "logs", make_events(day, events=500))  # but the log job never wrote _SUCCESS
    config = configured(tmp_path, readiness='marker = "_SUCCESS"\nwait_hours = 6')
    how = AT_MIDNIGHT_AFTER.format(day=day)
    state = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + RUN.format(how=how), FECO_CONFIG=str(config))
    assert state == "failed"
    [message] = messages(tmp_path)
    assert f"feco_daily.wait_for_logs failed for {day} (try 1): logs for {day} not ready by 2026-01-08 06:00 UTC" in message
    assert not (tmp_path / "samples").exists()  # nothing was sampled


def test_a_task_that_fails_after_its_retries_sends_one_message(airflow_home, tmp_path):
    day = date(2026, 1, 8)
    partition = tmp_path / "logs" / f"ds={day}" / "hour=00"
    partition.mkdir(parents=True)
    (partition / "part-0.parquet").write_bytes(b"not parquet")  # marked complete below, but corrupt
    config = configured(tmp_path, readiness='marker = "_SUCCESS"')
    (tmp_path / "logs" / f"ds={day}" / "_SUCCESS").touch()
    how = NAMING_THE_DAY.format(day=day)
    state = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + RUN.format(how=how), FECO_CONFIG=str(config))
    assert state == "failed"
    [message] = messages(tmp_path)  # one message for the task, not one per try
    assert message.startswith(f"feco: feco_daily.sample failed for {day} (try 3): ")
    assert "/dags/feco_daily/runs/" in message and "/tasks/sample?try_number=3" in message


def test_retries_and_their_delay_come_from_the_config(airflow_home, tmp_path):
    config = write_config_file(tmp_path, extra="[airflow]\nretries = 4\nretry_delay_minutes = 1.5\n")
    facts = json.loads(run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + """
    import json
    print(json.dumps({dag_id: sorted({(t.retries, t.retry_delay.total_seconds()) for t in bag.get_dag(dag_id).tasks})
                      for dag_id in ("feco_daily", "feco_ranker")}))
    """, FECO_CONFIG=str(config)))
    assert facts == {"feco_daily": [[4, 90.0]], "feco_ranker": [[4, 90.0]]}


# The log job writes its marker after the sensor has waited twice; a check every second
# instead of every 5 minutes; the tasks after the sensor are not run.
WAIT_THEN_MARK = """
    import logging
    from pathlib import Path

    class MarkAfterTwoWaits(logging.Handler):
        waits = 0
        def emit(self, record):
            if "not ready yet" in record.getMessage():
                MarkAfterTwoWaits.waits += 1
                if MarkAfterTwoWaits.waits == 2:
                    Path(r"{marker}").touch()

    logging.getLogger("airflow.task").addHandler(MarkAfterTwoWaits())
    dag = bag.get_dag("feco_daily")
    dag.get_task("wait_for_logs").poke_interval = 1
    run = dag.test(run_conf={{"ds": "{day}"}}, mark_success_pattern="^(?!wait_for_logs$).*")
    print(run.state)
"""


@pytest.mark.slow  # ~11 s; the sensor failing at its deadline stays in the suite
def test_a_waiting_sensor_logs_why_the_logs_are_not_ready_at_each_check(airflow_home, tmp_path):
    import subprocess
    import sys
    import textwrap
    from datetime import datetime, timedelta

    from dags.conftest import airflow_env

    day = datetime.now(UTC).date() - timedelta(days=1)  # its deadline is two days away
    write_logs(tmp_path / "logs", make_events(day, events=200))
    config = configured(tmp_path, readiness='marker = "_SUCCESS"\nwait_hours = 48')
    marker = tmp_path / "logs" / f"ds={day}" / "_SUCCESS"
    script = LOAD_BAG.format(dags=DAGS) + WAIT_THEN_MARK.format(marker=marker, day=day)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                            env={**airflow_env(airflow_home), "FECO_CONFIG": str(config)}, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "success"
    output = result.stdout + result.stderr
    waiting = f"logs for {day} not ready yet: no _SUCCESS in {tmp_path / 'logs' / f'ds={day}'}"
    assert output.count(waiting) >= 2, output[:6000]  # said at each check, not only "Rescheduling"
