"""Delivery after a backfill and its bookkeeping, on incident rows written by hand: one digest for
the backfill and a message apart for each incident still live, a digest that never carries a
message already delivered on its channel, one warning line for a failed channel, a message
the run's deadline kept back that keeps its attempts, and PagerDuty (a strict stand-in,
tests/services.py) triggered for every incident still live and never told to resolve an alert
it was not sent."""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.incidents import SCHEMA
from feco.alerts.notify import notify_alerts
from feco.config import Notify, PagerDutySettings
from feco.warehouse import fetch, open_for_write, publish_day
from services import pagerduty_server

START = date(2026, 5, 4)
DAYS = 14
ROUTING_KEY = "R0UT1NGKEY0123456789abcdefSECRET"  # 32 characters, as PagerDuty's are


def incident_day(ds: date, incident: str, status: str, event: str | None, severity: str = "high") -> dict:
    rank = {"medium": 2, "high": 3, "critical": 4}[severity]
    return {"ds": ds, "incident_id": incident, "feature": f"f_{incident}", "segment_dim": "all", "segment_value": "all",
            "opened_ds": START, "status": status, "severity": severity, "severity_rank": rank, "paged_rank": rank,
            "normal_floor": 0.5, "root_coverage": 0.3, "normal_days": 0, "rows_lost": 100, "headline_alert_id": None,
            "headline_rule": "drop_vs_moving_average", "headline_dim": "all", "headline_value": "all", "alert_ids": [],
            "event": event, "message_id": event and f"{incident}-{event}-{ds}", "detail": f"f_{incident} fell",
            "source": None, "features": [f"f_{incident}"]}


@pytest.fixture
def warehouse(tmp_path):
    """14 days: five incidents open and resolve inside them (ten messages), two open and are
    still live on the last day, one of them escalating (three messages)."""
    days: dict[date, list[dict]] = {START + timedelta(days=i): [] for i in range(DAYS)}
    for number in range(5):
        opened, resolved = START + timedelta(days=2 * number), START + timedelta(days=2 * number + 1)
        days[opened].append(incident_day(opened, f"done{number}", "open", "opened"))
        days[resolved].append(incident_day(resolved, f"done{number}", "resolved", "resolved"))
    days[START + timedelta(days=11)].append(incident_day(START + timedelta(days=11), "live0", "open", "opened"))
    days[START + timedelta(days=12)].append(incident_day(START + timedelta(days=12), "live0", "ongoing", "escalated",
                                                         severity="critical"))
    days[START + timedelta(days=12)].append(incident_day(START + timedelta(days=12), "live1", "open", "opened"))
    for ds in days:  # the live ones carry on to the last day
        if ds == START + timedelta(days=DAYS - 1):
            days[ds] += [incident_day(ds, "live0", "ongoing", None, "critical"), incident_day(ds, "live1", "ongoing", None)]
    return published(tmp_path / "feco.duckdb", days)


def published(path, days: dict[date, list[dict]]):
    with open_for_write(path) as conn:
        for ds, rows in days.items():
            publish_day(conn, ds, {"incidents": pl.DataFrame(rows, schema=SCHEMA, orient="row")})
    return path


def deliver(path, **notify) -> tuple[list[str], list[str], dict]:
    """Deliver after a backfill of the 14 days: (log lines, warnings, counts)."""
    sent, warnings = [], []
    settings = Notify(webhook_url_env=None, **notify)
    with open_for_write(path) as conn:
        counts = notify_alerts(conn, START + timedelta(days=DAYS - 1), settings=settings, echo=sent.append,
                               warn=warnings.append, backfill_from=START)
    return sent, warnings, counts


def test_a_backfill_sends_one_digest_and_a_message_for_each_incident_still_live(warehouse):
    sent, warnings, counts = deliver(warehouse)
    digests = [text for text in sent if text.startswith("feco digest")]
    assert len(digests) == 1 and len(sent) == 3 and not warnings
    assert digests[0].startswith(f"feco digest: 11 incident messages from {START} to ")
    apart = sorted(text for text in sent if not text.startswith("feco digest"))
    assert "[CRITICAL] incident escalated" in apart[0] and "f_live0" in apart[0]  # its latest message
    assert "[HIGH] incident opened" in apart[1] and "f_live1" in apart[1]
    assert counts == {"log": {"delivered": 13, "failed": 0}}
    assert deliver(warehouse)[0] == []  # everything delivered: nothing again


def test_a_digest_never_carries_a_message_already_delivered_on_its_channel(warehouse):
    with open_for_write(warehouse) as conn:
        conn.execute("INSERT INTO page_deliveries SELECT message_id, 'log', 'delivered', 1, now(), NULL "
                     "FROM incidents WHERE incident_id IN ('done0', 'done1') AND event IS NOT NULL")
    sent, _, counts = deliver(warehouse)
    digest = sent[0]
    assert digest.startswith("feco digest: 7 incident messages") and "f_done0" not in digest  # 11 less 4
    assert counts["log"]["delivered"] == 9 and len(sent) == 3


def test_a_failed_channel_warns_once_and_a_message_the_deadline_kept_back_keeps_its_attempts(warehouse, tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")  # the JSON-lines file's folder is a file: every append fails
    _, warnings, counts = deliver(warehouse, jsonl=blocked / "alerts.jsonl")
    assert counts["jsonl"] == {"delivered": 0, "failed": 13} and len(warnings) == 1
    assert warnings[0].startswith("feco: warning: 13 incident message(s) not delivered on jsonl")
    with open_for_write(warehouse) as conn:
        tries = fetch(conn, "SELECT attempts FROM page_deliveries WHERE channel = 'jsonl'")["attempts"]
        assert set(tries) == {1}


def test_messages_the_run_deadline_kept_back_are_not_counted_as_attempts(warehouse, monkeypatch):
    monkeypatch.setenv("FECO_TEST_WEBHOOK", "http://127.0.0.1:9/hook")
    settings = Notify(webhook_url_env="FECO_TEST_WEBHOOK", deadline_seconds=1e-9)
    with open_for_write(warehouse) as conn:
        counts = notify_alerts(conn, START + timedelta(days=DAYS - 1), settings=settings, echo=lambda _: None,
                               warn=lambda _: None)
        rows = fetch(conn, "SELECT attempts, last_error FROM page_deliveries WHERE channel = 'webhook'")
    assert counts["webhook"]["failed"] > 0
    assert set(rows["attempts"]) == {0} and set(rows["last_error"]) == {"not sent: the run's delivery deadline had passed"}


def day(number: int) -> date:
    return START + timedelta(days=number)


@pytest.fixture
def three_incidents(tmp_path):
    """14 days, three incidents: "short" opens on day 1 and resolves on day 3, "escalated"
    opens on day 4, turns critical on day 5 and resolves on day 8, "live" opens on day 10,
    turns critical on day 12 and is still live on day 13, the last."""
    days: dict[date, list[dict]] = {day(i): [] for i in range(DAYS)}
    for number, incident, status, event, severity in [
        (1, "short", "open", "opened", "critical"), (3, "short", "resolved", "resolved", "critical"),
        (4, "escalated", "open", "opened", "high"), (5, "escalated", "ongoing", "escalated", "critical"),
        (8, "escalated", "resolved", "resolved", "critical"),
        (10, "live", "open", "opened", "high"), (12, "live", "ongoing", "escalated", "critical"),
        (13, "live", "ongoing", None, "critical"),
    ]:
        days[day(number)].append(incident_day(day(number), incident, status, event, severity))
    return published(tmp_path / "feco.duckdb", days)


def paging(url: str, monkeypatch) -> Notify:
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    return Notify(webhook_url_env=None, pagerduty=PagerDutySettings(url=url, routing_key_env="FECO_TEST_PD_KEY"))


def pagerduty_statuses(path) -> dict[str, set[tuple[str, int]]]:
    """Each incident's (status, attempts) on the pagerduty channel."""
    with open_for_write(path) as conn:
        rows = fetch(conn, "SELECT incident_id, page_deliveries.status, attempts FROM page_deliveries "
                           "JOIN incidents USING (message_id) WHERE channel = 'pagerduty'")
    statuses: dict[str, set[tuple[str, int]]] = {}
    for incident, status, attempts in rows.iter_rows():
        statuses.setdefault(incident, set()).add((status, attempts))
    return statuses


def test_after_a_backfill_pagerduty_triggers_each_live_incident_and_never_resolves_an_alert_it_was_not_sent(
        three_incidents, monkeypatch):
    sent, counts = [], []
    with pagerduty_server() as service:
        settings = paging(service.url, monkeypatch)
        for _ in range(2):  # the second run finds nothing left to send
            with open_for_write(three_incidents) as conn:
                counts.append(notify_alerts(conn, day(DAYS - 1), settings=settings, echo=sent.append,
                                            warn=pytest.fail, backfill_from=START)["pagerduty"])
    assert service.alerts.unmatched == []  # no resolve for a key PagerDuty had no alert for
    assert service.alerts.events == {"live": ["trigger"]} and service.alerts.open == {"live"}
    assert service.received[0]["payload"]["severity"] == "critical"  # its latest: the escalation
    assert counts == [{"delivered": 2, "failed": 0}, {"delivered": 0, "failed": 0}]  # live's two messages, once
    assert pagerduty_statuses(three_incidents) == {
        "short": {("left_out", 0)}, "escalated": {("left_out", 0)}, "live": {("delivered", 1)}}
    digest = next(text for text in sent if text.startswith("feco digest"))
    assert "f_short" in digest and "f_escalated" in digest  # what PagerDuty was not sent is in the digest


def test_after_an_outage_pagerduty_resolves_what_it_was_sent_and_is_not_sent_what_ended_meanwhile(
        three_incidents, monkeypatch):
    """Day by day: PagerDuty takes "short"'s opening on day 1, then is down until day 9, while
    "short" resolves and "escalated" opens, escalates and resolves."""
    with pagerduty_server() as service:
        up, down = paging(service.url, monkeypatch), paging("http://127.0.0.1:9/v2/enqueue", monkeypatch)
        for number in range(10):
            with open_for_write(three_incidents) as conn:
                notify_alerts(conn, day(number), settings=up if number in (1, 9) else down,
                              echo=lambda _: None, warn=lambda _: None)
    assert service.alerts.unmatched == []
    assert service.alerts.events == {"short": ["trigger", "resolve"]} and service.alerts.open == set()
    statuses = pagerduty_statuses(three_incidents)
    assert statuses["short"] == {("delivered", 1), ("delivered", 7)}  # the resolve failed on days 3 to 8
    # tried while it was live (days 4 to 7), left out once it had resolved (day 8)
    assert statuses["escalated"] == {("left_out", 4), ("left_out", 3), ("left_out", 0)}
