"""Alert quality: one (family, volume, seed) run of the daily pipeline on a world with known
incidents, scored by the pages a person would have received.

The family (bench/alert_worlds.py) draws the world and its incidents from the seed; the logs
are generated a day at a time and each day is run through ``feco.tasks.run_day`` as the
schedule would (no delivery), on configs/feco.toml with the bench's paths, 1,000 events a
sampling window, the decay reference on the 14 clean days and, for the LTR world, its own
features. bench/alert_scoring.py scores the warehouse's pages; the figures go to
``bench/out/alerts_quality/<family>_<volume>_s<seed>/result.json`` and are printed.

    nice -n 10 .venv/bin/python bench/alerts_quality.py --family base --seed 3 --events-per-day 40000
    nice -n 10 .venv/bin/python bench/alerts_quality.py --family base --seed 3 --events-per-day 40000 --redetect
    nice -n 10 .venv/bin/python bench/alerts_quality.py --family ltr --seed 5 --events-per-day 1000000 --drop-logs

``--redetect`` runs only the alert rules and incidents again on the stored samples and states
(what to iterate a method with); ``--drop-logs`` deletes each day's logs once it has been run
(the 1M-event days take ~0.35 GB each). A run that stopped half-way starts again from scratch.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alert_scoring import load_incidents, load_row_shares, score_run
from alert_worlds import FAMILIES, Scenario, scenario
from seen_sizes import seen_sizes

from feco.generator import generate_logs
from feco.generator.ltr_world import generate_ltr_logs

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "bench" / "out" / "alerts_quality"
EVENTS_PER_WINDOW = 1_000
VOLUMES = {"10k": 10_000, "40k": 40_000, "150k": 150_000, "1m": 1_000_000}
PIPELINE_DONE = "pipeline.json"
SCORED_FROM_DAY = 7  # false pages count from the end of the alerts' warm-up
FIRST_WEEKS = 14  # a world's first two weeks, reported apart
RESULT = "result.json"


def volume_label(events_per_day: int) -> str:
    return next((label for label, n in VOLUMES.items() if n == events_per_day), str(events_per_day))


def run_folder(family: str, events_per_day: int, seed: int) -> Path:
    return OUT / f"{family}_{volume_label(events_per_day)}_s{seed}"


def bench_config(case: Scenario, folder: Path):
    """configs/feco.toml (the method under test) with the run's paths and world."""
    from feco.config import load_config, parse_config

    raw = load_config(REPO / "configs" / "feco.toml").model_dump(mode="json", exclude={"source"})
    raw["paths"] = {"logs": str(folder / "logs"), "samples": str(folder / "samples"),
                    "warehouse": str(folder / "feco.duckdb")}
    raw["sampling"]["events_per_window"] = EVENTS_PER_WINDOW
    if "reference" in raw["alerts"].get("decay", {}):
        last_clean = case.start + timedelta(days=case.clean_days - 1)
        raw["alerts"]["decay"]["reference"] = {"start": str(case.start), "end": str(last_clean)}
    raw["alerts"]["notify"] = {"webhook_url_env": None}
    if case.is_ltr:
        raw["logs"]["features"] = list(case.features)
        raw["coverage"]["rules"] = {}  # "> 0" for every feature: see feco/generator/ltr_world.py
        raw["alerts"]["floor"] = {}
    if "sources" in raw["logs"]:
        raw["logs"]["sources"] = {name: list(members) for name, members in case.sources.items()}
    return parse_config(raw, source=folder / "bench.toml")


def run(family: str, seed: int, events_per_day: int, *, redetect: bool = False, recount: bool = False,
        drop_logs: bool = False) -> dict:
    """Generate and run (unless done), or redetect; then score. Returns the result written."""
    case = scenario(family, seed)
    folder = run_folder(family, events_per_day, seed)
    done = folder / PIPELINE_DONE
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)  # a run that stopped half-way starts again
        folder.mkdir(parents=True)
        timings = generate_and_run(case, bench_config(case, folder), events_per_day, drop_logs=drop_logs)
        timings["disk_bytes"] = _disk(folder)
        done.write_text(json.dumps(timings, indent=2) + "\n")
    elif redetect or recount:
        timings = json.loads(done.read_text()) | {
            "redetect_s": rerun_rules(case, bench_config(case, folder), recount=recount)}
        done.write_text(json.dumps(timings, indent=2) + "\n")
    result = score(case, bench_config(case, folder), events_per_day) | {"timings": json.loads(done.read_text())}
    (folder / RESULT).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return result


def generate_and_run(case: Scenario, config, events_per_day: int, *, drop_logs: bool) -> dict:
    """Generate the logs a day at a time, running each day through the pipeline once written."""
    from feco import tasks

    spent = {"pipeline_s": 0.0}
    started = time.perf_counter()

    def run_day(ds: date) -> None:
        began = time.perf_counter()
        tasks.run_day(ds, config, deliver=False)
        spent["pipeline_s"] += time.perf_counter() - began
        if drop_logs:
            shutil.rmtree(config.paths.logs / f"ds={ds.isoformat()}")
        print(f"  {case.family} {volume_label(events_per_day)} s{case.seed}: {ds} done "
              f"({time.perf_counter() - started:.0f} s)", end="\r", flush=True)

    options = {"start": case.start, "days": case.days, "events_per_day": events_per_day, "seed": case.seed,
               "incidents": case.incidents(), "new_region_launch": case.new_region_launch, "progress": run_day}
    generate = generate_ltr_logs if case.is_ltr else generate_logs
    generate(config.paths.logs, world=case.world, **options)
    total = time.perf_counter() - started
    print()
    return {"generate_s": round(total - spent["pipeline_s"], 1), "pipeline_s": round(spent["pipeline_s"], 1),
            "logs_dropped": drop_logs, "load": os.getloadavg()}


def rerun_rules(case: Scenario, config, *, recount: bool = False) -> float:
    """The alert rules and incident tracking again, day by day, on the stored states (with
    ``recount``, the states first counted again from the stored samples: a new segment)."""
    from feco import tasks

    started = time.perf_counter()
    for offset in range(case.days):
        ds = case.start + timedelta(days=offset)
        if recount:
            tasks.compute_coverage(ds, config)
            tasks.publish(ds, config)
        tasks.detect(ds, config)
    return round(time.perf_counter() - started, 1)


def score(case: Scenario, config, events_per_day: int) -> dict:
    from feco.warehouse import open_read_only

    truth = json.loads((config.paths.logs / "incidents.json").read_text())["incidents"]
    first_weeks_until = case.start + timedelta(days=FIRST_WEEKS)
    with open_read_only(config.paths.warehouse) as conn:
        incidents, shares = load_incidents(conn), load_row_shares(conn)
        sizes = seen_sizes(case, config, conn, truth, warm_up_until=first_weeks_until)
    scored = score_run(incidents, shares, truth, first_scored=case.start + timedelta(days=SCORED_FROM_DAY),
                       last_day=case.start + timedelta(days=case.days - 1), first_weeks_until=first_weeks_until,
                       sizes=sizes)
    world = {key: list(v) if isinstance(v, tuple) else v for key, v in dataclasses.asdict(case.world).items()}
    return {"family": case.family, "seed": case.seed, "events_per_day": events_per_day, "commit": commit(),
            "world": world, **scored}


def commit() -> str:
    """The code the run measured: HEAD, marked when the code (not the docs) has changes."""
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], check=False,
                          capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no", "--",
                            "feco", "sql", "configs", "bench"], check=False, capture_output=True, text=True)
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def _disk(folder: Path) -> dict[str, int]:
    def size(path: Path) -> int:
        if path.is_file():
            return path.stat().st_size
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0

    return {name: size(folder / name) for name in ("logs", "samples", "feco.duckdb")}


def print_run(result: dict) -> None:
    weeks = result["weeks"]
    print(f"{result['family']} {volume_label(result['events_per_day'])} seed {result['seed']} "
          f"(code {result['commit']}): {result['scored_days']} scored days = {weeks:.1f} weeks")
    print(f"  false pages {result['false_pages']} = {result['false_pages_per_week']:.2f} a week "
          f"(opens {result['false_opens']}, escalations {result['false_escalations']}, "
          f"resolves {result['false_resolves']}); in the first two weeks: {result['first_weeks_false_pages']}")
    target, other = result["target_recall"], result["other_recall"]
    print(f"  target steps paged within a day: {target['hit']}/{target['n']}; other incidents paged in "
          f"time: {other['hit']}/{other['n']}; outages paged once: {result['outages_paged_once']['hit']}/"
          f"{result['outages_paged_once']['n']} ({result.get('outages_not_pageable', 0)} under 5% of rows); steps at their tier on first page: "
          f"{result['severity_at_first_page']['hit']}/{result['severity_at_first_page']['n']}; decays at the "
          f"tier reached: {result['decays_at_reached_tier']['hit']}/{result['decays_at_reached_tier']['n']} "
          f"(at the injected size's: {result['decays_at_injected_tier']['hit']})")
    print("  injected:")
    for row in result["incidents"]:
        features = row["features"][0] + (f" +{len(row['features']) - 1}" if len(row["features"]) > 1 else "")
        print(f"    {row['start']} {row['days']:>2}d {row['shape']:5} {row['kind']:4} {row['share']:4.2f} "
              f"(seen {row['seen_share']:4.2f}±{row['day_noise']:4.2f}) "
              f"{features:28} {row['segment']:28} {row['traffic_share']:5.1%} "
              f"{'T' if row['target'] else ' '} delay={row['delay']!s:4} at={row['first_page_at']!s:26} "
              f"sev={row['severity_at_first_page']}/{row['expected_severity']} reached={row['reached_severity']} "
              f"incidents={row['incidents_paged']} resolve_lag={row['resolve_lag']}")
    if result["false_page_events"]:
        print("  false pages:")
        for event in result["false_page_events"]:
            print(f"    {event['ds']} {event['event']:9} {event['features']:40} {event['segment']:30} "
                  f"{event['headline_rule']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="base", help=f"one of {', '.join(FAMILIES)} (traffic@<dataset>: another LTR set)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--events-per-day", type=int, default=40_000, help="generated search events a day")
    parser.add_argument("--redetect", action="store_true", help="only the alert rules and incidents again")
    parser.add_argument("--recount", action="store_true",
                        help="the coverage states again from the stored samples, then the rules")
    parser.add_argument("--drop-logs", action="store_true", help="delete each day's logs once it has been run")
    args = parser.parse_args()
    print_run(run(args.family, args.seed, args.events_per_day, redetect=args.redetect, recount=args.recount,
                  drop_logs=args.drop_logs))


if __name__ == "__main__":
    main()
