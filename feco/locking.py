"""One pipeline run at a time per warehouse.

DuckDB already refuses a second writer, but a run also writes sample and staging files
before it touches the warehouse; two runs of one day at once (two CLI processes, or the DAG
while a backfill runs) would overwrite each other's files. Every pipeline step, and every
other writer (all come through ``feco.tasks``), therefore holds an exclusive lock on
``<warehouse>.lock``: the second run waits, then fails with a clear message. The lock is
re-entrant within a process (``run_day`` holds it around its steps) and released by the
kernel if the process dies, so a killed run never leaves it held.

Readers (`feco query`, `status`, `alerts`, `drops`) never take the run lock (the report, a
step that writes its folder, does): they open the DuckDB file read-only, which DuckDB allows
while no process writes it. The two kinds meet at DuckDB's own file lock:

- a run waits up to ``WRITE_WAIT_SECONDS`` for readers to close the file, then fails (exit 3);
- `feco query` cancels itself after ``QUERY_TIMEOUT_SECONDS`` by default, half that wait, so a
  run started while a query holds the file still gets it (``--timeout 0`` lifts the limit and
  can make a run fail);
- a reader waits up to 10 s for a writer, then fails (exit 3): publishing a day is short.

A reader also holds at most ``READ_MEMORY_LIMIT`` of memory (DuckDB's default is 80% of the
machine, which the pipeline and other users share).
"""

from __future__ import annotations

import fcntl
import math
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from feco.errors import UsageError, WarehouseBusyError

WRITE_WAIT_SECONDS = 60.0
QUERY_TIMEOUT_SECONDS = WRITE_WAIT_SECONDS / 2
READ_MEMORY_LIMIT = "2GB"
_held: dict[Path, int] = {}


@contextmanager
def run_lock(warehouse: Path, *, wait_seconds: float | None = None) -> Iterator[None]:
    """Hold the run lock of ``warehouse``, waiting up to ``wait_seconds`` for it (by default
    $FECO_LOCK_WAIT_SECONDS, else 300)."""
    key = warehouse.resolve()
    if key in _held:
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    check_warehouse_path(key)
    wait_seconds = _default_wait_seconds() if wait_seconds is None else wait_seconds
    try:
        key.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise UsageError(f"cannot create the run lock {key}.lock: {error.strerror} (feco keeps it beside the "
                         "warehouse: its folder must be writable)") from None
    try:
        _acquire(handle, key, wait_seconds)
        _held[key] = 1
        try:
            yield
        finally:
            del _held[key]
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)


def _default_wait_seconds() -> float:
    # Read when a run waits, not on import: a bad value is then a usage error of that run.
    text = os.environ.get("FECO_LOCK_WAIT_SECONDS", "300")
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not seconds >= 0:  # NaN as well: no deadline would ever pass
        raise UsageError(f"FECO_LOCK_WAIT_SECONDS={text!r} is not a number of seconds (0 or more)")
    return seconds


def check_warehouse_path(warehouse: Path) -> None:
    """A usage error when the warehouse path names a folder (before anything is created)."""
    if warehouse.is_dir():
        raise UsageError(f"the warehouse {warehouse} is a folder: [paths] warehouse must name a DuckDB file, "
                         f"such as {warehouse / 'feco.duckdb'}")


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
