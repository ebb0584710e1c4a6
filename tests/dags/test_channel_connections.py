"""feco_daily finds PagerDuty's routing key and the Slack webhook in Airflow connections of the
providers' own types, and a task that fails for good pages both (local stand-ins)."""

import json
from datetime import date

from dags.conftest import DAGS
from dags.test_feco_daily import LOAD_BAG, run_in_airflow
from dags.test_schedule import NAMING_THE_DAY, RUN
from logbuilder import write_config_file
from services import pagerduty_errors, pagerduty_server, slack_error, slack_server

ROUTING_KEY = "R0UT1NGKEY0123456789abcdefSECRET"


def test_a_failed_task_pages_pagerduty_and_slack_with_secrets_from_connections(airflow_home, tmp_path):
    day = date(2026, 1, 8)
    partition = tmp_path / "logs" / f"ds={day}" / "hour=00"
    partition.mkdir(parents=True)
    (partition / "part-0.parquet").write_bytes(b"not parquet")
    (tmp_path / "logs" / f"ds={day}" / "_SUCCESS").touch()
    with pagerduty_server() as paged, slack_server() as chat:
        host, _, path = chat.url.removeprefix("http://").partition("/services/")
        config = write_config_file(tmp_path, readiness='marker = "_SUCCESS"', extra=f"""
            [airflow]
            retries = 0
            [alerts.notify]
            webhook_url_env = "FECO_TEST_NO_WEBHOOK"
            [alerts.notify.pagerduty]
            url = "{paged.url}"
            routing_key_env = "FECO_TEST_NO_KEY"
            airflow_connection = "feco_pagerduty"
            [alerts.notify.slack]
            webhook_url_env = "FECO_TEST_NO_SLACK"
            airflow_connection = "feco_slack"
        """)
        state = run_in_airflow(
            airflow_home, LOAD_BAG.format(dags=DAGS) + RUN.format(how=NAMING_THE_DAY.format(day=day)),
            FECO_CONFIG=str(config),
            AIRFLOW_CONN_FECO_PAGERDUTY=json.dumps({"conn_type": "pagerduty_events", "password": ROUTING_KEY}),
            AIRFLOW_CONN_FECO_SLACK=json.dumps({"conn_type": "slackwebhook", "schema": "http",
                                                "host": f"{host}/services", "password": path}))
    assert state == "failed"
    [event], [message] = paged.received, chat.received
    assert pagerduty_errors(event) == [] and event["routing_key"] == ROUTING_KEY
    assert event["payload"]["summary"].startswith(f"feco: feco_daily.sample failed for {day} (try 1): ")
    assert slack_error(message) is None and message["text"] == event["payload"]["summary"]
