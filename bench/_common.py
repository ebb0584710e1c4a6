"""Shared set-up for the benchmarks: one large generated day, cached under bench/out/."""

from __future__ import annotations

import resource
import time
from datetime import date
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
DAY = date(2026, 6, 3)  # a Wednesday: weekday traffic
EVENTS_FOR_20M_ROWS = 1_600_000


def large_day(events: int = EVENTS_FOR_20M_ROWS) -> Path:
    """Generate (once) a day of about 20M rows; return the logs root."""
    from feco.generator import generate_logs

    logs = OUT / f"logs_{events}"
    if not (logs / f"ds={DAY}").exists():
        started = time.perf_counter()
        generate_logs(logs, start=DAY, days=1, events_per_day=events, seed=11)
        print(f"generated {DAY} ({events:,} events) in {time.perf_counter() - started:.1f}s")
    return logs


def best_of(function, repeats: int = 3) -> float:
    """The fastest of a few runs: the least disturbed by the other work on the machine."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
