"""What the ranker's daily attribution and the incident replay cost, at the demo's scale and
the paper's (1.6M sampled events a day, about 20M rows).

- The score step (one pass over the day's sample, whole events a batch at a time: predict,
  the model's and the served order's NDCG per segment) against the same pass keeping the rows
  the attribution draws, labelling them with their segments and explaining them with exact
  TreeSHAP (``[ranker] shap_rows`` for all traffic, ``shap_segment_rows`` of each segment
  that can page). Budget: the attribution adds at most 2x the score step at the demo's scale.
- One incident replay: choose the segment's events in some row groups of its clean days,
  apply the loss in five draws, score before and after, bootstrap.

Demo scale reads the demo's own warehouse and samples (run `make demo` first); times are the
best of a few, interleaved (the least disturbed by other work). Paper scale generates one day
of 1.6M events (cached in bench/out/), writes it as a day's sample (hour % 8 standing in for
the eight windows), links it as seven more days for the replay's reference, trains a ranker
on 50K of its events (cached), each in a child process, then runs each step once in a process
of its own, so each peak RSS is the step's own (the kernel's, wait4; a child forked from a
parent that held the day would count the parent's pages). Prints; asserts nothing.

    nice -n 10 .venv/bin/python bench/cost_speed.py [--scale demo paper]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DAY, OUT, large_day, peak_rss_mb

REPO = Path(__file__).resolve().parents[1]
PAPER_MODEL = OUT / "paper_model.txt"


def score_step(ds: date, config, model, counts: pl.DataFrame) -> None:
    """The score step alone: read, predict, NDCG of the model and of the served order."""
    from feco.ranker.daily import read_day

    read_day(ds, config, model, label=config.logs.label, threshold=0.0)


def shap_step(ds: date, config, model, counts: pl.DataFrame) -> None:
    """The score step with the daily attribution: the same pass keeping the drawn rows, their
    labels, exact TreeSHAP per segment."""
    from feco.coverage import SEGMENT_DIMENSIONS
    from feco.ranker.attribution import daily_shap, plan_draws
    from feco.ranker.daily import ltr_rows, read_day
    from feco.ranker.rows import DRAW, label_rows

    settings = config.ranker
    draws = plan_draws(counts, rows=settings.shap_rows, per_segment=settings.shap_segment_rows,
                       incidents=config.alerts.incidents)
    _, _, kept = read_day(ds, config, model, label=config.logs.label, threshold=draws.threshold)
    labels = label_rows(kept, ds, config).rename(lambda name: f"segment:{name}")
    frame = ltr_rows(kept.hstack(labels), config, keep={**{d: f"segment:{d}" for d in SEGMENT_DIMENSIONS}, DRAW: DRAW},
                     features=model.features)
    daily_shap(frame, model, ds=ds, run_id="bench", segments=config.segments.names(), draws=draws)


def replay(days: list[date], config, model, segment: tuple[str, str], losses) -> dict:
    from feco.ranker.replay import DRAWS, IN_SEGMENT, reference_rows, replay_cost

    started = time.perf_counter()
    settings = config.alerts.severity
    reference = reference_rows(days, config, segment, events=settings.events, seed=settings.seed,
                               features=model.features)
    read = time.perf_counter() - started
    cost = replay_cost(reference, model, losses, seed=settings.seed, resamples=settings.resamples,
                       rows=reference.get_column(IN_SEGMENT).to_numpy(), draws=DRAWS)
    return {"read": read, "total": time.perf_counter() - started, "events": cost.events, "rows": reference.height}


def report(scale: str, ds: date, config, model, counts: pl.DataFrame, repeats: int) -> None:
    times = {score_step: [], shap_step: []}
    for _ in range(repeats):  # interleaved, so a busy moment of a shared machine hits both
        for step, taken in times.items():
            started = time.perf_counter()
            step(ds, config, model, counts)
            taken.append(time.perf_counter() - started)
    base, with_shap = min(times[score_step]), min(times[shap_step])
    print(f"{scale}: score step {base:.2f}s; with daily SHAP ({config.ranker.shap_rows:,} rows, "
          f"{config.ranker.shap_segment_rows:,} a pageable segment) {with_shap:.2f}s: adds {with_shap - base:.2f}s = "
          f"{(with_shap - base) / base:.2f}x the score step (budget 2x at the demo's scale); "
          f"peak RSS {peak_rss_mb():,.0f} MB")


def demo(repeats: int) -> None:
    import shutil
    import tempfile

    from feco.config import load_config
    from feco.ranker.daily import load_model
    from feco.ranker.perturb import Loss
    from feco.ranker.store import current_model
    from feco.warehouse import named_query, open_read_only

    config = load_config(REPO / "configs" / "feco.toml")
    if not config.paths.warehouse.exists():
        sys.exit("no demo warehouse: run `make demo` first")
    with tempfile.TemporaryDirectory() as folder:  # a copy: a demo run may hold the file
        copy = Path(folder) / "feco.duckdb"
        shutil.copy(config.paths.warehouse, copy)
        with open_read_only(copy) as conn:
            costs = conn.sql("SELECT * FROM incident_costs ORDER BY ds, incident_id").pl()
            ds = conn.sql("SELECT max(ds) FROM ranker_daily").fetchall()[0][0]
            run = current_model(conn, ds)
            counts = named_query(conn, "ranker_segment_rows", {"ds": ds})
    model = load_model(Path(run["artifact"]))
    rows = pl.read_parquet(str(config.paths.samples / f"ds={ds}" / "window=*" / "*.parquet")).height
    print(f"demo: {ds}, {rows:,} sampled rows, model {run['kind']} {run['version']} ({model.best_iteration} trees)")
    report("demo", ds, config, model, counts, repeats)
    for cost in costs.iter_rows(named=True):
        days = [cost["reference_start"] + timedelta(days=d)
                for d in range((cost["reference_end"] - cost["reference_start"]).days + 1)]
        losses = [Loss(f, s, k) for f, s, k in zip(cost["features"], cost["loss_shares"], cost["loss_kinds"])]
        timing = min((replay(days, config, model, (cost["segment_dim"], cost["segment_value"]), losses)
                      for _ in range(repeats)), key=lambda t: t["total"])
        print(f"demo replay {cost['ds']} {','.join(cost['features'])} in {cost['segment_dim']}={cost['segment_value']}: "
              f"{timing['total']:.2f}s ({timing['read']:.2f}s reading {len(days)} days; {timing['events']:,} events "
              f"of {timing['rows']:,} rows scored six times)")


def paper_config():
    from feco.config import parse_config
    from feco.generator import FEATURES

    return parse_config({"paths": {"logs": str(large_day()), "samples": str(OUT / "paper_samples"),
                                   "warehouse": str(OUT / "paper.duckdb")},
                         "logs": {"features": list(FEATURES)}, "segments": {"crosses": [["region", "query_band"]]}},
                        source=REPO / "configs" / "feco.toml")


def paper(repeats: int) -> None:
    # Set up in a child too: a child forked from a parent holding the day counts its memory.
    print(f"paper: set up {_child('setup')['detail']}")
    print(f"paper: {DAY}, one generated day of 1.6M events as its sample; each step in a process of its own")
    for step in ("score", "shap", "replay"):
        result = _child(step)
        print(f"paper {step}: {result['seconds']:.1f}s, peak RSS {result['peak_mb']:,.0f} MB"
              + (f" ({result['detail']})" if result.get("detail") else ""), flush=True)


def _train_paper_model(config) -> None:
    """A ranker on 50K of the day's events (LightGBM's own API), saved for the child processes."""
    import lightgbm as lgb

    from feco.generator import FEATURES
    from feco.ranker.rows import chosen_events

    rows = chosen_events([DAY], config, ["event_id", "position", "label", *FEATURES], events=50_000, seed=1)
    rows = rows.sort("event_id", "position")
    data = lgb.Dataset(rows.select(FEATURES).to_numpy(), label=rows["label"].to_numpy(),
                       group=rows.group_by("event_id", maintain_order=True).len()["len"].to_numpy(),
                       feature_name=list(FEATURES))
    started = time.perf_counter()
    booster = lgb.train({**config.ranker.params, "metric": "ndcg"}, data, num_boost_round=100)
    booster.save_model(str(PAPER_MODEL))
    (PAPER_MODEL.parent / "meta.json").write_text(json.dumps({"features": list(FEATURES)}))
    print(f"paper: ranker trained on 50K events in {time.perf_counter() - started:.0f}s (100 rounds)")


def _child(step: str) -> dict:
    """Run one paper-scale step in a fresh process: its wall time, output and peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, __file__, "--child", step], stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(process.pid, 0)
    output = process.stdout.read()
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"paper step {step} failed")
    return {"seconds": time.perf_counter() - started, "peak_mb": usage.ru_maxrss / 1024,
            "detail": output.strip().splitlines()[-1] if output.strip() else ""}


def child(step: str) -> None:
    from feco.coverage import compute_states
    from feco.ranker.daily import load_model
    from feco.ranker.perturb import Loss
    from feco.sample_folder import sample_files

    config = paper_config()
    if step == "setup":
        _write_sample(config, [DAY, *(DAY - timedelta(days=d) for d in range(7, 0, -1))])
        if not PAPER_MODEL.exists():
            _train_paper_model(config)
        print(f"sample under {config.paths.samples}, ranker {PAPER_MODEL}")
        return
    model = load_model(PAPER_MODEL)
    if step == "replay":
        days = [DAY - timedelta(days=d) for d in range(7, 0, -1)]
        timing = replay(days, config, model, ("region", "DE"), [Loss("eng_ctr_7d", 0.9)])
        print(f"eng_ctr_7d -90% in region=DE over 7 days: {timing['read']:.1f}s reading, {timing['events']:,} events "
              f"of {timing['rows']:,} rows scored six times")
        return
    started = time.perf_counter()
    if step == "score":
        score_step(DAY, config, model, None)
    else:
        states, _ = compute_states(sample_files(DAY, config.paths.samples), ds=DAY, config=config)
        counts = (states.filter(pl.col("feature") == config.logs.features[0])
                  .group_by("segment_dim", "segment_value").agg(pl.col("n_rows").sum()))
        started = time.perf_counter()  # the coverage step counts these; not the attribution's cost
        shap_step(DAY, config, model, counts)
    print(f"{time.perf_counter() - started:.1f}s in the step")


def _write_sample(config, days: list[date]) -> None:
    """The generated day as the sample of each of ``days`` (hard links after the first)."""
    first = samples_of(config, days[0])
    if not (first / "_windows.parquet").exists():
        logs = pl.read_parquet(str(config.paths.logs / f"ds={DAY}" / "hour=*" / "*.parquet"))
        logs = logs.with_columns((pl.col("event_ts").dt.hour() % 8).alias("w"))
        for window, part in logs.group_by("w"):
            (first / f"window={window[0]}").mkdir(parents=True, exist_ok=True)
            part.drop("w").write_parquet(first / f"window={window[0]}" / "part-0.parquet")
        pl.DataFrame({"window": list(range(8))}).write_parquet(first / "_windows.parquet")
    for ds in days[1:]:
        for source in first.rglob("*.parquet"):
            target = samples_of(config, ds) / source.relative_to(first)
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(source, target)


def samples_of(config, ds: date) -> Path:
    return Path(config.paths.samples) / f"ds={ds}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", nargs="+", choices=["demo", "paper"], default=["demo", "paper"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", choices=["setup", "score", "shap", "replay"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average, {os.cpu_count()} cores)")
    for scale in args.scale:
        {"demo": demo, "paper": paper}[scale](args.repeats)


if __name__ == "__main__":
    main()
