"""PagerDuty, through its Events API v2: an incident is one PagerDuty alert.

Each feco incident is one alert whose ``dedup_key`` is the incident's id: its opening and
each escalation send ``trigger`` (PagerDuty adds an escalation to the open alert), its
resolution ``resolve``. A run sends one event per incident, its latest message (PagerDuty
folds them by key anyway); nothing is digested. PagerDuty accepts a resolve for a key it has
no alert for and does nothing with it, so feco.alerts.notify sends a resolve only for an
incident whose trigger PagerDuty received: one that ended before that (a backfill, an outage)
is left out of PagerDuty, and the other channels carry it (in their digest after a backlog).
A plain line (a failed task) is one ``trigger`` of its own.

Urgency: PagerDuty sets it from the event's ``severity`` by the service's urgency rules; under
"based on severity", critical and error are high urgency, warning and info low. Every feco
incident event is a page (those that page no one go to the daily digest, never to PagerDuty):
a critical incident is sent as critical, any other as error, so each pages someone now; a
plain line is an error too. An incident at low urgency would be sent as warning.

The routing key (the integration key of an Events API v2 integration) is a secret: it comes
from the environment variable the config names or an Airflow connection's password, and
never appears in an error, a log line or the JSON-lines file.
"""

from __future__ import annotations

from feco.alerts.channels import Message, incident_command, report_link
from feco.alerts.channels.http import DeliveryFailed, post_answered
from feco.config import PagerDutySettings

# what PagerDuty's "based on severity" urgency rule reads as high urgency (critical, error) or low
PAGE_SEVERITY = {"critical": "critical"}  # every other tier pages as an error
LOW_URGENCY = "warning"
SUMMARY_CHARACTERS = 1024  # the API's limit on payload.summary


def send(message: Message, *, routing_key: str | None, settings: PagerDutySettings, deadline: float,
         timeout: float) -> None:
    if not routing_key:
        raise DeliveryFailed(f"no PagerDuty routing key (${settings.routing_key_env} or the Airflow connection "
                             f"{settings.airflow_connection or '(none named)'})")
    post_answered(settings.url, event(message, routing_key=routing_key, source=settings.source),
                  deadline=deadline, timeout=timeout, service="pagerduty", secrets=(routing_key,))


def event(message: Message, *, routing_key: str, source: str) -> dict:
    """The Events API v2 event for ``message``: its last row's incident (or a plain line).

    Examples
    --------
    >>> from datetime import date
    >>> row = {"incident_id": "inc-1", "event": "resolved", "ds": date(2026, 11, 20)}
    >>> event(Message("resolved", {}, rows=(row,)), routing_key="k" * 32, source="feco")["event_action"]
    'resolve'
    """
    if not message.rows:
        return {"routing_key": routing_key, "event_action": "trigger",
                "payload": {"summary": message.text[:SUMMARY_CHARACTERS], "source": source, "severity": "error",
                            "class": "feco pipeline", "custom_details": {"message": message.text}}}
    row = message.rows[-1]
    if row["event"] == "resolved":
        return {"routing_key": routing_key, "event_action": "resolve", "dedup_key": row["incident_id"]}
    place = f"{row['segment_dim']}={row['segment_value']}"
    details = {key: row[key] for key in ("feature", "features", "source", "opened_ds", "status", "headline_rule",
                                         "rows_lost", "detail") if row.get(key) not in (None, [])}
    details["urgency"] = row.get("urgency", "high")  # what the severity below asks PagerDuty for
    details["sql"] = incident_command(row)
    trigger = {"routing_key": routing_key, "event_action": "trigger", "dedup_key": row["incident_id"],
               "payload": {"summary": message.text[:SUMMARY_CHARACTERS], "source": source,
                           "severity": severity(row), "component": row["source"] or row["feature"] or "volume",
                           "group": place, "class": row["headline_rule"] or "coverage", "custom_details": details},
               "client": "feco"}
    link = report_link(message.report, row)
    if link:
        trigger["links"] = [{"href": link, "text": "feco report: this feature's trend in its segment"}]
        trigger["client_url"] = message.report
    return trigger


def severity(row: dict) -> str:
    """The event's severity: the one giving the incident's urgency under PagerDuty's "based on
    severity" rule (a page: critical for a critical incident, else error; low urgency: warning).

    Examples
    --------
    >>> severity({"severity": "medium", "urgency": "high"}), severity({"severity": "medium", "urgency": "low"})
    ('error', 'warning')
    """
    if row.get("urgency", "high") == "low":
        return LOW_URGENCY
    return PAGE_SEVERITY.get(row["severity"], "error")
