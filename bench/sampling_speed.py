"""Sampling speed on a generated day of about 20M rows and 33 features.

Compares feco's `sample_day` (8 windows of 10 minutes, systematic within each) against
(a) the floor: a plain DuckDB query that only reads the rows of those windows (target: feco
within 1.5x of it) and (b) a full-day scan that filters afterwards (target: feco 10x faster).
Prints the times and ratios; asserts nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import duckdb
import polars as pl
from _common import DAY, OUT, best_of, large_day

from feco.config import load_config, parse_config
from feco.sampling import day_windows, sample_day


def main() -> None:
    logs = large_day()
    base = load_config(Path(__file__).resolve().parents[1] / "configs" / "feco.toml")
    raw = base.model_dump(mode="json", exclude={"source"})
    raw["paths"] = {"logs": str(logs), "samples": str(OUT / "samples"), "warehouse": str(OUT / "b.duckdb")}
    raw["sampling"]["events_per_window"] = 200_000
    config = parse_config(raw, source=OUT / "bench.toml")
    day = logs / f"ds={DAY}"
    rows_in_day = pl.scan_parquet(str(day / "hour=*" / "*.parquet")).select(pl.len()).collect().item()
    windows = day_windows(DAY, config)

    def feco_sample():
        return sample_day(DAY, config)

    def duckdb_window_read():
        conn = duckdb.connect()
        total = 0
        for window in windows:
            files = [str(p) for h in window.hours() for p in (day / f"hour={h:02d}").glob("*.parquet")]
            table = conn.sql(
                "SELECT * FROM read_parquet($files) WHERE event_ts >= $start AND event_ts < $end",
                params={"files": files, "start": window.start, "end": window.end},
            ).to_arrow_table()
            total += table.num_rows
        return total

    def full_scan_then_filter():
        frame = pl.read_parquet(str(day / "hour=*" / "*.parquet"))
        condition = pl.lit(False)
        for window in windows:
            condition = condition | pl.col("event_ts").is_between(window.start, window.end, closed="left")
        return frame.filter(condition).height

    rows, summary = feco_sample()
    window_rows = duckdb_window_read()
    print(f"day: {rows_in_day:,} rows; windows hold {window_rows:,} rows, "
          f"{summary['events_available'].sum():,} events; sampled {rows.height:,} rows, "
          f"{summary['events_sampled'].sum():,} events")
    t_feco = best_of(feco_sample)
    t_floor = best_of(duckdb_window_read)
    t_full = best_of(full_scan_then_filter, repeats=2)
    print(f"feco sample_day:                 {t_feco:7.3f} s")
    print(f"DuckDB read of the window rows:  {t_floor:7.3f} s   feco / floor  = {t_feco / t_floor:5.2f}x (target <= 1.5)")
    print(f"full-day scan, then filter:      {t_full:7.3f} s   full / feco   = {t_full / t_feco:5.1f}x (target >= 10)")


if __name__ == "__main__":
    main()
