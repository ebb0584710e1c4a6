"""feco_daily: sample a day of search logs, count coverage, publish, score, detect, notify.

Thin on purpose: each task imports feco inside its body and calls the same function as the
CLI (`feco run`), with the run's logical date. Parsing this file imports only the standard
library, pendulum and airflow.sdk. One run at a time, since one DuckDB file takes one writer.

Config: $FECO_CONFIG, else configs/feco.toml beside this repository's dags/ folder.
Logs and samples in object storage: credentials from the environment, or from the Airflow
connection named by the config's `[paths] airflow_connection`, exported to the tasks that
read them.
First day: $FECO_START_DATE (YYYY-MM-DD), else 2026-01-01; backfill with
`airflow backfill create --dag-id feco_daily --from-date ... --to-date ...`.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import dag, task

CONFIG = os.environ.get("FECO_CONFIG", str(Path(__file__).resolve().parents[1] / "configs" / "feco.toml"))
START = pendulum.parse(os.environ.get("FECO_START_DATE", "2026-01-01"), tz="UTC")


@dag(
    dag_id="feco_daily",
    schedule="@daily",
    start_date=START,
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=5)},
    tags=["feco"],
    doc_md=__doc__,
)
def feco_daily():
    @task
    def sample(ds: str | None = None) -> dict:
        from feco import tasks

        _use_storage_connection()
        return tasks.sample(ds, CONFIG)

    @task
    def coverage(ds: str | None = None) -> dict:
        from feco import tasks

        _use_storage_connection()
        return tasks.coverage(ds, CONFIG)

    @task
    def publish(ds: str | None = None) -> dict:
        from feco import tasks

        _use_storage_connection()
        return tasks.publish(ds, CONFIG)

    @task
    def score(ds: str | None = None) -> dict:
        from feco import tasks

        _use_storage_connection()
        return tasks.score(ds, CONFIG)

    @task
    def detect(ds: str | None = None) -> dict:
        from feco import tasks

        return tasks.detect(ds, CONFIG)

    @task
    def notify(ds: str | None = None) -> dict:
        from feco import tasks
        from feco.config import load_config

        connection = load_config(CONFIG).alerts.notify.airflow_connection
        return tasks.notify(ds, CONFIG, webhook_url=_webhook_url(connection) if connection else None)

    sample() >> coverage() >> publish() >> score() >> detect() >> notify()


def _use_storage_connection() -> None:
    """Put the object store's credentials from the configured Airflow connection, if any,
    into this task's environment, where feco reads them."""
    from feco.config import load_config
    from feco.storage import credentials_environment

    connection_id = load_config(CONFIG).paths.airflow_connection
    if connection_id:
        from airflow.sdk import BaseHook

        connection = BaseHook.get_connection(connection_id)
        os.environ.update(credentials_environment(login=connection.login, password=connection.password,
                                                  extra=connection.extra_dejson))


def _webhook_url(connection_id: str) -> str:
    """The webhook URL kept in an Airflow connection: its host when that is a full URL
    (as for Slack incoming webhooks), else the connection's URI."""
    from airflow.sdk import BaseHook

    connection = BaseHook.get_connection(connection_id)
    host = connection.host or ""
    return host if host.startswith(("http://", "https://")) else connection.get_uri()


feco_daily()
