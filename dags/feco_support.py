"""What feco's DAGs share: the day a run processes, the config param, the coverage asset,
the warehouse's writer pool and the message sent when a task fails for good.

Airflow glue only; the work is in `feco.tasks`, imported inside functions so that parsing a
DAG file imports only the standard library and airflow.sdk. Copy this file with the DAGs.
"""

from __future__ import annotations

import os
import tomllib
from datetime import date, timedelta

import pendulum
from airflow.sdk import Asset, Param, get_current_context

# Published when feco_daily has replaced a day's coverage in the warehouse; the ranker DAG
# is scheduled on it, so it trains after fresh data instead of colliding at midnight.
COVERAGE = Asset(name="feco_coverage", uri="feco://warehouse/coverage")

# Every task that writes the warehouse runs in this pool of one slot (create it once:
# `airflow pools set feco_warehouse 1 "feco: one writer of the DuckDB warehouse"`), so the
# scheduler never starts two writers; feco's file lock is the second line of defence.
WAREHOUSE_POOL = os.environ.get("FECO_POOL", "feco_warehouse")

# The first day to process. With FECO_START_DATE set, Airflow runs every finished day since
# (catchup, one at a time); without it, only the latest finished day.
START = pendulum.parse(os.environ.get("FECO_START_DATE", "2026-01-01"), tz="UTC")
CATCHUP = os.environ.get("FECO_CATCHUP", str("FECO_START_DATE" in os.environ)).lower() in ("1", "true", "yes")


def retry_settings() -> dict:
    """`retries` and `retry_delay` for every task, from the `[airflow]` table of $FECO_CONFIG
    (2 and 5 minutes when it is absent). Read with tomllib, not feco, so parsing stays light;
    feco validates the same keys when it loads the config. A wrong type fails the parse with a
    message naming the key, rather than leaving the defaults in place unnoticed."""
    path = os.environ.get("FECO_CONFIG")
    table = {}
    if path and os.path.isfile(path):
        with open(path, "rb") as file:
            table = tomllib.load(file).get("airflow", {})
    retries, delay = table.get("retries", 2), table.get("retry_delay_minutes", 5)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"{path}: key 'airflow.retries' must be a whole number >= 0, not {retries!r}")
    if not isinstance(delay, (int, float)) or isinstance(delay, bool) or delay < 0:
        raise ValueError(f"{path}: key 'airflow.retry_delay_minutes' must be a number >= 0, not {delay!r}")
    return {"retries": retries, "retry_delay": timedelta(minutes=delay)}


PARAMS = {
    "config": Param(os.environ.get("FECO_CONFIG", ""), type="string",
                    description="feco config file; empty: $FECO_CONFIG on the worker, else configs/feco.toml"),
    "ds": Param("", type="string",
                description="day to process, YYYY-MM-DD; empty: the day that ended when the run's data interval did"),
}
# feco_daily's own: a rerun that takes a day's logs as they are (`feco run --allow-incomplete`),
# and one that reads a logs table as a day read it before (`feco run --as-of`).
DAILY_PARAMS = PARAMS | {
    "allow_incomplete": Param(False, type="boolean",
                              description="take the day's logs as they are: no wait, and a window whose hours have "
                                          "no logs is recorded as missing (default: wait, then refuse the day)"),
    "as_of": Param("", type="string",
                   description="logs in an Iceberg or Delta table: read it at this snapshot id or version "
                               "(sample_windows.table_version of an earlier run); empty: as it is now"),
}


def day_of_run(context) -> date:
    """The day a run processes: the `ds` param, else the last day fully ended by the end of
    the run's data interval (for `@daily`-style timetables, the day before the run fires)."""
    from feco.tasks import as_date, finished_day

    if context["params"].get("ds"):
        return as_date(context["params"]["ds"])
    return finished_day(context.get("data_interval_end") or context["dag_run"].run_after)


def run_config(context) -> str | None:
    return context["params"].get("config") or None


def run_step(step: str, **options) -> dict:
    """Call `feco.tasks.<step>` for this run's day and config: what every task body does."""
    from feco import tasks

    context = get_current_context()
    use_storage_connection(run_config(context))
    return getattr(tasks, step)(day_of_run(context), run_config(context), **options)


def use_storage_connection(config: str | None) -> None:
    """Put the object store's credentials from the Airflow connection the config names
    (`[paths] airflow_connection`), if any, into this task's environment, where feco reads them."""
    from feco.storage import credentials_environment
    from feco.tasks import as_config

    connection_id = as_config(config).paths.airflow_connection
    if connection_id:
        from airflow.sdk import BaseHook

        connection = BaseHook.get_connection(connection_id)
        os.environ.update(credentials_environment(login=connection.login, password=connection.password,
                                                  extra=connection.extra_dejson))


def tell_failure(context) -> None:
    """on_failure_callback: one message per task that failed after its retries."""
    from feco import tasks

    ti = context["ti"]
    try:
        day = day_of_run(context).isoformat()
    except Exception:  # noqa: BLE001 - a bad `ds` param is itself the failure being reported
        day = context["params"].get("ds", "?")
    error = (str(context.get("exception") or "").strip().splitlines() or ["no error text"])[0][:300]
    text = f"feco: {ti.dag_id}.{ti.task_id} failed for {day} (try {ti.try_number}): {error} | log: {ti.log_url}"
    config = run_config(context)
    tasks.send_message(text, config, secrets=channel_secrets(config))


def channel_secrets(config: str | None) -> dict[str, str]:
    """The alert channels' secrets from the Airflow connections the config names, by channel:
    the webhook URL (`[alerts.notify] airflow_connection`: its host when that is a full URL,
    as for Slack incoming webhooks, else the connection's URI), PagerDuty's routing key (the
    `[alerts.notify.pagerduty]` connection's password, as the PagerDuty provider's
    `pagerduty_events` connection holds its integration key) and the Slack webhook URL (the
    `[alerts.notify.slack]` connection as the Slack provider's `slackwebhook` one: its password
    a full URL, or the path after its host, by default https://hooks.slack.com/services)."""
    from feco.tasks import as_config

    notify = as_config(config).alerts.notify
    found = {}
    if notify.airflow_connection:
        connection = _connection(notify.airflow_connection)
        host = connection.host or ""
        found["webhook"] = host if host.startswith(("http://", "https://")) else connection.get_uri()
    if notify.pagerduty and notify.pagerduty.airflow_connection:
        found["pagerduty"] = _connection(notify.pagerduty.airflow_connection).password
    if notify.slack and notify.slack.airflow_connection:
        found["slack"] = _slack_url(_connection(notify.slack.airflow_connection))
    return {channel: secret for channel, secret in found.items() if secret}


def _connection(connection_id: str):
    from airflow.sdk import BaseHook

    return BaseHook.get_connection(connection_id)


def _slack_url(connection) -> str | None:
    token = (connection.password or "").strip()
    if not token or token.startswith(("http://", "https://")):
        return token or None
    host = (connection.host or "hooks.slack.com/services").rstrip("/")
    if "://" not in host:
        host = f"{connection.schema or 'https'}://{host}"
    return f"{host}/{token.lstrip('/')}"
