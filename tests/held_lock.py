"""Another run holding a warehouse's run lock, for tests that every writer waits for it."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def held_by_another_run(warehouse: Path) -> Iterator[None]:
    """Hold ``<warehouse>.lock`` as another process would: flock on a file opened apart
    conflicts with feco's own opening even in this process, where feco's lock is re-entrant."""
    handle = os.open(f"{warehouse.resolve()}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)
