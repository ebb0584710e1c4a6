"""Delivery of incident messages: a line on stdout (the task log), a JSON-lines file, a webhook.

A message is due when an incident opens, escalates or resolves (see feco.alerts.incidents);
nothing else is sent. Every attempt is recorded per message and channel in
``page_deliveries``; a message not delivered (a webhook that was down) is tried again by the
next run, for ``RETRY_DAYS``. When more than ``digest_after`` messages are pending on a
channel (after a backfill or an outage) they go as one digest.

The webhook cannot hold a run: each request has one overall deadline (connect, send and
answer together, not per socket read) and the run's whole delivery another. Messages go one
after another, in order (an incident's opening before its resolution); there are at most
``digest_after`` of them, or one digest. The URL is a secret: it comes from the environment
or the caller, only http(s) is accepted, and neither it nor any part of it appears in a
stored error or any output.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Callable

import duckdb
import polars as pl

from feco.alerts.incidents import describe_place
from feco.alerts.severity import SEVERITY_NAME
from feco.config import Notify
from feco.errors import ConfigError
from feco.warehouse import named_query

RETRY_DAYS = 7
SEVERITY_MARK = {"critical": "[CRITICAL]", "high": "[HIGH]", "medium": "[MEDIUM]", "low": "[low]"}
TOP_IN_DIGEST = 5
MAX_ANSWER_BYTES = 64 * 1024
PAYLOAD_FIELDS = ("ds", "event", "message_id", "incident_id", "feature", "segment_dim", "segment_value", "opened_ds",
                  "status", "severity", "severity_rank", "paged_rank", "headline_rule", "headline_dim", "headline_value",
                  "rows_lost", "detail", "source", "features")


@dataclass(frozen=True)
class Message:
    text: str  # the log line, and the webhook's "text"
    record: dict  # the JSON-lines record
    attachment: dict | None = None  # sent to the webhook beside "text"


class DeliveryFailed(Exception):
    """A delivery that did not go through; its text is safe to store (it names no URL)."""


class NotSent(DeliveryFailed):
    """A message not even tried (the run's deadline had passed): it keeps its attempts."""


def notify_alerts(
    conn: duckdb.DuckDBPyConnection,
    ds: date,
    *,
    settings: Notify,
    webhook_url: str | None = None,
    echo: Callable[[str], None] = print,
    warn: Callable[[str], None] | None = None,
    backfill_from: date | None = None,
) -> dict[str, dict[str, int]]:
    """Deliver the incident messages of ``ds`` and the days before it that are still pending.

    ``webhook_url`` overrides the environment variable named in ``settings`` (the DAG passes
    one read from an Airflow connection). After a backfill from ``backfill_from`` to ``ds``
    the pending messages of the whole backfill go as one digest, and the latest message of
    each incident still live on ``ds`` goes apart (someone has to act on it). A channel whose
    delivery failed gets one ``warn`` line (default: standard error). Returns counts of messages delivered and failed
    per channel; a digest counts every message it carries.

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
    for channel, send in _channels(settings, webhook_url, echo, deadline).items():
        pending = named_query(conn, "pending_pages", {"channel": channel, "since": since, "until": ds})
        counts[channel] = {"delivered": 0, "failed": 0}
        errors = []
        for ids, message in _outbox(pending, settings, live_apart=live):  # in order: an opening before its resolution
            error = _attempt(send, message)
            counts[channel]["failed" if error else "delivered"] += len(ids)
            if error:
                errors.append(str(error))
            # recorded at once, so a run killed mid-delivery sends again only what was in flight
            _record(conn, pending.filter(pl.col("message_id").is_in(ids)), channel, error)
        if errors:
            (warn or _warn)(f"feco: warning: {counts[channel]['failed']} incident message(s) not delivered on {channel} "
                 f"({errors[0]}); the next run tries again")
    return counts


def _warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _live_incidents(conn: duckdb.DuckDBPyConnection, ds: date) -> set[str]:
    return set(named_query(conn, "live_incidents", {"ds": ds}).get_column("incident_id").to_list())


def send_message(
    text: str,
    *,
    settings: Notify,
    webhook_url: str | None = None,
    echo: Callable[[str], None] = print,
) -> dict[str, str]:
    """Send one plain text message (not an incident) through the same channels.

    The log gets the line, the JSON-lines file a record with a "message" key, the webhook a
    POST of ``{"text": text}``. Returns ``{channel: "delivered" | "failed"}``; a delivery
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
    channels = _channels(settings, webhook_url, echo, deadline)
    message = Message(text, {"message": text, "at": datetime.now(timezone.utc).isoformat()})
    return {channel: "failed" if _attempt(send, message) else "delivered" for channel, send in channels.items()}


def read_webhook_url(settings: Notify, override: str | None = None) -> str | None:
    """The webhook URL from the caller or the environment, checked to be http(s).

    Surrounding whitespace is dropped; anything else that is not an http(s) URL with a host is
    a ConfigError that names where the URL came from, never the URL.
    """
    source = "the webhook URL passed in" if override else f"${settings.webhook_url_env}"
    url = override or (os.environ.get(settings.webhook_url_env) if settings.webhook_url_env else None)
    if not url or not url.strip():
        return None
    url = url.strip()
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid or any(ch.isspace() or ord(ch) < 32 for ch in url):
        raise ConfigError(f"{source} is not an http(s) URL with a host (its value is not shown: it is a secret)")
    return url


def post_json(url: str, payload: dict, *, deadline: float, timeout: float) -> None:
    """POST ``payload`` as JSON; done by ``deadline`` (time.monotonic()) whatever the server does.

    Raises DeliveryFailed for any failure (non-2xx answer, garbage, an early close, a timeout),
    with a text that holds no part of the URL.
    """
    parts = urllib.parse.urlsplit(url)
    remaining = min(deadline - time.monotonic(), timeout)
    if remaining <= 0:
        raise NotSent("not sent: the run's delivery deadline had passed")
    connection_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_type(parts.hostname, parts.port, timeout=remaining)
    expired, finished = threading.Event(), threading.Event()
    threading.Thread(target=_abort_after, args=(connection, remaining, expired, finished), daemon=True).start()
    target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    try:
        connection.request("POST", target, body=json.dumps(payload, default=str).encode(),
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        _read_answer(response)
        status = response.status
    except Exception as error:  # noqa: BLE001 - any failure is recorded; its text may hold the URL
        if expired.is_set() or isinstance(error, TimeoutError):
            raise DeliveryFailed(f"webhook timed out after {remaining:.3g}s") from None
        raise DeliveryFailed(f"webhook failed: {type(error).__name__}") from None
    finally:
        finished.set()
        connection.close()
    if not 200 <= status < 300:
        raise DeliveryFailed(f"webhook answered HTTP {status}")


def _read_answer(response: http.client.HTTPResponse) -> None:
    """Read the answer to its end (an early close raises IncompleteRead), at most
    MAX_ANSWER_BYTES of it: a webhook's answer is a short acknowledgement."""
    read = 0
    while read < MAX_ANSWER_BYTES and (chunk := response.read(8192)):
        read += len(chunk)
    if read < MAX_ANSWER_BYTES and response.length:  # closed before its Content-Length
        raise http.client.IncompleteRead(b"", response.length)


def _abort_after(connection: http.client.HTTPConnection, seconds: float,
                 expired: threading.Event, finished: threading.Event) -> None:
    """When the request's time is up, shut its socket until the request gives up: a blocked
    read then returns at once, however slowly the server drips (socket timeouts are per read)."""
    if finished.wait(seconds):
        return
    expired.set()
    while not finished.wait(0.05):
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _channels(settings: Notify, webhook_url: str | None, echo, deadline: float) -> dict[str, Callable]:
    channels: dict[str, Callable[[Message], None]] = {"log": lambda message: echo(message.text)}
    if settings.jsonl is not None:
        channels["jsonl"] = lambda message: _append_jsonl(settings.jsonl, message.record)
    url = read_webhook_url(settings, webhook_url)
    if url:
        channels["webhook"] = lambda message: post_json(
            url, {"text": message.text} | ({"feco": message.attachment} if message.attachment else {}),
            deadline=deadline, timeout=settings.timeout_seconds)
    return channels


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
        return [_single(row) for row in rows]
    apart = {row["incident_id"]: row for row in rows if row["incident_id"] in (live_apart or set())}
    digested = [row for row in rows if apart.get(row["incident_id"]) is not row]
    outbox = []
    if digested:
        payload = _digest_payload(digested, settings)
        outbox.append(([row["message_id"] for row in digested],
                       Message(digest_text(digested, settings.report), payload, payload)))
    return outbox + [_single(row) for row in apart.values()]


def _single(row: dict) -> tuple[list[str], Message]:
    payload = {k: row[k] for k in PAYLOAD_FIELDS}
    return [row["message_id"]], Message(page_text(row), payload | {"text": page_text(row)}, payload)


def page_text(row: dict) -> str:
    """One line: the day, the severity, what happened to which incident."""
    # what is paged: the headline's severity for an opening or escalation, the peak at the end
    severity = row["severity"] if row["event"] == "resolved" else SEVERITY_NAME[row["paged_rank"]]
    mark = SEVERITY_MARK.get(severity, severity)
    event = f"incident {row['event']}" + (f" (open since {row['opened_ds']})" if row["event"] == "escalated" else "")
    return f"{row['ds']} {mark} {event}: {row['detail']}"


def digest_text(rows: list[dict], report: str | None) -> str:
    """Counts by severity, the top incidents, where the report is."""
    incidents = _latest_per_incident(rows)
    counts = ", ".join(f"{n} {severity}" for severity, n in _severity_counts(incidents))
    lines = [f"feco digest: {len(rows)} incident messages from {rows[0]['ds']} to {rows[-1]['ds']}, "
             f"{len(incidents)} incidents ({counts})"]
    top = sorted(incidents, key=lambda r: (-r["severity_rank"], -r["rows_lost"], r["feature"] or ""))
    lines += [f"  {SEVERITY_MARK.get(r['severity'], r['severity'])} {describe_place(r)}: {r['status']}, "
              f"opened {r['opened_ds']}" for r in top[:TOP_IN_DIGEST]]
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


def _record(conn, messages: pl.DataFrame, channel: str, error: DeliveryFailed | None) -> None:
    at = datetime.now(timezone.utc)
    tried = not isinstance(error, NotSent)  # a message the deadline kept back was not attempted
    for message_id, attempts in messages.select("message_id", "attempts").iter_rows():
        conn.execute(
            "INSERT OR REPLACE INTO page_deliveries VALUES ($id, $channel, $status, $attempts, $at, $error)",
            {"id": message_id, "channel": channel, "status": "failed" if error else "delivered",
             "attempts": attempts + tried, "at": at, "error": error and str(error)},
        )


def _append_jsonl(path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record, default=str) + "\n")
