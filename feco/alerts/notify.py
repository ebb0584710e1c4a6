"""Delivery of incident messages: a line on stdout (the task log), a JSON-lines file, a
webhook, PagerDuty and Slack (feco.alerts.channels).

A message is due when an incident opens, escalates or resolves (see feco.alerts.incidents):
a page, at high urgency. An incident that pages no one (too mild, too small a segment, a
cross, an age band, too little history) is low urgency: it is listed in the day's one daily
digest on every channel but PagerDuty (``[alerts.notify] daily_digest``), sent once however
often the day runs. Every attempt is recorded per message and channel in ``page_deliveries``;
a message not delivered (a service that was down) is tried again by the next run, for
``RETRY_DAYS``, unless the service refused it as invalid (HTTP 400 from PagerDuty or Slack:
recorded as ``rejected``, not sent again). When more than
``digest_after`` messages are pending on a channel (after a backfill or an outage) they go as
one digest; PagerDuty instead gets one event per incident, its latest, but never a resolve for
an alert it was not sent: an incident that ended before PagerDuty received its trigger is left
out of PagerDuty (recorded as ``left_out``) and reaches people on the other channels, in their
digest after a backlog.

No service can hold a run: each request has one overall deadline (connect, send and answer
together, not per socket read) and the run's whole delivery another. Messages go one after
another, in order (an incident's opening before its resolution). URLs and keys are secrets:
they come from the environment or the caller, only http(s) is accepted, and no part of them
appears in a stored error or any output. Segment values and feature names in a message come
from the logs: each channel escapes them for where they are read (the log line's control
characters as escapes, Slack's mrkdwn in Slack and the Slack-compatible webhook's text, a shell
for the suggested command).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import duckdb
import polars as pl

from feco.alerts.channels import Message, pagerduty, slack
from feco.alerts.channels.http import DeliveryFailed, NotSent, Rejected, post_json, read_secret_url
from feco.alerts.incidents import describe_place
from feco.alerts.oncall import quieted
from feco.alerts.severity import SEVERITY_NAME
from feco.cli.options import visible
from feco.config import Notify
from feco.warehouse import named_query

RETRY_DAYS = 7
SEVERITY_MARK = {"critical": "[CRITICAL]", "high": "[HIGH]", "medium": "[MEDIUM]", "low": "[low]"}
TOP_IN_DIGEST = 5
PAYLOAD_FIELDS = ("ds", "event", "message_id", "incident_id", "feature", "segment_dim", "segment_value", "opened_ds",
                  "status", "severity", "severity_rank", "paged_rank", "headline_rule", "headline_dim", "headline_value",
                  "rows_lost", "detail", "source", "features")
__all__ = ["DeliveryFailed", "Message", "NotSent", "notify_alerts", "post_json", "read_webhook_url", "send_message"]


@dataclass(frozen=True)
class Channel:
    send: Callable[[Message], None]
    per_incident: bool = False  # one message per incident, its latest, instead of digests


def notify_alerts(
    conn: duckdb.DuckDBPyConnection,
    ds: date,
    *,
    settings: Notify,
    webhook_url: str | None = None,
    secrets: dict[str, str | None] | None = None,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    backfill_from: date | None = None,
    sources: dict[str, list[str]] | None = None,
) -> dict[str, dict[str, int]]:
    """Deliver the incident messages of ``ds`` and the days before it that are still pending.

    ``webhook_url`` overrides the environment variable named in ``settings``, and ``secrets``
    the variables of any channel (``webhook``, ``pagerduty``, ``slack``: the DAG passes those
    read from Airflow connections). After a backfill from ``backfill_from`` to ``ds``
    the pending messages of the whole backfill go as one digest, and the latest message of
    each incident still live on ``ds`` goes apart (someone has to act on it). PagerDuty gets
    each incident's latest message, unless that is a resolve for an alert it was never sent:
    then the incident is left out of it. A channel whose delivery failed gets one ``warn`` line
    (default: standard error). Returns counts of messages delivered and failed per channel; a
    digest counts every message it carries, and a message left out of PagerDuty counts in neither.

    A message that people on call quieted (feco.alerts.oncall: a silence or a snooze in
    force, an acknowledged incident's escalation; ``sources``, each upstream source's features,
    for a silence of a source) is not sent but recorded, with why, and counts in neither.

    Examples
    --------
    After the detect step stored the day's incidents (not run as a doctest: it needs a warehouse)::

        with open_configured(config) as conn:
            notify_alerts(conn, date(2026, 11, 16), settings=config.alerts.notify)
        # {'log': {'delivered': 2, 'failed': 0}}
    """
    deadline = time.monotonic() + settings.deadline_seconds
    since = min(ds, backfill_from or ds) - timedelta(days=RETRY_DAYS)
    live = _live_incidents(conn, ds) if backfill_from is not None else None
    counts = {}
    secrets = {"webhook": webhook_url} | (secrets or {})
    for channel, route in _channels(settings, secrets, echo, deadline).items():
        pending = _not_quieted(conn, named_query(conn, "pending_pages", {"channel": channel, "since": since,
                                                                         "until": ds}), channel, sources)
        counts[channel] = {"delivered": 0, "failed": 0}
        errors = []
        outbox, left_out = (_per_incident(pending, settings) if route.per_incident
                            else (_outbox(pending, settings, live_apart=live), []))
        _record(conn, pending.filter(pl.col("message_id").is_in(left_out)), channel, left_out=True)
        for ids, message in outbox:  # in order: an opening before its resolution
            error = _attempt(route.send, message)
            counts[channel]["failed" if error else "delivered"] += len(ids)
            if error:
                errors.append(error)
            # recorded at once, so a run killed mid-delivery sends again only what was in flight
            _record(conn, pending.filter(pl.col("message_id").is_in(ids)), channel, error)
        if settings.daily_digest and not route.per_incident:  # PagerDuty receives pages only
            errors += _send_daily_digest(conn, ds, channel, route.send, report=settings.report)
        if errors:
            again = "not sent again" if all(isinstance(e, Rejected) for e in errors) else "the next run tries again"
            (warn or _warn)(f"feco: warning: {counts[channel]['failed']} incident message(s) not delivered on {channel} "
                            f"({errors[0]}); {again}")
    return counts


def _not_quieted(conn, pending: pl.DataFrame, channel: str, sources) -> pl.DataFrame:
    """``pending`` without what people on call quieted, which is recorded (status and why) instead."""
    quiet = quieted(conn, pending, now=datetime.now(UTC), sources=sources)
    for message_id, status, note in quiet.iter_rows():
        conn.execute("INSERT OR REPLACE INTO page_deliveries VALUES ($id, $channel, $status, $attempts, now(), $note)",
                     {"id": message_id, "channel": channel, "status": status, "note": note,
                      "attempts": pending.filter(message_id=message_id)["attempts"].item()})
    return pending.join(quiet, on="message_id", how="anti")


def _warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _live_incidents(conn: duckdb.DuckDBPyConnection, ds: date) -> set[str]:
    return set(named_query(conn, "live_incidents", {"ds": ds}).get_column("incident_id").to_list())


def send_message(
    text: str,
    *,
    settings: Notify,
    webhook_url: str | None = None,
    secrets: dict[str, str | None] | None = None,
    echo: Callable[[str], None] = print,
) -> dict[str, str]:
    """Send one plain text message (not an incident) through the same channels.

    The log gets the line, the JSON-lines file a record with a "message" key, the webhook and
    Slack a POST of ``{"text": text}``, PagerDuty a trigger of its own. Returns ``{channel: "delivered" | "failed"}``; a delivery
    failure is never raised (a URL that is not http(s) is a ConfigError).

    Examples
    --------
    With the log as the only channel (no JSON-lines file, no webhook):

    >>> from feco.config import Notify
    >>> send_message("feco_daily failed on 2026-11-16", settings=Notify(webhook_url_env=None))
    feco_daily failed on 2026-11-16
    {'log': 'delivered'}
    """
    deadline = time.monotonic() + settings.timeout_seconds
    channels = _channels(settings, {"webhook": webhook_url} | (secrets or {}), echo, deadline)
    message = Message(text, {"message": text, "at": datetime.now(UTC).isoformat()})
    return {channel: "failed" if _attempt(route.send, message) else "delivered" for channel, route in channels.items()}


def read_webhook_url(settings: Notify, override: str | None = None) -> str | None:
    """The webhook URL from the caller or the environment, checked to be http(s) (a bad one is
    a ConfigError that never shows it)."""
    return read_secret_url(settings.webhook_url_env, override)


def _channels(settings: Notify, secrets: dict[str, str | None], echo, deadline: float) -> dict[str, Channel]:
    """The configured channels; one whose secret is missing still runs, and records why it failed."""
    timeout = settings.timeout_seconds
    # read in a terminal or a task log: a plain line's text may quote anything (an error's)
    channels = {"log": Channel(lambda message: echo("\n".join(map(visible, message.text.split("\n")))))}
    if settings.jsonl is not None:
        channels["jsonl"] = Channel(lambda message: _append_jsonl(settings.jsonl, message.record))
    url = read_webhook_url(settings, secrets.get("webhook"))
    if url:
        # Slack-compatible: its "text" is mrkdwn where it lands in Slack; "feco" keeps the values as they are
        channels["webhook"] = Channel(lambda message: post_json(
            url, {"text": slack.escape(message.text)} | ({"feco": message.attachment} if message.attachment else {}),
            deadline=deadline, timeout=timeout))
    if settings.pagerduty is not None:
        key = (secrets.get("pagerduty") or _environment(settings.pagerduty.routing_key_env) or "").strip() or None
        channels["pagerduty"] = Channel(lambda message: pagerduty.send(
            message, routing_key=key, settings=settings.pagerduty, deadline=deadline, timeout=timeout),
            per_incident=True)
    if settings.slack is not None:
        slack_url = read_secret_url(settings.slack.webhook_url_env, secrets.get("slack"), what="Slack webhook URL")
        channels["slack"] = Channel(lambda message: _to_slack(message, slack_url, settings.slack, deadline, timeout))
    return channels


def _to_slack(message: Message, url: str | None, settings, deadline: float, timeout: float) -> None:
    if not url:
        raise DeliveryFailed(f"no Slack webhook URL (${settings.webhook_url_env} or the Airflow connection "
                             f"{settings.airflow_connection or '(none named)'})")
    slack.send(message, url=url, deadline=deadline, timeout=timeout)


def _environment(variable: str | None) -> str | None:
    return os.environ.get(variable) if variable else None


def _attempt(send: Callable[[Message], None], message: Message) -> DeliveryFailed | None:
    """None when delivered, else what failed (safe to store: no part of the URL)."""
    try:
        send(message)
        return None
    except DeliveryFailed as failure:
        return failure
    except Exception as error:  # noqa: BLE001 - a failed delivery is a status, never a crash
        # only the kind of failure: an exception's own text may quote the URL
        reason = getattr(error, "strerror", None)
        return DeliveryFailed(type(error).__name__ + (f": {reason}" if isinstance(reason, str) else ""))


def _outbox(pending: pl.DataFrame, settings: Notify,
            live_apart: set[str] | None = None) -> list[tuple[list[str], Message]]:
    """(message ids, message) to send: one per pending message, or, when there are more than
    ``digest_after``, one digest for them, but for the latest message of each incident in
    ``live_apart`` (after a backfill: the incidents still live), which goes on its own."""
    rows = list(pending.iter_rows(named=True))
    if len(rows) <= settings.digest_after:
        return [_single(row, settings.report) for row in rows]
    apart = {row["incident_id"]: row for row in rows if row["incident_id"] in (live_apart or set())}
    digested = [row for row in rows if apart.get(row["incident_id"]) is not row]
    outbox = []
    if digested:
        payload = _digest_payload(digested, settings)
        outbox.append(([row["message_id"] for row in digested],
                       Message(digest_text(digested, settings.report), payload, payload,
                               rows=tuple(_latest_per_incident(digested)), digest=True, report=settings.report)))
    return outbox + [_single(row, settings.report) for row in apart.values()]


def _send_daily_digest(conn, ds: date, channel: str, send: Callable[[Message], None], *,
                       report: str | None) -> list[DeliveryFailed]:
    """Send ``ds``'s daily digest on the channel unless it went already: the incidents live that
    day that page no one, at low urgency. The errors of the attempt ([] when delivered or not due)."""
    message_id = f"daily-digest-{ds}"
    rows = named_query(conn, "daily_digest", {"ds": ds, "channel": channel, "message_id": message_id}).to_dicts()
    if not rows or rows[0]["sent"]:
        return []
    payload = {"daily_digest": True, "ds": ds, "urgency": "low", "report": report,
               "incidents": [{k: row[k] for k in PAYLOAD_FIELDS} | {"not_paged": row["not_paged"]} for row in rows]}
    message = Message(daily_digest_text(ds, rows, report), payload, payload, rows=tuple(rows), digest=True,
                      report=report)
    error = _attempt(send, message)
    _record(conn, pl.DataFrame({"message_id": [message_id], "attempts": [rows[0]["attempts"]]}), channel, error)
    return [error] if error else []


def daily_digest_text(ds: date, rows: list[dict], report: str | None) -> str:
    """The daily digest: a line for each incident that pages no one (why not), where the report is."""
    many = len(rows) > 1
    lines = [f"feco daily digest, {ds}: {len(rows)} live incident{'s' * many} that page{'s' * (not many)} no one "
             "(low urgency)"]
    lines += [visible(f"  {SEVERITY_MARK.get(r['severity'], r['severity'])} {describe_place(r)}: {r['status']}, "
                      f"opened {r['opened_ds']}" + (f"; {r['not_paged']}" if r["not_paged"] else "")) for r in rows]
    if report:
        lines.append(f"report: {report}")
    return "\n".join(lines)


def _per_incident(pending: pl.DataFrame,
                  settings: Notify) -> tuple[list[tuple[list[str], Message]], list[str]]:
    """(outbox, ids left out) for a service that keeps one alert per incident and folds its
    events by key: each incident's latest pending message, carrying the ids of all its pending
    ones, in the order of the latest. An incident whose latest message is its resolution and
    that the service never received a trigger of is left out: a resolve alone opens nothing,
    and a trigger now would page someone for an incident already over."""
    ids: dict[str, list[str]] = {}
    latest: dict[str, dict] = {}
    for row in pending.iter_rows(named=True):
        ids.setdefault(row["incident_id"], []).append(row["message_id"])
        latest.pop(row["incident_id"], None)  # re-inserted: in the order of each incident's latest
        latest[row["incident_id"]] = row
    outbox, left_out = [], []
    for incident, row in latest.items():
        if row["event"] == "resolved" and not row["triggered"]:
            left_out += ids[incident]
        else:
            outbox.append((ids[incident], _single(row, settings.report)[1]))
    return outbox, left_out


def _single(row: dict, report: str | None) -> tuple[list[str], Message]:
    payload = {k: row[k] for k in PAYLOAD_FIELDS} | {"urgency": "high"}  # an incident's own message is a page
    return [row["message_id"]], Message(page_text(row), payload | {"text": page_text(row)}, payload,
                                        rows=(row,), report=report)


def page_text(row: dict) -> str:
    """One line: the day, the severity, what happened to which incident (a control character
    of a value from the logs, a line break too, written as an escape)."""
    # what is paged: the headline's severity for an opening or escalation, the peak at the end
    severity = row["severity"] if row["event"] == "resolved" else SEVERITY_NAME[row["paged_rank"]]
    mark = SEVERITY_MARK.get(severity, severity)
    event = f"incident {row['event']}" + (f" (open since {row['opened_ds']})" if row["event"] in ("escalated", "grew") else "")
    return visible(f"{row['ds']} {mark} {event}: {row['detail']}")


def digest_text(rows: list[dict], report: str | None) -> str:
    """Counts by severity, the top incidents (a line each, as :func:`page_text`), where the report is."""
    incidents = _latest_per_incident(rows)
    counts = ", ".join(f"{n} {severity}" for severity, n in _severity_counts(incidents))
    lines = [f"feco digest: {len(rows)} incident messages from {rows[0]['ds']} to {rows[-1]['ds']}, "
             f"{len(incidents)} incidents ({counts})"]
    top = sorted(incidents, key=lambda r: (-r["severity_rank"], -r["rows_lost"], r["feature"] or ""))
    lines += [visible(f"  {SEVERITY_MARK.get(r['severity'], r['severity'])} {describe_place(r)}: {r['status']}, "
                      f"opened {r['opened_ds']}") for r in top[:TOP_IN_DIGEST]]
    if len(top) > TOP_IN_DIGEST:
        lines.append(f"  and {len(top) - TOP_IN_DIGEST} more (feco alerts)")
    if report:
        lines.append(f"report: {report}")
    return "\n".join(lines)


def _digest_payload(rows: list[dict], settings: Notify) -> dict:
    incidents = _latest_per_incident(rows)
    return {"digest": True, "messages": len(rows), "by_severity": dict(_severity_counts(incidents)),
            "incidents": [{k: row[k] for k in PAYLOAD_FIELDS} for row in incidents], "report": settings.report}


def _latest_per_incident(rows: list[dict]) -> list[dict]:
    latest = {}
    for row in rows:  # oldest first: the last row of an incident is its latest state
        latest[row["incident_id"]] = row
    return list(latest.values())


def _severity_counts(incidents: list[dict]) -> list[tuple[str, int]]:
    ranked = sorted(incidents, key=lambda r: -r["severity_rank"])
    counts: dict[str, int] = {}
    for row in ranked:
        counts[row["severity"]] = counts.get(row["severity"], 0) + 1
    return list(counts.items())


def _record(conn, messages: pl.DataFrame, channel: str, error: DeliveryFailed | None = None, *,
            left_out: bool = False) -> None:
    at = datetime.now(UTC)
    # neither a message the deadline kept back nor one left out of the channel was attempted
    tried = not (left_out or isinstance(error, NotSent))
    status = ("left_out" if left_out else "rejected" if isinstance(error, Rejected)
              else "failed" if error else "delivered")
    for message_id, attempts in messages.select("message_id", "attempts").iter_rows():
        conn.execute(
            "INSERT OR REPLACE INTO page_deliveries VALUES ($id, $channel, $status, $attempts, $at, $error)",
            {"id": message_id, "channel": channel, "status": status,
             "attempts": attempts + tried, "at": at, "error": error and str(error)},
        )


def _append_jsonl(path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record, default=str) + "\n")
