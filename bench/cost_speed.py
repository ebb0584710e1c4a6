"""What the ranker's daily attribution and the incident replay cost, at the demo's scale and
the paper's (1.6M sampled events a day, about 20M rows).

- Score step as before (read the day's sample, predict, NDCG per segment) against what the
  SHAP step adds to it (labelling every row with its segments, query bands included, and exact
  TreeSHAP on ``[ranker] shap_rows`` rows, summed per feature and segment). Budget: at most
  2x the score step at the demo's scale.
- One incident replay: read the segment's clean days (two passes a day), apply the loss,
  score before and after, bootstrap.

Demo scale reads the demo's own warehouse and samples (run `make demo` first). Paper scale
generates one day of 1.6M events (cached in bench/out/), writes it as a day's sample (hour %
8 standing in for the eight windows), links it as seven more days for the replay's reference,
and trains a ranker on 100K of its events. Prints times measured in this run (the best of a
few, interleaved: the least disturbed by other work) and their ratios; asserts nothing.

    nice -n 10 .venv/bin/python bench/cost_speed.py [--scale demo paper]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DAY, OUT, large_day, peak_rss_mb

REPO = Path(__file__).resolve().parents[1]


def score_step(ds: date, config, model) -> None:
    """The score step as it was before daily attribution: read, predict, NDCG per segment."""
    from feco.ranker.daily import daily_scores, events_frame

    daily_scores(events_frame([ds], config), model, ds=ds, run_id="bench", segments=config.ranker.segments)


def shap_step(ds: date, config, model) -> None:
    """The score step with daily attribution: labelled read, predict, NDCG, SHAP per segment."""
    from feco.ranker.attribution import daily_shap
    from feco.ranker.daily import daily_scores, events_frame

    frame = events_frame([ds], config, labelled=True)
    daily_scores(frame, model, ds=ds, run_id="bench", segments=config.ranker.segments)
    daily_shap(frame, model, ds=ds, run_id="bench", segments=config.segments.names(),
               rows=config.ranker.shap_rows, seed=config.ranker.seed)


def replay(days: list[date], config, model, segment: tuple[str, str], losses) -> dict:
    from feco.ranker.replay import IN_SEGMENT, reference_rows, replay_cost

    started = time.perf_counter()
    settings = config.alerts.severity
    reference = reference_rows(days, config, segment, events=settings.events, seed=settings.seed)
    read = time.perf_counter() - started
    cost = replay_cost(reference, model, losses, seed=settings.seed, resamples=settings.resamples,
                       rows=reference.get_column(IN_SEGMENT).to_numpy())
    return {"read": read, "total": time.perf_counter() - started, "events": cost.events, "rows": reference.height}


def report(scale: str, ds: date, config, model, repeats: int) -> None:
    times = {score_step: [], shap_step: []}
    for _ in range(repeats):  # interleaved, so a busy moment of a shared machine hits both
        for step, taken in times.items():
            started = time.perf_counter()
            step(ds, config, model)
            taken.append(time.perf_counter() - started)
    base, with_shap = min(times[score_step]), min(times[shap_step])
    print(f"{scale}: score step {base:.2f}s; with daily SHAP on {config.ranker.shap_rows:,} rows {with_shap:.2f}s: "
          f"adds {with_shap - base:.2f}s = {(with_shap - base) / base:.2f}x the score step (budget 2x at the demo's "
          f"scale); peak RSS {peak_rss_mb():,.0f} MB")


def demo(repeats: int) -> None:
    from feco.config import load_config
    from feco.ranker.daily import load_model
    from feco.ranker.perturb import Loss
    from feco.ranker.store import current_model
    from feco.warehouse import open_read_only

    config = load_config(REPO / "configs" / "feco.toml")
    if not config.paths.warehouse.exists():
        sys.exit("no demo warehouse: run `make demo` first")
    with open_read_only(config.paths.warehouse) as conn:
        costs = conn.sql("SELECT * FROM incident_costs ORDER BY ds, incident_id").pl()
        ds = conn.sql("SELECT max(ds) FROM ranker_daily").fetchall()[0][0]
        model = load_model(Path(current_model(conn, ds)["artifact"]))
    rows = pl.read_parquet(str(config.paths.samples / f"ds={ds}" / "window=*" / "*.parquet")).height
    print(f"demo: {ds}, {rows:,} sampled rows")
    report("demo", ds, config, model, repeats)
    for cost in costs.iter_rows(named=True):
        days = [cost["reference_start"] + timedelta(days=d)
                for d in range((cost["reference_end"] - cost["reference_start"]).days + 1)]
        losses = [Loss(f, s, k) for f, s, k in zip(cost["features"], cost["loss_shares"], cost["loss_kinds"])]
        timing = min((replay(days, config, model, (cost["segment_dim"], cost["segment_value"]), losses)
                      for _ in range(repeats)), key=lambda t: t["total"])
        print(f"demo replay {cost['ds']} {','.join(cost['features'])} in {cost['segment_dim']}={cost['segment_value']}: "
              f"{timing['total']:.2f}s ({timing['read']:.2f}s reading {len(days)} days; {timing['events']:,} events "
              f"of {timing['rows']:,} rows scored twice)")


def paper(repeats: int) -> None:
    from feco.config import parse_config
    from feco.generator import FEATURES
    from feco.ranker.daily import events_frame
    from feco.ranker.model import train_ranker
    from feco.ranker.perturb import Loss

    samples = OUT / "paper_samples"
    config = parse_config({"paths": {"logs": str(large_day()), "samples": str(samples),
                                     "warehouse": str(OUT / "paper.duckdb")},
                           "logs": {"features": list(FEATURES)}, "segments": {"crosses": [["region", "query_band"]]}},
                          source=REPO / "configs" / "feco.toml")
    days = [DAY - timedelta(days=d) for d in range(7, 0, -1)]
    _write_sample(config, [DAY, *days])
    train = events_frame([DAY], config).filter(pl.col("qid").rank("dense") <= 120_000)
    cut = train.get_column("qid").unique().sort()[100_000]
    settings = config.ranker
    model = train_ranker(train.filter(pl.col("qid") < cut), train.filter(pl.col("qid") >= cut), features=list(FEATURES),
                         params=settings.params, num_boost_round=settings.num_boost_round,
                         early_stopping_rounds=settings.early_stopping_rounds)
    del train
    print(f"paper: {DAY}, 1.6M events sampled; ranker trained on 100K of them in {model.seconds:.0f}s "
          f"({model.best_iteration} rounds)")
    report("paper", DAY, config, model, repeats)
    timing = min((replay(days, config, model, ("region", "DE"), [Loss("eng_ctr_7d", 0.9)]) for _ in range(repeats)),
                 key=lambda t: t["total"])
    print(f"paper replay eng_ctr_7d -90% in region=DE: {timing['total']:.2f}s ({timing['read']:.2f}s reading 7 days; "
          f"{timing['events']:,} events of {timing['rows']:,} rows scored twice); peak RSS {peak_rss_mb():,.0f} MB")


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
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average, {os.cpu_count()} cores)")
    for scale in args.scale:
        {"demo": demo, "paper": paper}[scale](args.repeats)


if __name__ == "__main__":
    main()
