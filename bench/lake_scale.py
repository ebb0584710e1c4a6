"""Peak memory and time of `feco run` on generated days of 25M, 100M and 400M rows.

Each run is a fresh `python -m feco run --ds …` process on a fresh warehouse; its peak RSS is
the kernel's (wait4's ru_maxrss), its time the wall clock and the CPU time it used. The
sample is the same size on every day (``--events-per-window``, 20,000 by default: 160K
events, about 2M rows), so memory set by the sample stays flat while memory set by traffic
grows with the day.

    nice -n 10 .venv/bin/python bench/lake_scale.py --parts 1 4 16
    nice -n 10 .venv/bin/python bench/lake_scale.py --parts 1 --code var/before . --repeat 3   # interleaved
    nice -n 10 .venv/bin/python bench/lake_scale.py --parts 4 --engine spark

``--parts N`` is a day of N × ~25M rows (bench/_lake.py); days are generated once under
var/lake/ (about 0.75 GB of Parquet per part; delete the folder afterwards). Prints a table;
asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from _lake import lake_day

DAY = date(2026, 6, 3)
LAKE = REPO / "var" / "lake"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--code", type=Path, nargs="+", default=[REPO],
                        help="checkouts whose feco to run, interleaved; ratios are to the first")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each checkout on each day")
    parser.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    parser.add_argument("--events-per-window", type=int, default=20_000)
    args = parser.parse_args()
    codes = [code.resolve() for code in args.code]
    print(f"engine {args.engine}, {args.events_per_window:,} events a window; code: "
          + ", ".join(f"{c.name} = {c}" for c in codes))
    print(f"{'code':>10} {'rows in day':>12} {'GB':>5} {'events sampled':>15} {'rows sampled':>13} "
          f"{'seconds':>8} {'CPU s':>6} {'peak RSS MB':>12}")
    for parts in args.parts:
        logs = lake_day(LAKE, DAY, parts=parts)
        rows, size = _day_size(logs)
        runs = {code: [] for code in codes}
        for _ in range(args.repeat):
            for code in codes:  # interleaved, so a busy moment of a shared machine hits both
                run = LAKE / f"run-{code.name}-{args.engine}-{parts}x"
                shutil.rmtree(run, ignore_errors=True)
                run.mkdir(parents=True)
                config = _config(run, logs, engine=args.engine, events=args.events_per_window)
                seconds, cpu, peak_mb, output, _ = _measure(code, config)
                runs[code].append((seconds, cpu, peak_mb))
                print(f"{code.name:>10} {rows:>12,} {size / 1e9:>5.1f} {_field(output, 'events'):>15} "
                      f"{_field(output, 'rows'):>13} {seconds:>8.1f} {cpu:>6.1f} {peak_mb:>12,.0f}", flush=True)
        if args.repeat > 1 or len(codes) > 1:
            _print_medians(runs)


def _print_medians(runs: dict[Path, list[tuple[float, float, float]]]) -> None:
    """Median time, CPU and peak RSS of each checkout, and its ratio to the first one's."""
    medians = {code: [statistics.median(values) for values in zip(*measured)] for code, measured in runs.items()}
    first = next(iter(medians.values()))
    for code, (seconds, cpu, peak_mb) in medians.items():
        print(f"{'median':>10} {code.name}: {seconds:.1f} s ({seconds / first[0]:.2f}x), CPU {cpu:.1f} s "
              f"({cpu / first[1]:.2f}x), peak RSS {peak_mb:,.0f} MB ({peak_mb / first[2]:.2f}x)", flush=True)


def _config(run: Path, logs: Path, *, engine: str, events: int) -> Path:
    text = (REPO / "configs" / "feco.toml").read_text()
    text = text.replace('logs = "../var/demo/logs"', f'logs = "{logs}"')
    text = text.replace('samples = "../var/demo/samples"', f'samples = "{run / "samples"}"')
    text = text.replace('warehouse = "../var/demo/feco.duckdb"', f'warehouse = "{run / "feco.duckdb"}"')
    text = text.replace("events_per_window = 300", f"events_per_window = {events}")
    if engine != "duckdb":
        text = f'engine = "{engine}"\n' + text
    path = run / "feco.toml"
    path.write_text(text)
    return path


def _measure(code: Path, config: Path) -> tuple[float, float, float, str, float]:
    """Wall time, CPU time (user + system, the process and the children it waited for), peak
    RSS of one `feco run`, its output, and the CPU time of the JVMs in its process tree that it
    does not wait for (Spark's driver: pyspark starts it and leaves it to end on its own), as
    last seen in samples every 0.1 s. Peak RSS is the larger of the kernel's peak for the
    process (wait4) and the sum over its process tree in those samples. CPU time moves less
    than wall time when others share the machine."""
    import psutil

    env = os.environ | {"PYTHONPATH": str(code)}
    output = LAKE / "run.log"
    started = time.perf_counter()
    with output.open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "feco", "run", "--ds", DAY.isoformat(), "--config",
                                    str(config)], cwd=code, env=env, stdout=log, stderr=subprocess.STDOUT)
        tree_peak, watched, jvm_cpu = 0, psutil.Process(process.pid), {}
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            tree_peak = max(tree_peak, _tree_rss(watched))
            jvm_cpu |= _jvm_cpu(watched)
            time.sleep(0.1)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"feco run failed:\n{output.read_text()}")
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, max(tree_peak, usage.ru_maxrss * 1024) / 2**20, output.read_text(), sum(jvm_cpu.values())


def _jvm_cpu(process) -> dict[int, float]:
    """CPU seconds so far of each java process under ``process``."""
    import psutil

    seen = {}
    try:
        for child in process.children(recursive=True):
            if child.name() == "java":
                times = child.cpu_times()
                seen[child.pid] = times.user + times.system
    except psutil.Error:  # ended while we looked: its last sample stands
        pass
    return seen


def _tree_rss(process) -> int:
    import psutil

    try:
        return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)])
    except psutil.Error:  # the process ended while we looked
        return 0


def _day_size(logs: Path) -> tuple[int, int]:
    import pyarrow.parquet as pq

    files = sorted((logs / f"ds={DAY}").glob("hour=*/*.parquet"))
    return sum(pq.ParquetFile(f).metadata.num_rows for f in files), sum(f.stat().st_size for f in files)


def _field(output: str, name: str) -> str:
    """A count from `feco run`'s summary line: "…: published 160,000 events, 2,012,345 rows; …"."""
    found = re.search(rf"([\d,]+) {name}", output)
    return found.group(1) if found else "?"


if __name__ == "__main__":
    main()
