"""The HTTP client every channel shares: a request cannot hold a run, and no secret leaks.

Each request has one overall deadline (connect, send and answer together, not per socket
read), and the run's whole delivery another. The answer is read to its end, at most
``MAX_ANSWER_BYTES`` of it. Errors name what failed, never the URL or any key: their texts are
stored in ``page_deliveries`` and printed. A service's answer quoted in an error is scrubbed of
every secret and of any part of one (``scrub``): a Slack answer may quote the webhook's token
alone, or the path around it.

``post_answered`` follows what the services document: a 429 is retried after its
``Retry-After`` when that still fits in the run's deadline (else recorded, and the next run
tries again); a 400 means the payload is wrong, so the message is recorded as rejected and
not retried; any other failure is recorded and retried by the next run.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
import urllib.parse
from typing import NamedTuple

from feco.errors import ConfigError

MAX_ANSWER_BYTES = 64 * 1024
# A run of this many characters shared with a secret is scrubbed: shorter ones (``/v2/``,
# ``T000``) are too common to give a key away, and a Slack token has 24, a routing key 32.
SECRET_CHARACTERS = 8
RATE_LIMIT_RETRIES = 3  # 429s answered in a row before the message waits for the next run


class DeliveryFailed(Exception):
    """A delivery that did not go through; its text is safe to store (it names no URL or key)."""


class NotSent(DeliveryFailed):
    """A message not even tried (the run's deadline had passed): it keeps its attempts."""


class Rejected(DeliveryFailed):
    """A message the service refused as invalid (HTTP 400): sending it again cannot help."""


class Answer(NamedTuple):
    status: int
    headers: dict[str, str]  # lower-case names
    body: bytes


def read_secret_url(variable: str | None, override: str | None = None, *, what: str = "webhook URL") -> str | None:
    """A URL from the caller or the environment variable ``variable``, checked to be http(s).

    Surrounding whitespace is dropped; anything else that is not an http(s) URL with a host is
    a ConfigError that names where the URL came from, never the URL.
    """
    source = f"the {what} passed in" if override else f"${variable}"
    url = override or (os.environ.get(variable) if variable else None)
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


def post_json(url: str, payload: dict, *, deadline: float, timeout: float, service: str = "webhook") -> None:
    """POST ``payload`` as JSON; done by ``deadline`` (time.monotonic()) whatever the server does.

    Raises DeliveryFailed for any failure (non-2xx answer, garbage, an early close, a timeout),
    with a text that holds no part of the URL.
    """
    answer = request(url, payload, deadline=deadline, timeout=timeout, service=service)
    if not 200 <= answer.status < 300:
        raise DeliveryFailed(f"{service} answered HTTP {answer.status}")


def post_answered(url: str, payload: dict, *, deadline: float, timeout: float, service: str,
                  secrets: tuple[str, ...] = ()) -> Answer:
    """POST ``payload`` as a service's documented API expects to be called (see the module):
    returns the 2xx answer, else raises DeliveryFailed, or Rejected for a 400. ``secrets`` are
    scrubbed from any text of the service's answer an error quotes."""
    for _ in range(RATE_LIMIT_RETRIES):
        answer = request(url, payload, deadline=deadline, timeout=timeout, service=service)
        if 200 <= answer.status < 300:
            return answer
        if answer.status == 400:
            # what comes of it (not sent again) is the caller's to say, once
            raise Rejected(f"{service} refused the message as invalid (HTTP 400: "
                           f"{_reason(answer.body, _secret_parts(url, secrets))})")
        if answer.status != 429:
            raise DeliveryFailed(f"{service} answered HTTP {answer.status}")
        wait = _retry_after(answer.headers)
        if wait is None or time.monotonic() + wait >= deadline:
            after = "" if wait is None else f"; it asked for {wait:g} s, past the run's delivery deadline"
            raise DeliveryFailed(f"{service} answered HTTP 429 (rate limited{after})")
        time.sleep(wait)
    raise DeliveryFailed(f"{service} answered HTTP 429 {RATE_LIMIT_RETRIES} times (rate limited)")


def request(url: str, payload: dict, *, deadline: float, timeout: float, service: str = "webhook") -> Answer:
    """POST ``payload`` as JSON and return the answer, whatever its status; done by ``deadline``."""
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
        body = _read_answer(response)
        return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
    except Exception as error:  # noqa: BLE001 - any failure is recorded; its text may hold the URL
        if expired.is_set() or isinstance(error, TimeoutError):
            raise DeliveryFailed(f"{service} timed out after {remaining:.3g}s") from None
        raise DeliveryFailed(f"{service} failed: {type(error).__name__}") from None
    finally:
        finished.set()
        connection.close()


def _read_answer(response: http.client.HTTPResponse) -> bytes:
    """Read the answer to its end (an early close raises IncompleteRead), keeping at most
    MAX_ANSWER_BYTES of it: a service's answer is a short acknowledgement."""
    chunks, read = [], 0
    while read < MAX_ANSWER_BYTES and (chunk := response.read(8192)):
        chunks.append(chunk)
        read += len(chunk)
    if read < MAX_ANSWER_BYTES and response.length:  # closed before its Content-Length
        raise http.client.IncompleteRead(b"", response.length)
    return b"".join(chunks)[:MAX_ANSWER_BYTES]


def _retry_after(headers: dict[str, str]) -> float | None:
    """Seconds the service asks to wait (``Retry-After: 5``); None when it does not say."""
    try:
        return max(0.0, float(headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def _reason(body: bytes, secrets: tuple[str, ...]) -> str:
    """The service's own words for a refusal (PagerDuty's ``errors``, Slack's error string),
    short, printable, with no secret in them."""
    text = body.decode("utf-8", "replace")
    try:
        answer = json.loads(text)
        if isinstance(answer, dict):
            text = "; ".join(map(str, answer.get("errors") or [])) or str(answer.get("message", text))
    except ValueError:
        pass
    # cut first, to scrub little: a piece of a secret the cut leaves is scrubbed all the same
    text = scrub(text[:200], secrets)
    return "".join(ch if ch.isprintable() else " " for ch in text) or "no reason given"


def _secret_parts(url: str, secrets: tuple[str, ...]) -> tuple[str, ...]:
    """What of ``url`` is secret (the path, the query and any user or password: a webhook's
    token is in its path), and the other ``secrets``; the scheme and host are not."""
    parts = urllib.parse.urlsplit(url)
    return tuple(part for part in (parts.path, parts.query, parts.username, parts.password, *secrets) if part)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every run of SECRET_CHARACTERS or more characters that also occurs in one
    of ``secrets`` replaced by ``***``: a whole secret, a path segment of one, or a piece of a
    token an answer cut short.

    Examples
    --------
    >>> scrub("no_team for T000/B000/XXXXsec", ("/services/T000/B000/XXXXsecret",))
    'no_team for ***'
    >>> scrub("invalid_token XXXXsecret", ("/services/T000/B000/XXXXsecret",))
    'invalid_token ***'
    """
    kept, start = [], 0
    while start < len(text):
        length = _shared_run(text, start, secrets)
        kept.append("***" if length >= SECRET_CHARACTERS else text[start])
        start += length if length >= SECRET_CHARACTERS else 1
    return "".join(kept)


def _shared_run(text: str, start: int, secrets: tuple[str, ...]) -> int:
    """The length of the longest piece of ``text`` from ``start`` on found in a secret."""
    length = 0
    while start + length < len(text) and any(text[start:start + length + 1] in secret for secret in secrets):
        length += 1
    return length


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
