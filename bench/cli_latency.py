"""How long a small `feco query`, `feco alerts` and `feco status` take from the shell.

Each command runs ``--repeats`` times as a fresh process on a built warehouse (the demo's by
default: `make demo` builds it), after one untimed run that also brings the warehouse's schema
up to date. The table gives each one's median and fastest wall time, and its median as a ratio
to and a difference from that of ``python -c pass`` (the interpreter's start), so a figure
reads against the floor of the same machine at the same moment; ``python -c "import feco.cli"``
(the CLI's own modules) is timed too. The CPU time (user and system, the query's child process
included) is printed beside: it moves less than the wall time when other work shares the
machine, whose load average is printed too.

Usage::

    .venv/bin/python bench/cli_latency.py [--config configs/feco.toml] [--repeats 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def commands(config: str) -> dict[str, list[str]]:
    feco = [sys.executable, "-m", "feco"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import feco.cli"': [sys.executable, "-c", "import feco.cli"],
        "feco query 'SELECT 1'": [*feco, "query", "SELECT 1", "--config", config],
        "feco alerts": [*feco, "alerts", "--config", config],
        "feco status": [*feco, "status", "--config", config],
    }


def timed(command: list[str], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU time of each of ``repeats`` runs, after one untimed run."""
    subprocess.run(command, check=True, capture_output=True, cwd=REPO)
    wall, cpu = [], []
    for _ in range(repeats):
        before = _children_cpu()
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=REPO)
        wall.append(time.perf_counter() - started)
        cpu.append(_children_cpu() - before)
    return wall, cpu


def _children_cpu() -> float:
    """CPU seconds of the processes this one has waited for, and of those they waited for."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(REPO / "configs" / "feco.toml"))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = {name: timed(command, args.repeats) for name, command in commands(args.config).items()}
    floor = statistics.median(rows["python -c pass"][0])
    print(f"{args.repeats} fresh processes each, load average {load:.2f} before, {os.getloadavg()[0]:.2f} after "
          f"({os.cpu_count()} CPUs); config {args.config}")
    print(f"{'command':<30} {'median':>8} {'fastest':>8} {'x python start':>15} {'- python start':>15} "
          f"{'CPU (median)':>13}")
    for name, (wall, cpu) in rows.items():
        median = statistics.median(wall)
        print(f"{name:<30} {median:7.3f}s {min(wall):7.3f}s {median / floor:14.1f}x {median - floor:14.3f}s "
              f"{statistics.median(cpu):12.3f}s")


if __name__ == "__main__":
    main()
