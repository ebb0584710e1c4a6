"""PagerDuty and Slack channels against local stand-ins that check each payload against the
service's documented schema and answer as the service does (tests/services.py)."""

import json
import time
from datetime import date

import pytest
from alerts.test_pipeline_alerts import INCIDENT, RESOLVED, deliveries, with_notify
from alerts.test_pipeline_alerts import config, published  # noqa: F401 - fixtures: one incident, nothing sent
from services import (
    RATE_LIMITED,
    pagerduty_errors,
    pagerduty_server,
    slack_error,
    slack_server,
)

from feco import tasks
from feco.alerts.channels import Message, pagerduty, slack
from feco.config import PagerDutySettings, SlackSettings

ROUTING_KEY = "R0UT1NGKEY0123456789abcdefSECRET"  # 32 characters, as PagerDuty's are


def with_channels(config, pagerduty_url=None, **notify):
    channels = {"webhook_url_env": None, **notify}
    if pagerduty_url:
        channels["pagerduty"] = PagerDutySettings(url=pagerduty_url, routing_key_env="FECO_TEST_PD_KEY")
    return with_notify(config, **channels)


def everything_printed(config, capsys) -> str:
    jsonl = config.paths.warehouse.parent / "alerts.jsonl"
    out = capsys.readouterr()
    stored = deliveries(config).write_json()
    return out.out + out.err + (jsonl.read_text() if jsonl.exists() else "") + stored


def test_pagerduty_triggers_on_open_and_resolves_on_resolve_keyed_by_the_incident(config, monkeypatch, capsys):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        paging = with_channels(config, service.url)
        assert tasks.notify(INCIDENT, paging)["pagerduty"] == {"delivered": 1, "failed": 0}
        assert tasks.notify(RESOLVED, paging)["pagerduty"] == {"delivered": 1, "failed": 0}
        assert tasks.notify(RESOLVED, paging)["pagerduty"] == {"delivered": 0, "failed": 0}  # nothing twice
    trigger, resolve = service.received
    incident_id = deliveries(config).join(
        tasks_incidents(config), on="message_id").filter(channel="pagerduty")["incident_id"].unique().item()
    assert (trigger["event_action"], trigger["dedup_key"]) == ("trigger", incident_id)
    assert (resolve["event_action"], resolve["dedup_key"]) == ("resolve", incident_id)
    assert trigger["payload"]["severity"] == "critical"  # the incident is critical
    assert trigger["payload"]["group"] == "region=DE" and trigger["payload"]["component"] == "f_sparse"
    assert "f_sparse in region=DE" in trigger["payload"]["summary"]
    assert trigger["payload"]["custom_details"]["sql"].startswith("feco query ")
    assert all(pagerduty_errors(event) == [] for event in service.received)
    assert ROUTING_KEY not in everything_printed(config, capsys)


def tasks_incidents(config):
    import duckdb

    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return conn.sql("SELECT message_id, incident_id FROM incidents WHERE message_id IS NOT NULL").pl()


def test_a_backlog_sends_pagerduty_one_event_per_incident_its_latest(config, monkeypatch):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        assert tasks.notify(RESOLVED, with_channels(config, service.url, digest_after=1))["pagerduty"] == {
            "delivered": 2, "failed": 0}  # the opening and the resolution, one event
    assert [event["event_action"] for event in service.received] == ["resolve"]


def test_a_rate_limit_is_waited_out_when_its_retry_after_fits_the_deadline(config, monkeypatch):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        service.planned = [RATE_LIMITED]  # Retry-After: 1
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 1, "failed": 0}
    assert len(service.received) == 2 and service.times[1] - service.times[0] >= 1.0
    assert service.received[0] == service.received[1]


def test_a_rate_limit_past_the_deadline_is_recorded_and_the_next_run_sends_it(config, monkeypatch, capsys):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        service.planned = [(429, {"Retry-After": "120"}, "{}")]
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 0, "failed": 1}
        [error] = deliveries(config).filter(channel="pagerduty")["last_error"]
        assert error == "pagerduty answered HTTP 429 (rate limited; it asked for 120 s, past the run's delivery deadline)"
        assert "the next run tries again" in capsys.readouterr().err
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 1, "failed": 0}
    assert deliveries(config).filter(channel="pagerduty")["attempts"].to_list() == [2]


def test_a_payload_the_service_refuses_is_recorded_as_rejected_and_not_sent_again(config, monkeypatch, capsys):
    short_key = "SHORTSECRETKEY"  # PagerDuty's keys have 32 characters: its schema check answers 400
    monkeypatch.setenv("FECO_TEST_PD_KEY", short_key)
    with pagerduty_server() as service:
        paging = with_channels(config, service.url)
        assert tasks.notify(INCIDENT, paging)["pagerduty"] == {"delivered": 0, "failed": 1}
        assert tasks.notify(INCIDENT, paging)["pagerduty"] == {"delivered": 0, "failed": 0}
    assert len(service.received) == 1  # not retried
    [row] = deliveries(config).filter(channel="pagerduty").iter_rows(named=True)
    assert row["status"] == "rejected" and row["attempts"] == 1
    assert row["last_error"] == ("pagerduty refused the message as invalid (HTTP 400: Length of 'routing_key' is "
                                 "incorrect (should be 32 characters)); not sent again")
    printed = everything_printed(config, capsys)
    assert "not sent again" in printed and short_key not in printed


def test_a_missing_routing_key_is_a_recorded_failure_that_names_where_it_was_looked_for(config, monkeypatch):
    monkeypatch.delenv("FECO_TEST_PD_KEY", raising=False)
    with pagerduty_server() as service:
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 0, "failed": 1}
    assert service.received == []
    assert deliveries(config).filter(channel="pagerduty")["last_error"].item().startswith(
        "no PagerDuty routing key ($FECO_TEST_PD_KEY")


def test_slack_gets_a_formatted_message_with_segment_figures_report_and_sql(config, monkeypatch, capsys):
    with slack_server() as service:
        monkeypatch.setenv("FECO_TEST_SLACK", service.url)
        messaging = with_channels(config, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"),
                                  report="https://feco.example.com/report/index.html")
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 2, "failed": 0}
    opened, resolved = service.received
    assert all(slack_error(message) is None for message in service.received)
    header, detail, fields, sql, link = opened["blocks"]
    assert header["text"]["text"] == ":red_circle: CRITICAL: incident opened · f_sparse in region=DE"
    assert "f_sparse" in detail["text"]["text"] and "%" in detail["text"]["text"]  # the figures
    assert {"*Segment*\nregion=DE", "*Severity*\ncritical"} <= {f["text"] for f in fields["fields"]}
    assert "feco query \"SELECT ds, feature" in sql["text"]["text"] and "segment_value = 'DE'" in sql["text"]["text"]
    assert link["elements"][0]["text"] == ("<https://feco.example.com/report/index.html#trend/f_sparse/region/DE|"
                                           "Open the report at this trend>")
    assert resolved["blocks"][0]["text"]["text"].startswith(":red_circle: CRITICAL: incident resolved")
    assert opened["text"].startswith(f"{INCIDENT} [CRITICAL] incident opened")  # the notification's fallback
    assert "SLACKSECRET" not in everything_printed(config, capsys)


def test_slack_gets_a_digest_as_one_formatted_message(config, monkeypatch):
    with slack_server() as service:
        monkeypatch.setenv("FECO_TEST_SLACK", service.url)
        messaging = with_channels(config, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"), digest_after=1)
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 2, "failed": 0}
    [digest] = service.received
    assert slack_error(digest) is None
    assert digest["blocks"][0]["text"]["text"].startswith("feco digest: 2 incident messages")
    assert "[CRITICAL] f_sparse in region=DE" in digest["blocks"][1]["text"]["text"]


def test_slack_answers_are_honoured_a_429_waited_out_and_a_400_not_retried(config, monkeypatch):
    with slack_server() as service:
        monkeypatch.setenv("FECO_TEST_SLACK", service.url)
        messaging = with_channels(config, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"))
        service.planned = [(429, {"Retry-After": "1"}, "rate_limited"), (400, {}, "invalid_payload")]
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 1, "failed": 1}
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 0, "failed": 0}
    assert len(service.received) == 3  # the opening twice (429, then 200 after a second); the resolution once
    statuses = dict(deliveries(config).filter(channel="slack").select("status", "last_error").iter_rows())
    assert statuses == {"delivered": None,
                        "rejected": "slack refused the message as invalid (HTTP 400: invalid_payload); not sent again"}


SOURCE_OUTAGE = {
    "ds": date(2026, 3, 12), "event": "opened", "message_id": "m1", "incident_id": "inc-engagement-DE",
    "feature": "eng_ctr_7d", "segment_dim": "region", "segment_value": "DE", "opened_ds": date(2026, 3, 12),
    "status": "open", "severity": "high", "severity_rank": 3, "paged_rank": 3, "headline_rule": "drop",
    "headline_dim": "region", "headline_value": "DE", "rows_lost": 12345, "source": "engagement",
    "features": ["eng_ctr_7d", "eng_ctr_30d", "eng_views_7d"],
    "detail": "engagement: 3 of 8 features in region=DE (eng_ctr_7d, eng_ctr_30d, eng_views_7d); coverage 41.0% "
              "against 78.2% expected",
}


@pytest.mark.parametrize("event", ["opened", "escalated", "resolved"])
def test_a_source_outage_reads_well_in_slack_and_keys_one_pagerduty_alert(event):
    row = SOURCE_OUTAGE | {"event": event}
    message = Message("line", {}, rows=(row,), report="https://feco.example.com/report/")
    blocks = slack.payload(message)["blocks"]
    assert slack_error(slack.payload(message)) is None
    features = next(b for b in blocks if "failed together" in b.get("text", {}).get("text", ""))
    assert features["text"]["text"] == ("*engagement*: 3 features failed together: `eng_ctr_7d`, `eng_ctr_30d`, "
                                        "`eng_views_7d`")
    assert "feature IN ('eng_ctr_7d', 'eng_ctr_30d', 'eng_views_7d')" in json.dumps(blocks)
    paged = pagerduty.event(message, routing_key=ROUTING_KEY, source="feco")
    assert pagerduty_errors(paged) == []
    assert paged["dedup_key"] == "inc-engagement-DE"
    assert paged["event_action"] == ("resolve" if event == "resolved" else "trigger")
    if event != "resolved":
        assert paged["payload"]["severity"] == "error" and paged["payload"]["component"] == "engagement"
        assert paged["links"][0]["href"] == "https://feco.example.com/report/#trend/eng_ctr_7d/region/DE"


@pytest.mark.parametrize(("severity", "mapped"), [("critical", "critical"), ("high", "error"), ("medium", "warning"),
                                                  ("low", "info")])
def test_severity_maps_to_pagerdutys_four_levels(severity, mapped):
    message = Message("line", {}, rows=(SOURCE_OUTAGE | {"severity": severity},))
    assert pagerduty.event(message, routing_key=ROUTING_KEY, source="feco")["payload"]["severity"] == mapped


def test_a_plain_line_reaches_pagerduty_and_slack_as_well(monkeypatch):
    from feco.alerts.notify import send_message
    from feco.config import Notify

    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as paged, slack_server() as chat:
        settings = Notify(webhook_url_env=None, pagerduty=PagerDutySettings(url=paged.url, routing_key_env="FECO_TEST_PD_KEY"),
                          slack=SlackSettings(webhook_url_env=None))
        started = time.monotonic()
        result = send_message("feco: feco_daily.sample failed for 2026-11-20 (try 3)", settings=settings,
                              secrets={"slack": chat.url}, echo=lambda _: None)
    assert result == {"log": "delivered", "pagerduty": "delivered", "slack": "delivered"}
    assert paged.received[0]["event_action"] == "trigger" and "dedup_key" not in paged.received[0]
    assert chat.received == [{"text": "feco: feco_daily.sample failed for 2026-11-20 (try 3)"}]
    assert time.monotonic() - started < settings.timeout_seconds
