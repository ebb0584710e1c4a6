"""feco_daily: wait for a finished day's logs, sample them, freeze the coverage reference (once),
count coverage, publish the day (its coverage, the ranker's scores, alerts and incidents, in
one transaction), notify and write the report.

Each run processes the day that ended when it fires: a CronDataIntervalTimetable at 00:00 UTC
gives the run for day D the interval [D, D+1), so it starts at D+1 00:00 with D complete (its
logical date, `ds`, is D). A manual run processes the last finished day, or the `ds` param;
with the `allow_incomplete` param it does not wait, and samples a day whose window hours
lack logs, recording those windows as missing (as `feco run --allow-incomplete`); with the
`as_of` param a logs table is read at that snapshot or version (as `feco run --as-of`).
`wait_for_logs` holds the run until the day's logs are complete (`[readiness]` in the config)
and gives up with one message `readiness.wait_hours` after the day ended.

Thin on purpose: each task calls the function `feco run` calls, through feco_support.run_step;
parsing this file imports only the standard library, pendulum and airflow.sdk. Tasks that
write the warehouse share the pool of one slot, and one run at a time (one DuckDB writer).
A task that fails after its retries sends one message through the alert channels.

Config: the `config` param (default $FECO_CONFIG where the DAG is parsed). First day:
$FECO_START_DATE, with catchup (see feco_support). Logs and samples in object storage:
credentials from the workers' environment, or from the Airflow connection the config's
`[paths] airflow_connection` names. Deployment: docs/airflow.md, docs/lake.md.
"""

from __future__ import annotations

import logging
import os
import sys
from datetime import timedelta

from airflow.sdk import CronDataIntervalTimetable, PokeReturnValue, dag, task

# Airflow puts the DAG folder on sys.path only when it parses through a DAG bundle (the
# dag-processor, `airflow dags test`), not for a plain DagBag (`airflow dags list-import-errors
# --local` without -B, tools that load the file): make this file's own folder importable so
# the helper copied beside it is found whatever the working directory.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.append(HERE)

from feco_support import CATCHUP, COVERAGE, DAILY_PARAMS, START, WAREHOUSE_POOL, retry_settings, run_step, tell_failure

writes = {"pool": WAREHOUSE_POOL}


@dag(
    dag_id="feco_daily",
    schedule=CronDataIntervalTimetable("0 0 * * *", timezone="UTC"),
    start_date=START,
    catchup=CATCHUP,
    max_active_runs=1,
    params=DAILY_PARAMS,
    default_args={**retry_settings(), "execution_timeout": timedelta(hours=2), "on_failure_callback": tell_failure},
    tags=["feco"],
    doc_md=__doc__,
)
def feco_daily():
    @task.sensor(mode="reschedule", poke_interval=300, timeout=timedelta(days=2).total_seconds(),
                 execution_timeout=timedelta(minutes=5))
    def wait_for_logs(*, params=None) -> PokeReturnValue:
        from airflow.sdk.exceptions import AirflowFailException

        if params["allow_incomplete"]:  # a rerun that takes the logs as they are
            return PokeReturnValue(is_done=True, xcom_value="incomplete logs allowed")
        readiness = run_step("check_logs")
        if readiness.overdue:
            raise AirflowFailException(readiness.give_up_line())
        if not readiness.ready:  # else the log says only "Rescheduling"
            logging.getLogger("airflow.task").info(readiness.waiting_line())
        return PokeReturnValue(is_done=readiness.ready, xcom_value=readiness.reason)

    @task(**writes)
    def sample(*, params=None) -> dict:
        return run_step("sample", allow_incomplete=params["allow_incomplete"], as_of=params["as_of"] or None)

    @task(**writes)
    def sample_reference() -> dict:
        return run_step("sample_reference")

    @task(**writes)
    def coverage() -> dict:
        return run_step("compute_coverage")

    @task(outlets=[COVERAGE], **writes)
    def publish(*, outlet_events=None) -> dict:
        published = run_step("publish")
        outlet_events[COVERAGE].extra = {"ds": published["ds"]}
        return published

    @task(execution_timeout=timedelta(minutes=15), **writes)
    def notify(*, params=None) -> dict:
        from feco_support import channel_secrets

        return run_step("notify", secrets=channel_secrets(params["config"] or None))

    @task(**writes)
    def report() -> dict:
        return run_step("report")

    published = wait_for_logs() >> sample() >> sample_reference() >> coverage() >> publish()
    published >> [notify(), report()]


feco_daily()
