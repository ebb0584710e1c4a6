"""The FeCo paper's sampling study on your own logs: which windows and sizes are close enough?

The paper picked 8 ten-minute windows of 200K events by comparing strategies against a full
day's traffic. ``run_study`` does that for one day: for each window count and events per window
it draws feco's own windowed sample (``sample_day``), and simple random and reservoir samples of
as many events, and compares every feature's coverage with the full day's (errors in points)
and what the sample cost (rows read, seconds).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from feco.config import Config
from feco.errors import DataError
from feco.sampling import day_windows, partition_dir, sample_day
from feco.warehouse import replace_rows

STUDY_SCHEMA = {
    "ds": pl.Date, "strategy": pl.String, "windows": pl.Int32, "events_per_window": pl.Int32,
    "events_sampled": pl.Int64, "rows_sampled": pl.Int64, "rows_read": pl.Int64,
    "seconds": pl.Float64, "mean_error_points": pl.Float64, "max_error_points": pl.Float64,
    "repeats": pl.Int32,
}


def run_study(ds: date, config: Config, *, windows: list[int], events_per_window: list[int],
              repeats: int = 3, progress: Callable[[str], None] | None = None) -> pl.DataFrame:
    """Compare sampling configurations with the full day's coverage of every configured feature.

    For each (windows, events per window) and each of ``repeats`` seeds: feco's windowed
    sample, then a simple random sample and a reservoir sample of as many events as the
    windowed one took. Errors are |sampled - full-day coverage| in points: the mean over
    features (averaged over repeats) and the largest over features and repeats. Rows read are
    the rows each strategy must look at (the windows' rows; the whole day for the others);
    seconds are the wall clock of the first repeat, from disk to coverage.
    `feco sampling-study` runs it (through ``feco.tasks.sampling_study``, which stores it);
    tests/test_sampling_study.py shows it on a day of logs.
    """
    files = _day_files(ds, config.paths.logs)
    rules = _rules(files, config)
    full, per_minute = _full_day(files, config, rules)
    rows = []
    for n_windows in windows:
        for size in events_per_window:
            rows += _configuration(ds, config, files, rules, full, per_minute,
                                   n_windows=n_windows, size=size, repeats=repeats)
            if progress:
                progress(f"{n_windows} windows x {size} events: "
                         + ", ".join(f"{r['strategy']} max {r['max_error_points']:.2f} pts" for r in rows[-3:]))
    return pl.DataFrame(rows, schema=STUDY_SCHEMA, orient="row")


def _day_files(ds: date, logs: Path) -> list[Path]:
    files = sorted(partition_dir(logs, ds).glob("hour=*/*.parquet"))
    if not files:
        raise DataError(f"no logs for {ds} under {logs}")
    return files


def _rules(files: list[Path], config: Config) -> dict[str, tuple[str, float]]:
    """(op, threshold) per feature present in the logs; reference rules take the full day's
    statistic, so every strategy is judged against one fixed threshold."""
    scan = pl.scan_parquet(files, hive_partitioning=False)
    present = [f for f in config.logs.features if f in scan.collect_schema()]
    rules = {f: config.coverage.rule_for(f) for f in present}
    stats = [getattr(_values(f), r.reference)().alias(f) for f, r in rules.items() if r.reference]
    references = scan.select(stats).collect().row(0, named=True) if stats else {}
    return {f: (r.op, references[f] if r.reference else r.threshold) for f, r in rules.items()}


def _values(feature: str) -> pl.Expr:
    # NaN is never present, so never covered: the pipeline's own rule.
    return pl.col(feature).cast(pl.Float64).fill_nan(None)


def coverage_of(frame: pl.LazyFrame | pl.DataFrame, rules: dict[str, tuple[str, float]]) -> pl.DataFrame:
    """Share of rows in which each feature is covered, one column per feature.

    Examples
    --------
    >>> frame = pl.DataFrame({"a": [0.0, 1.0, float("nan"), 2.0]})
    >>> coverage_of(frame, {"a": (">", 0.0)}).item()
    0.5
    """
    covered = {">": lambda v, t: v > t, "!=": lambda v, t: v != t}
    return frame.lazy().select(
        (covered[op](_values(f), t).sum() / pl.len()).alias(f) for f, (op, t) in rules.items()
    ).collect()


def _full_day(files: list[Path], config: Config, rules: dict) -> tuple[np.ndarray, pl.DataFrame]:
    """The full day's coverage per feature, and its rows per minute (to count rows read)."""
    scan = pl.scan_parquet(files, hive_partitioning=False)
    full = coverage_of(scan, rules).to_numpy().ravel()
    per_minute = (scan.group_by(pl.col(config.logs.timestamp).dt.truncate("1m").alias("minute"))
                  .agg(pl.len().alias("rows")).collect())
    return full, per_minute


def _configuration(ds, config, files, rules, full, per_minute, *, n_windows, size, repeats) -> list[dict]:
    variant = _variant(config, windows=n_windows, events=size)
    rows_in_windows = _rows_in_windows(ds, variant, per_minute)
    day_rows = int(per_minute.get_column("rows").sum())
    results = {s: {"errors": [], "seconds": None, "events": 0, "rows": 0} for s in ("windows", "random", "reservoir")}
    for repeat in range(repeats):
        seeded = _variant(variant, seed=config.sampling.seed + repeat)
        started = time.perf_counter()
        sample, summary = sample_day(ds, seeded)
        wanted = int(summary.get_column("events_sampled").sum())
        _record(results["windows"], sample, rules, full, started, events=wanted)
        rng = np.random.default_rng([config.sampling.seed, repeat, n_windows, size])
        for strategy, draw in (("random", _simple_random), ("reservoir", _reservoir)):
            started = time.perf_counter()
            drawn = draw(files, wanted, rng=rng, event_id=config.logs.event_id)
            _record(results[strategy], drawn, rules, full, started, events=wanted)
    return [
        {"ds": ds, "strategy": strategy, "windows": n_windows, "events_per_window": size,
         "events_sampled": r["events"], "rows_sampled": r["rows"],
         "rows_read": rows_in_windows if strategy == "windows" else day_rows,
         "seconds": r["seconds"], "mean_error_points": float(np.mean([e.mean() for e in r["errors"]])),
         "max_error_points": float(max(e.max() for e in r["errors"])), "repeats": repeats}
        for strategy, r in results.items()
    ]


def _record(result: dict, sample: pl.DataFrame, rules: dict, full: np.ndarray, started: float, *,
            events: int) -> None:
    sampled = coverage_of(sample, rules).to_numpy().ravel()
    if result["seconds"] is None:  # the first repeat's time: later ones read from a warm cache
        result |= {"seconds": time.perf_counter() - started, "events": events, "rows": sample.height}
    result["errors"].append(100 * np.abs(sampled - full))


def _variant(config: Config, **changes) -> Config:
    renamed = {"windows": "windows", "events": "events_per_window", "seed": "seed"}
    sampling = {renamed[k]: v for k, v in changes.items()}
    if "windows" in sampling:  # explicit starts fit one window count only; spread the others evenly
        sampling["window_starts"] = None
    return config.model_copy(update={"sampling": config.sampling.model_copy(update=sampling)})


def _rows_in_windows(ds: date, config: Config, per_minute: pl.DataFrame) -> int:
    minute = pl.col("minute").dt.replace_time_zone(None) if per_minute.schema["minute"].time_zone else pl.col("minute")
    inside = pl.any_horizontal(
        minute.is_between(w.start.replace(tzinfo=None), w.end.replace(tzinfo=None), closed="left")
        for w in day_windows(ds, config))
    return int(per_minute.filter(inside).get_column("rows").sum())


def _simple_random(files: list[Path], k: int, *, rng: np.random.Generator, event_id: str) -> pl.DataFrame:
    """A simple random sample of k events over the whole day: one pass for the ids, one for rows."""
    scan = pl.scan_parquet(files, hive_partitioning=False)
    ids = scan.select(pl.col(event_id).unique()).collect().get_column(event_id).sort()
    chosen = ids.gather(rng.choice(ids.len(), size=min(k, ids.len()), replace=False))
    return scan.filter(pl.col(event_id).is_in(chosen.implode())).collect()


def _reservoir(files: list[Path], k: int, *, rng: np.random.Generator, event_id: str) -> pl.DataFrame:
    """A uniform sample of k events in one streaming pass, holding at most k events and one file.

    Each event gets a uniform random key and the reservoir keeps the k smallest keys seen so
    far (reservoir sampling by random priorities), so the day is read once, in order.
    """
    kept = None
    for path in files:
        rows = pl.read_parquet(path, hive_partitioning=False)
        if rows.height == 0:
            continue
        ids = rows.get_column(event_id).unique(maintain_order=True)
        rows = rows.join(pl.DataFrame({event_id: ids, "_key": rng.random(ids.len())}), on=event_id)
        kept = rows if kept is None else pl.concat([kept, rows], how="vertical_relaxed")
        cutoff = kept.get_column("_key").unique().sort().head(k).max()
        kept = kept.filter(pl.col("_key") <= cutoff)
    if kept is None:
        raise DataError("no rows in the day's logs")
    return kept.drop("_key")


def as_table(study: pl.DataFrame) -> pl.DataFrame:
    """The study as printed: costs and errors rounded, cheapest first within each strategy."""
    return (study.sort("strategy", "rows_read", "windows")
            .select("strategy", "windows", "events_per_window", "events_sampled", "rows_read",
                    pl.col("seconds").round(2), pl.col("mean_error_points").round(3),
                    pl.col("max_error_points").round(3)))


def cheapest_line(study: pl.DataFrame, *, target_points: float = 0.5) -> str:
    """One line naming the cheapest configuration (fewest rows read) with every feature's error
    under the target in every repeat, per strategy."""
    lines = []
    for strategy in ("windows", "random", "reservoir"):
        fits = study.filter((pl.col("strategy") == strategy) & (pl.col("max_error_points") < target_points))
        if fits.is_empty():
            lines.append(f"{strategy}: none under {target_points:g} points")
            continue
        best = fits.sort("rows_read", "events_sampled").row(0, named=True)
        lines.append(f"{strategy}: {best['windows']} windows x {best['events_per_window']:,} events "
                     f"({best['events_sampled']:,} events, {best['rows_read']:,} rows read, "
                     f"{best['seconds']:.2f}s, max error {best['max_error_points']:.3f} points)")
    return f"cheapest with every feature under {target_points:g} points: " + "; ".join(lines)


def store_study(conn: duckdb.DuckDBPyConnection, study: pl.DataFrame) -> None:
    """Replace the studied days' rows of ``sampling_study`` with ``study``, in one transaction."""
    days = study.get_column("ds").unique().to_list()
    replace_rows(conn, [("sampling_study", "list_contains($days, ds)", {"days": days}, study)])
