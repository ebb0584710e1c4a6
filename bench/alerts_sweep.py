"""Alert quality over scenario families, volumes and seeds, and the summary tables.

Runs each (family, volume, seed) of bench/alerts_quality.py in sequence (one heavy job at a
time), skipping those with a result unless ``--redetect`` (the alert rules again on the
stored samples and states, then the score: what a method is iterated with) or ``--rescore``.
``--summary`` prints, per volume, one markdown row per family with the figures pooled over
the given seeds (counts summed, rates per scored week) and the per-seed range.

    nice -n 10 .venv/bin/python bench/alerts_sweep.py --families base,ltr --volumes 40k --seeds tuning
    nice -n 10 .venv/bin/python bench/alerts_sweep.py --volumes 40k,150k --seeds tuning --redetect
    .venv/bin/python bench/alerts_sweep.py --volumes 40k,150k --seeds tuning --summary
    nice -n 10 .venv/bin/python bench/alerts_sweep.py --volumes 1m --seeds 3 --drop-logs

``--seeds`` is ``tuning``, ``held_out`` or ``held_out_2`` (the lists of bench/alert_seeds.toml, per family) or
numbers (``3,11``) for every family given. ``--dataset`` runs the families that take one
(``traffic``, ``traffic_nulls``) on another LTR set: ``--families traffic --dataset webis_clueweb09
--seeds held_out_dataset`` is the held-out dataset's round, to be run once on a frozen method.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alert_scoring import pooled
from alert_worlds import DATASET_OF, FAMILIES
from alerts_quality import RESULT, VOLUMES, print_run, run, run_folder

SEEDS_FILE = Path(__file__).resolve().parent / "alert_seeds.toml"


def seeds_of(family: str, which: str) -> list[int]:
    """The seeds of a table of bench/alert_seeds.toml (tuning, held_out, held_out_2 …), or numbers."""
    tables = tomllib.loads(SEEDS_FILE.read_text())
    if isinstance(tables.get(which), dict):
        return tables[which].get(family, [])
    return [int(s) for s in which.split(",") if s.strip()]


def combinations(families: list[str], volumes: list[int], which: str) -> list[tuple[str, int, int]]:
    return [(family, volume, seed) for volume in volumes for family in families for seed in seeds_of(family, which)]


def sweep(runs: list[tuple[str, int, int]], *, redetect: bool, rescore: bool, drop_logs: bool,
          recount: bool = False) -> None:
    for number, (family, volume, seed) in enumerate(runs, 1):
        finished = (run_folder(family, volume, seed) / RESULT).exists()
        if finished and not (redetect or rescore or recount):
            print(f"[{number}/{len(runs)}] {family} {volume} s{seed}: done before, skipped")
            continue
        started = time.perf_counter()
        print(f"[{number}/{len(runs)}] {family} {volume} s{seed}")
        print_run(run(family, seed, volume, redetect=redetect, recount=recount, drop_logs=drop_logs))
        print(f"  ({time.perf_counter() - started:.0f} s)")


def summary(runs: list[tuple[str, int, int]]) -> str:
    """One markdown table per volume, a row per family, pooled over the seeds with a result."""
    tables = []
    for volume in sorted({v for _, v, _ in runs}):
        rows = []
        for family in dict.fromkeys(f for f, v, _ in runs if v == volume):
            paths = [run_folder(f, v, seed) / RESULT for f, v, seed in runs if (f, v) == (family, volume)]
            results = [json.loads(path.read_text()) for path in paths if path.exists()]
            if results:
                rows.append(_row(family, results))
        if rows:
            tables.append(f"**{volume:,} events a day**\n\n{_HEADER}\n" + "\n".join(rows))
    return "\n\n".join(tables) or "no finished runs"


_HEADER = (
    "| family | seeds | weeks | false opens/week | false resolves/week | false pages/week (range) "
    "| false pages in the first two weeks, per world "
    "| target steps paged in a day (range) | other incidents paged in time | median delay, days "
    "| steps at their tier on first page | decays at the tier reached (at the injected size's) "
    "| outages paged once (in segments under 5%, not counted) "
    "| resolve lag after recovery, median/max days (unresolved) | code |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def _row(family: str, results: list[dict]) -> str:
    p = pooled(results)
    seeds = ",".join(str(r["seed"]) for r in results)
    commits = ",".join(sorted({r["commit"] for r in results}))
    lag = f"{p['resolve_lag'][0]:g}/{p['resolve_lag'][1]}" if p["resolve_lag"] else "–"
    return (f"| {family} | {seeds} | {p['weeks']:.0f} | {p['false_opens']['pooled']:.2f} "
            f"| {p['false_resolves']['pooled']:.2f} | {_rate(p['false_pages'])} "
            f"| {','.join('–' if n is None else str(n) for n in p['first_weeks'])} | {_ratio(p['target_recall'])} "
            f"| {_ratio(p['other_recall'], ranged=False)} | {_number(p['median_delay'])} "
            f"| {_ratio(p['severity_at_first_page'], ranged=False)} "
            f"| {_ratio(p['decays_at_reached_tier'], ranged=False)} ({p['decays_at_injected_tier']['hit']}) "
            f"| {_ratio(p['outages_paged_once'], ranged=False)} ({p['outages_not_pageable']}) "
            f"| {lag} ({p['unresolved']}) | {commits} |")


def _number(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def _rate(figure: dict) -> str:
    low, high = figure["range"]
    return f"{figure['pooled']:.2f} ({low:.2f}–{high:.2f})"


def _ratio(figure: dict, *, ranged: bool = True) -> str:
    if not figure["n"]:
        return "–"
    text = f"{figure['hit']}/{figure['n']} = {figure['hit'] / figure['n']:.0%}"
    if ranged and figure["range"]:
        text += f" ({figure['range'][0]:.0%}–{figure['range'][1]:.0%})"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated (default: all)")
    parser.add_argument("--volumes", default="40k", help=f"comma-separated, of {', '.join(VOLUMES)} or numbers")
    parser.add_argument("--seeds", default="tuning", help="a table of bench/alert_seeds.toml (tuning, held_out, held_out_2) or comma-separated numbers")
    parser.add_argument("--dataset", help=f"run {', '.join(DATASET_OF)} on this LTR set (family@dataset)")
    parser.add_argument("--redetect", action="store_true", help="the alert rules again on stored states, rescore")
    parser.add_argument("--recount", action="store_true", help="the states again from stored samples, then --redetect")
    parser.add_argument("--rescore", action="store_true", help="score the stored pages again")
    parser.add_argument("--drop-logs", action="store_true", help="delete each day's logs once it has been run")
    parser.add_argument("--summary", action="store_true", help="print the tables of finished runs; run nothing")
    args = parser.parse_args()
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        raise SystemExit(f"unknown families: {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    if args.dataset:
        fixed = sorted(set(families) - set(DATASET_OF))
        if fixed:
            raise SystemExit(f"--dataset: {', '.join(fixed)} take no dataset (only {', '.join(DATASET_OF)})")
        families = [f"{family}@{args.dataset}" for family in families]
    volumes = [VOLUMES.get(v.strip().lower()) or int(v) for v in args.volumes.split(",")]
    runs = combinations(families, volumes, args.seeds)
    if not args.summary:
        sweep(runs, redetect=args.redetect, rescore=args.rescore, drop_logs=args.drop_logs, recount=args.recount)
    print(summary(runs))


if __name__ == "__main__":
    main()
