"""Delivery after a backfill and its bookkeeping, on incident rows written by hand: one digest for
the backfill and a message apart for each incident still live, a digest that never carries a
message already delivered on its channel, one warning line for a failed channel, and a
message the run's deadline kept back that keeps its attempts."""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.incidents import SCHEMA
from feco.alerts.notify import notify_alerts
from feco.config import Notify
from feco.warehouse import fetch, open_for_write, publish_day

START = date(2026, 5, 4)
DAYS = 14


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
    path = tmp_path / "feco.duckdb"
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
