"""How fast `feco generate-logs` writes a production-sized day, and what each codec costs.

Prints rows per second and MB on disk for one ~20M-row day (about 1.6M search events) written
as 24 hourly Parquet files, then, on the peak hour alone, the write time and size of zstd,
snappy and lz4 against no compression, to justify the codec the writer uses.

Run: ``.venv/bin/python bench/generate_speed.py [--events-per-day N] [--out DIR]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from feco.generator import generate_logs
from feco.generator.day import hour_table, make_plan
from feco.generator.writer import ROW_GROUP_ROWS

DAY = dt.date(2026, 3, 2)  # a Monday: close to the weekly mean volume
LAUNCH = dt.date(2026, 2, 1)
CODECS = [("none", None), ("snappy", None), ("lz4", None), ("zstd", 1), ("zstd", 3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events-per-day", type=int, default=1_600_000)
    parser.add_argument("--out", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="feco-bench-"))
    try:
        bench_day(out / "logs", events_per_day=args.events_per_day)
        bench_codecs(out / "codecs", events_per_day=args.events_per_day)
    finally:
        if args.out is None:
            shutil.rmtree(out)


def bench_day(out: Path, *, events_per_day: int) -> None:
    started = time.perf_counter()
    files = generate_logs(
        out, start=DAY, days=1, events_per_day=events_per_day, new_region_launch=LAUNCH
    )
    seconds = time.perf_counter() - started
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    print(
        f"one day: {rows:,} rows in {seconds:.1f} s = {rows / seconds:,.0f} rows/s; "
        f"{size_mb:,.0f} MB on disk ({size_mb * 1e6 / rows:.1f} bytes/row)"
    )


def bench_codecs(out: Path, *, events_per_day: int) -> None:
    plan = make_plan(DAY, events_per_day=events_per_day, seed=0, new_region_launch=LAUNCH)
    peak = int(plan.minute_counts.reshape(24, 60).sum(axis=1).argmax())
    started = time.perf_counter()
    table = hour_table(plan, peak)
    generate_s = time.perf_counter() - started
    print(f"peak hour {peak:02d}: {table.num_rows:,} rows generated in {generate_s:.2f} s")
    out.mkdir(parents=True, exist_ok=True)
    baseline = None
    for codec, level in CODECS:
        path = out / f"{codec}{level or ''}.parquet"
        started = time.perf_counter()
        pq.write_table(
            table, path, row_group_size=ROW_GROUP_ROWS, compression=codec, compression_level=level
        )
        seconds = time.perf_counter() - started
        size_mb = path.stat().st_size / 1e6
        baseline = baseline or (seconds, size_mb)
        print(
            f"  {codec + (f'-{level}' if level else ''):8s} write {seconds:5.2f} s "
            f"({seconds / baseline[0]:.2f}x none)  {size_mb:6.1f} MB ({size_mb / baseline[1]:.2f}x none)"
        )


if __name__ == "__main__":
    main()
