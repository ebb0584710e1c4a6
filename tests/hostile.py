"""Local webhook servers on 127.0.0.1 that misbehave: drip bytes, hang, answer garbage, close
early. Every loop is bounded, and each server stops when its context ends."""

from __future__ import annotations

import re
import socket
import threading
from contextlib import contextmanager

SECRET_URL_PATH = "/hooks/SECRET-TOKEN?key=QUERYSECRET"
DRIP_BYTES = 200  # at 0.1 s a byte: 20 s, far past any timeout the tests set


class Outcome:
    """What the server saw: requests received, and whether the client hung up mid-answer."""

    def __init__(self):
        self.requests = 0
        self.client_gave_up = threading.Event()


def drip(conn: socket.socket, stop: threading.Event, outcome: Outcome) -> None:
    status = b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"." * DRIP_BYTES
    for byte in status:
        if stop.wait(0.1):
            return
        try:
            conn.sendall(bytes([byte]))
        except OSError:
            outcome.client_gave_up.set()
            return


def hang(conn: socket.socket, stop: threading.Event, outcome: Outcome) -> None:
    """Answer nothing; read (and drop) whatever else comes until the client closes."""
    conn.settimeout(0.1)
    while not stop.is_set():
        try:
            if conn.recv(4096) == b"":
                outcome.client_gave_up.set()
                return
        except TimeoutError:
            continue
        except OSError:
            outcome.client_gave_up.set()
            return


def garbage(conn: socket.socket, stop: threading.Event, outcome: Outcome) -> None:
    conn.sendall(b"THIS IS NOT HTTP\r\n\r\n")


def close_early(conn: socket.socket, stop: threading.Event, outcome: Outcome) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly a few bytes")


def accept(conn: socket.socket, stop: threading.Event, outcome: Outcome) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")


@contextmanager
def hostile_server(behaviour):
    """Yield (url, outcome) of a server that reads each request head, then ``behaviour``."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.1)
    stop, outcome, handlers = threading.Event(), Outcome(), []

    def handle(conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                received = b""
                while b"\r\n\r\n" not in received and len(received) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    received += chunk
                # Read the body too: closing with unread bytes makes the kernel reset the
                # connection, and the client would see a reset instead of what the server did.
                head, _, body = received.partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                while length and len(body) < int(length.group(1)):
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    body += chunk
                outcome.requests += 1
                behaviour(conn, stop, outcome)
            except OSError:
                outcome.client_gave_up.set()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=handle, args=(conn,), daemon=True)
            thread.start()
            handlers.append(thread)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}{SECRET_URL_PATH}", outcome
    finally:
        stop.set()
        server.join(5)
        for thread in handlers:
            thread.join(5)
        listener.close()
