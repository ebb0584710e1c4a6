"""Long run: 180 generated days through the pipeline, and the same days one process a day.

Prints the warehouse size (total and per day), the time per day at the start and at the end
of the backfill (history grows, the time per day should not), and whether the moving
averages and alerts of the one-process backfill equal those of a run made one `feco run`
process per day. Asserts nothing.

    .venv/bin/python bench/long_run.py [--days 180]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out" / "long_run"
START = date(2026, 1, 1)
EVENTS_PER_DAY = 20_000


def config_file(folder: Path, logs: Path) -> Path:
    text = (REPO / "configs" / "feco.toml").read_text()
    text = text.replace('logs = "../var/demo/logs"', f'logs = "{logs}"')
    text = text.replace('samples = "../var/demo/samples"', 'samples = "samples"')
    text = text.replace('warehouse = "../var/demo/feco.duckdb"', 'warehouse = "feco.duckdb"')
    text = text.replace('jsonl = "../var/demo/alerts.jsonl"', 'jsonl = "alerts.jsonl"')
    text = text.replace('models = "../var/demo/models"', 'models = "models"')
    text = text.replace("reference = { start = 2026-11-01, end = 2026-11-07 }",
                        f"reference = {{ start = {START}, end = {START + timedelta(days=6)} }}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "feco.toml"
    path.write_text(text)
    return path


def feco(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feco", *args], capture_output=True, text=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--backfill-only", action="store_true", help="skip the one-process-a-day run")
    args = parser.parse_args()
    days = args.days
    end = START + timedelta(days=days - 1)
    logs = OUT / "logs"
    if not (logs / f"ds={end}").exists():
        from feco.generator import generate_logs

        started = time.perf_counter()
        generate_logs(logs, start=START, days=days, events_per_day=EVENTS_PER_DAY, seed=5,
                      new_region_launch=START + timedelta(days=30))
        print(f"generated {days} days in {time.perf_counter() - started:.0f}s")

    one = config_file(OUT / "backfill", logs)
    for stale in ("feco.duckdb", "feco.duckdb.wal"):
        (one.parent / stale).unlink(missing_ok=True)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "feco", "backfill", "--start", str(START), "--end", str(end),
                             "--config", str(one)], capture_output=True, text=True)
    total = time.perf_counter() - started
    per_day = [float(line.rsplit("(", 1)[1].rstrip("s)")) for line in result.stderr.splitlines() if " ok: " in line]
    size = (one.parent / "feco.duckdb").stat().st_size
    print(f"backfill of {days} days: {total:.0f}s, exit {result.returncode}")
    print(f"seconds per day: first 10 median {statistics.median(per_day[:10]):.2f}, "
          f"last 10 median {statistics.median(per_day[-10:]):.2f}")
    print(f"warehouse: {size / 2**20:.1f} MiB in all, {size / days / 2**10:.0f} KiB per day")

    if args.backfill_only:
        return
    each = config_file(OUT / "daily", logs)
    for stale in ("feco.duckdb", "feco.duckdb.wal"):
        (each.parent / stale).unlink(missing_ok=True)
    started = time.perf_counter()
    for offset in range(days):
        ds = START + timedelta(days=offset)
        run = feco("run", "--ds", str(ds), "--config", str(each))
        if run.returncode:
            print(f"{ds}: {run.stderr.strip()}")
    print(f"{days} separate `feco run` processes: {time.perf_counter() - started:.0f}s")
    print("identical to the one-process backfill:")
    for table, query in {
        "feco_ma7": "SELECT * FROM feco_ma7 ORDER BY ALL",
        "alerts": "SELECT * FROM alerts ORDER BY ALL",
        "coverage_states": "SELECT * FROM coverage_states ORDER BY ALL",
    }.items():
        with duckdb.connect(str(one.parent / "feco.duckdb"), read_only=True) as a, \
                duckdb.connect(str(each.parent / "feco.duckdb"), read_only=True) as b:
            left, right = a.sql(query).fetchall(), b.sql(query).fetchall()
        print(f"  {table:16} {'yes' if left == right else 'NO'} ({len(left):,} rows)")


if __name__ == "__main__":
    main()
