"""`feco run` at the paper's scale: a generated day of about 340M rows sampled at 200,000
events a window (1.6M events, about 20M sampled rows), end to end, then step by step.

First one `python -m feco run` on a fresh warehouse: wall, CPU, peak RSS (bench/lake_scale.py's
measure). Then the same run's steps in the order `feco run` takes them (feco.tasks.run_day:
sample, sample_reference, compute_coverage, publish, notify), each in its own process on
another fresh warehouse, so each step's peak RSS is its own; a step's figures include starting
Python and importing feco (about 1 s). A model serves the day (`[ranker.model]`: LightGBM's own
API trained on about 50K events of one hour of the day, 100 rounds), so `publish` also scores
the day, explains it and stores its served NDCG (the issue-36 score step; `--no-model`: as
before, nothing scored). bench/cost_speed.py measures the replay at this scale.

    nice -n 10 .venv/bin/python bench/paper_scale.py --parts 14
    rm -r var/lake   # the generated day: about 0.75 GB of Parquet per part

``--parts N`` is a day of N × ~24M rows (bench/_lake.py, shared with bench/lake_scale.py),
generated once under var/lake/ (gitignored). Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from _lake import lake_day
from lake_scale import DAY, LAKE, _config, _day_size, _field, _measure

STEPS = ["sample", "sample_reference", "compute_coverage", "publish", "notify"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=14)
    parser.add_argument("--events-per-window", type=int, default=200_000)
    parser.add_argument("--no-model", action="store_true", help="no model serves the day: publish scores nothing")
    args = parser.parse_args()
    started = time.perf_counter()
    logs = _generated_day(args.parts)
    rows, size = _day_size(logs)
    print(f"day {DAY}: {rows:,} rows, {size / 1e9:.1f} GB of Parquet ({args.parts} parts; "
          f"ready in {time.perf_counter() - started:.0f} s); {args.events_per_window:,} events a window")

    model = None if args.no_model else _team_model(logs)
    config = _fresh_config("whole", logs, args.events_per_window, model)
    seconds, cpu, peak_mb, output, _ = _measure(REPO, config)
    print(f"feco run, end to end: {seconds:.1f} s, CPU {cpu:.1f} s, peak RSS {peak_mb:,.0f} MB; "
          f"{_field(output, 'events')} events, {_field(output, 'rows')} rows sampled")

    config = _fresh_config("steps", logs, args.events_per_window, model)
    print(f"{'step':>18} {'seconds':>8} {'CPU s':>6} {'peak RSS MB':>12}")
    totals = [0.0, 0.0, 0.0]
    for step in STEPS:
        seconds, cpu, peak_mb = _measure_step(step, config)
        totals = [totals[0] + seconds, totals[1] + cpu, max(totals[2], peak_mb)]
        print(f"{step:>18} {seconds:>8.1f} {cpu:>6.1f} {peak_mb:>12,.0f}", flush=True)
    print(f"{'all steps':>18} {totals[0]:>8.1f} {totals[1]:>6.1f} {totals[2]:>12,.0f} (peak: the largest step's)")


def _generated_day(parts: int) -> Path:
    """The day's logs root, generated in a child process: a child inherits its parent's
    resident memory at the fork, and generating takes gigabytes, which would then count in
    every step's peak."""
    code = f"import datetime, pathlib; from _lake import lake_day; lake_day(pathlib.Path({str(LAKE)!r}), {DAY!r}, parts={parts})"
    subprocess.run([sys.executable, "-c", code], cwd=REPO / "bench", check=True)
    return lake_day(LAKE, DAY, parts=parts)  # generated: only its path


def _fresh_config(name: str, logs: Path, events: int, model: Path | None) -> Path:
    run = LAKE / f"paper-{name}"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    path = _config(run, logs, engine="duckdb", events=events)
    if model is not None:
        path.write_text(path.read_text().replace('models = "../var/demo/models"', f'models = "{run / "models"}"')
                        + f'\n[ranker.model]\nfile = "{model}"\nvalid_from = {DAY}\n')
    return path


def _team_model(logs: Path) -> Path:
    """A lambdarank model trained with LightGBM's own API on about 50K events of the day's noon
    hour, in a child process (its memory would count in every step's peak otherwise)."""
    path = LAKE / "team_model.txt"
    if not path.exists():
        code = ("import lightgbm as lgb, polars as pl; from feco.generator import FEATURES as F; "
                f"rows = pl.read_parquet({str(logs / f'ds={DAY}' / 'hour=12' / 'part-0.parquet')!r})"
                ".sort('event_id', 'position').head(600_000); "
                "data = lgb.Dataset(rows.select(F).to_numpy(), label=rows['label'].to_numpy(), "
                "group=rows.group_by('event_id', maintain_order=True).len()['len'].to_numpy(), feature_name=list(F)); "
                "lgb.train({'objective': 'lambdarank', 'num_leaves': 31, 'min_data_in_leaf': 50, 'verbose': -1, "
                f"'seed': 1, 'deterministic': True, 'num_threads': 2}}, data, num_boost_round=100).save_model({str(path)!r})")
        subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
    return path


def _measure_step(step: str, config: Path) -> tuple[float, float, float]:
    """Wall, CPU (user + system) and peak RSS (the kernel's, wait4) of one step's process."""
    code = f"from feco import tasks; print(tasks.{step}({DAY.isoformat()!r}, {str(config)!r}))"
    log = LAKE / f"{step}.log"
    started = time.perf_counter()
    with log.open("w") as output:
        process = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"step {step} failed:\n{log.read_text()}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


if __name__ == "__main__":
    main()
