"""Local servers on 127.0.0.1 that stand in for PagerDuty's Events API v2 and Slack's incoming
webhooks: each checks a request against the service's documented schema and answers as the
service does (PagerDuty: 202 with the dedup key, 400 with its errors; Slack: 200 "ok", 400
"invalid_payload" / "invalid_blocks" / "no_text"), or with a planned answer (a 429 with
Retry-After, a 500). Every event received is kept, valid or not.

Schemas: PagerDuty's "Send an Alert Event" (Events API v2: routing_key of 32 characters,
event_action trigger / acknowledge / resolve, dedup_key of at most 255, a trigger's payload
with summary (at most 1,024), source and severity critical / error / warning / info, the
optional component, group, class, timestamp and custom_details; links with href, images with
src; 512 KB at most). Slack's incoming webhook: a JSON object with text or blocks; at most 50
blocks of the Block Kit layout types, header text plain_text of at most 150, section text of
at most 3,000 and at most 10 fields of at most 2,000, context of at most 10 elements.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
import uuid
from contextlib import contextmanager

PAGERDUTY_KEYS = {"routing_key", "event_action", "dedup_key", "payload", "images", "links", "client", "client_url"}
PAGERDUTY_PAYLOAD = {"summary", "source", "severity", "timestamp", "component", "group", "class", "custom_details"}
SLACK_KEYS = {"text", "blocks", "attachments", "mrkdwn", "username", "icon_emoji", "icon_url", "channel",
              "thread_ts", "unfurl_links", "unfurl_media"}


def pagerduty_errors(event) -> list[str]:
    if not isinstance(event, dict):
        return ["Event object is invalid"]
    errors = [f"Unknown field '{key}'" for key in event.keys() - PAGERDUTY_KEYS]
    key = event.get("routing_key")
    if not isinstance(key, str) or len(key) != 32:
        errors.append("Length of 'routing_key' is incorrect (should be 32 characters)")
    action = event.get("event_action")
    if action not in ("trigger", "acknowledge", "resolve"):
        errors.append("'event_action' is missing or blank" if not action else "'event_action' is invalid")
    dedup = event.get("dedup_key")
    if dedup is not None and (not isinstance(dedup, str) or not dedup or len(dedup) > 255):
        errors.append("'dedup_key' is invalid (a string of 1 to 255 characters)")
    if action in ("acknowledge", "resolve") and dedup is None:
        errors.append("'dedup_key' is required for acknowledge and resolve events")
    if action == "trigger":
        errors += _pagerduty_payload_errors(event.get("payload"))
    for link in event.get("links", []):
        if not isinstance(link, dict) or not isinstance(link.get("href"), str):
            errors.append("'links' entries need an 'href'")
    for image in event.get("images", []):
        if not isinstance(image, dict) or not isinstance(image.get("src"), str):
            errors.append("'images' entries need a 'src'")
    return errors


def _pagerduty_payload_errors(payload) -> list[str]:
    if not isinstance(payload, dict):
        return ["'payload' is missing or not an object"]
    errors = [f"Unknown field 'payload.{key}'" for key in payload.keys() - PAGERDUTY_PAYLOAD]
    summary = payload.get("summary")
    if not isinstance(summary, str) or not summary or len(summary) > 1024:
        errors.append("'payload.summary' is missing, blank or longer than 1024 characters")
    if not isinstance(payload.get("source"), str) or not payload["source"]:
        errors.append("'payload.source' is missing or blank")
    if payload.get("severity") not in ("critical", "error", "warning", "info"):
        errors.append("'payload.severity' is invalid (critical, error, warning or info)")
    for field in ("component", "group", "class", "timestamp"):
        if field in payload and not isinstance(payload[field], str):
            errors.append(f"'payload.{field}' is not a string")
    if "custom_details" in payload and not isinstance(payload["custom_details"], dict):
        errors.append("'payload.custom_details' is not an object")
    return errors


def slack_error(message) -> str | None:
    """Slack's error string for an invalid message, None for a valid one."""
    if not isinstance(message, dict) or message.keys() - SLACK_KEYS:
        return "invalid_payload"
    if not message.get("text") and not message.get("blocks"):
        return "no_text"
    blocks = message.get("blocks", [])
    if not isinstance(blocks, list) or len(blocks) > 50 or not all(_valid_block(b) for b in blocks):
        return "invalid_blocks"
    return None


def _valid_block(block) -> bool:
    if not isinstance(block, dict):
        return False
    kind = block.get("type")
    if kind == "header":
        text = block.get("text", {})
        return _valid_text(text, 150) and text["type"] == "plain_text"
    if kind == "section":
        fields = block.get("fields")
        if "text" not in block and not fields:
            return False
        if "text" in block and not _valid_text(block["text"], 3000):
            return False
        return fields is None or (len(fields) <= 10 and all(_valid_text(f, 2000) for f in fields))
    if kind == "context":
        elements = block.get("elements", [])
        return 0 < len(elements) <= 10 and all(_valid_text(e, 3000) for e in elements)
    return kind == "divider"


def _valid_text(text, limit: int) -> bool:
    return (isinstance(text, dict) and text.get("type") in ("plain_text", "mrkdwn")
            and isinstance(text.get("text"), str) and 0 < len(text["text"]) <= limit)


class Service:
    """A running stand-in: ``url``, every JSON body received (``received``), and ``planned``:
    answers (status, headers, body) to give before the service's own, first come first used."""

    def __init__(self, url: str):
        self.url, self.received, self.planned, self.times = url, [], [], []


@contextmanager
def serve(answer, path: str = "/"):
    """Run a service on 127.0.0.1 whose ``answer(body) -> (status, headers, text)`` judges
    each request not answered by a planned answer."""
    service = None

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                body = json.loads(raw) if self.headers.get("Content-Type") == "application/json" else None
            except ValueError:
                body = None
            service.received.append(body)
            service.times.append(time.monotonic())
            status, headers, text = service.planned.pop(0) if service.planned else answer(body, len(raw))
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            data = text.encode()
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service = Service(f"http://127.0.0.1:{server.server_port}{path}")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()


def pagerduty_answer(event, size: int):
    errors = ["Event object is too large (over 512 KB)"] if size > 512 * 1024 else pagerduty_errors(event)
    if errors:
        return 400, {"Content-Type": "application/json"}, json.dumps(
            {"status": "invalid event", "message": "Event object is invalid", "errors": errors})
    dedup = event.get("dedup_key") or uuid.uuid4().hex
    return 202, {"Content-Type": "application/json"}, json.dumps(
        {"status": "success", "message": "Event processed", "dedup_key": dedup})


def slack_answer(message, size: int):
    error = slack_error(message)
    return (400, {"Content-Type": "text/plain"}, error) if error else (200, {"Content-Type": "text/plain"}, "ok")


class PagerDutyAlerts:
    """What PagerDuty makes of the events it accepts, by dedup key: a trigger opens an alert
    (or updates the open one), a resolve closes it. PagerDuty also accepts (202) a resolve for
    a key with no open alert and does nothing with it: those are kept in ``unmatched``, so a
    test can hold feco to never sending one."""

    def __init__(self):
        self.events: dict[str, list[str]] = {}  # each key's accepted actions, in order
        self.open: set[str] = set()
        self.unmatched: list[str] = []

    def answer(self, event, size: int):
        status, headers, text = pagerduty_answer(event, size)
        key, action = (event.get("dedup_key"), event.get("event_action")) if status == 202 else (None, None)
        if key:
            self.events.setdefault(key, []).append(action)
        if key and action == "trigger":
            self.open.add(key)
        elif key and action == "resolve":
            if key not in self.open:
                self.unmatched.append(key)
            self.open.discard(key)
        return status, headers, text


@contextmanager
def pagerduty_server():
    """A PagerDuty stand-in; its ``alerts`` (PagerDutyAlerts) say what the events opened and closed."""
    alerts = PagerDutyAlerts()
    with serve(alerts.answer, "/v2/enqueue") as service:
        service.alerts = alerts
        yield service


def slack_server():
    return serve(slack_answer, "/services/T000/B000/SLACKSECRET")


RATE_LIMITED = (429, {"Retry-After": "1", "Content-Type": "application/json"},
                json.dumps({"status": "throttle event", "message": "Requests for this service are arriving too quickly."}))
