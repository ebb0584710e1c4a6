"""Delivery of open alerts: a summary line on stdout (the task log), a JSON-lines file, a webhook.

Every attempt is recorded per alert and channel in ``alert_deliveries``; an alert not
delivered (a webhook that was down) is tried again by the next run, for ``RETRY_DAYS``. The
webhook URL is a secret: it comes from the environment or the caller, never from a config
file, and never appears in a stored error, a log line or an exception message.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from datetime import date, datetime, timedelta, timezone
from typing import Callable

import duckdb
import polars as pl

from feco.config import Notify
from feco.warehouse import named_query

RETRY_DAYS = 7
SEVERITY_MARK = {"critical": "[CRITICAL]", "high": "[HIGH]", "medium": "[MEDIUM]", "low": "[low]"}


def summary_line(alert: dict) -> str:
    ongoing = " (ongoing)" if alert.get("status") == "ongoing" else ""
    return (f"{alert['ds']} {SEVERITY_MARK.get(alert['severity'], alert['severity'])} {alert['rule']}{ongoing}: "
            f"{alert['detail']}")


def notify_alerts(
    conn: duckdb.DuckDBPyConnection,
    ds: date,
    *,
    settings: Notify,
    webhook_url: str | None = None,
    echo: Callable[[str], None] = print,
) -> dict[str, dict[str, int]]:
    """Deliver the open alerts of ``ds`` and the days before it that are still pending.

    ``webhook_url`` overrides the environment variable named in ``settings`` (the DAG passes
    one read from an Airflow connection). Returns counts of delivered and failed per channel.
    """
    channels: dict[str, Callable[[dict], None]] = {"log": lambda alert: echo(summary_line(alert))}
    if settings.jsonl is not None:
        channels["jsonl"] = lambda alert: _append_jsonl(settings.jsonl, alert)
    url = webhook_url or (os.environ.get(settings.webhook_url_env) if settings.webhook_url_env else None)
    if url:
        channels["webhook"] = lambda alert: _post(url, alert, timeout=settings.timeout_seconds)
    counts = {}
    for channel, deliver in channels.items():
        pending = named_query(conn, "pending_deliveries", {"channel": channel, "since": ds - timedelta(days=RETRY_DAYS)})
        counts[channel] = _deliver_all(conn, pending, channel, deliver, secret=url)
    return counts


def _deliver_all(conn, pending: pl.DataFrame, channel: str, deliver, *, secret: str | None) -> dict[str, int]:
    counts = {"delivered": 0, "failed": 0}
    for alert in pending.iter_rows(named=True):
        try:
            deliver(alert)
            status, error = "delivered", None
        except (OSError, ValueError) as failure:  # urllib, socket and file errors are OSErrors
            status, error = "failed", _scrub(str(failure), secret)
        counts[status] += 1
        conn.execute(
            "INSERT OR REPLACE INTO alert_deliveries VALUES ($id, $channel, $status, $attempts, $at, $error)",
            {"id": alert["alert_id"], "channel": channel, "status": status,
             "attempts": alert["attempts"] + 1, "at": datetime.now(timezone.utc), "error": error},
        )
    return counts


def _scrub(message: str, secret: str | None) -> str:
    return message.replace(secret, "<webhook url>") if secret else message


def _append_jsonl(path, alert: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {k: v for k, v in alert.items() if k != "attempts"}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(record, default=str) + "\n")


def send_message(text: str, *, settings: Notify, webhook_url: str | None = None,
                 echo: Callable[[str], None] = print) -> dict[str, str]:
    """Send one plain line (not an alert) through the same channels; never raises on delivery.

    For what is not an alert but must reach a person: a step that failed for good, logs that
    did not arrive. Returns ``{channel: "delivered" | "failed"}``.
    """
    echo(text)
    outcome = {"log": "delivered"}
    url = webhook_url or (os.environ.get(settings.webhook_url_env) if settings.webhook_url_env else None)
    sends = {"jsonl": (lambda: _append_jsonl(settings.jsonl, {"message": text})) if settings.jsonl else None,
             "webhook": (lambda: _post_json(url, {"text": text}, timeout=settings.timeout_seconds)) if url else None}
    for channel, send in sends.items():
        if send is None:
            continue
        try:
            send()
            outcome[channel] = "delivered"
        except (OSError, ValueError) as failure:
            outcome[channel] = "failed"
            echo(f"could not send to {channel}: {_scrub(str(failure), url)}")
    return outcome


def _post(url: str, alert: dict, *, timeout: float) -> None:
    """POST a Slack-compatible payload; any non-2xx answer or network failure raises."""
    payload = {"text": summary_line(alert), "feco_alert": {k: alert[k] for k in (
        "ds", "alert_id", "feature", "segment_dim", "segment_value", "rule", "severity",
        "observed", "baseline", "threshold", "drop_abs", "drop_rel", "std_error", "importance")}}
    _post_json(url, payload, timeout=timeout)


def _post_json(url: str, payload: dict, *, timeout: float) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(payload, default=str).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as error:
        raise OSError(f"webhook answered HTTP {error.code}") from None
    except urllib.error.URLError as error:
        raise OSError(f"webhook unreachable: {error.reason}") from None
    except TimeoutError:
        raise OSError(f"webhook timed out after {timeout:g}s") from None
