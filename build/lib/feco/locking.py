"""One pipeline run at a time per warehouse.

DuckDB already refuses a second writer, but a run also writes sample and staging files
before it touches the warehouse; two runs of one day at once (two CLI processes, or the DAG
while a backfill runs) would overwrite each other's files. Every pipeline step therefore
holds an exclusive lock on ``<warehouse>.lock``: the second run waits, then fails with a
clear message. The lock is re-entrant within a process (``run_day`` holds it around its
steps) and released by the kernel if the process dies, so a killed run never leaves it held.
"""

from __future__ import annotations

import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from feco.errors import WarehouseBusyError

WAIT_SECONDS = float(os.environ.get("FECO_LOCK_WAIT_SECONDS", "300"))
_held: dict[Path, int] = {}


@contextmanager
def run_lock(warehouse: Path, *, wait_seconds: float | None = None) -> Iterator[None]:
    """Hold the run lock of ``warehouse``, waiting up to ``wait_seconds`` for it."""
    key = warehouse.resolve()
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    key.parent.mkdir(parents=True, exist_ok=True)
    handle = os.open(f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(handle, key, WAIT_SECONDS if wait_seconds is None else wait_seconds)
        _held[key] = 1
        try:
            yield
        finally:
            del _held[key]
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def _acquire(handle: int, warehouse: Path, wait_seconds: float) -> None:
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise WarehouseBusyError(
                    f"another feco run holds {warehouse} (waited {wait_seconds:g}s); "
                    "try again when it has finished"
                ) from None
            time.sleep(0.2)
