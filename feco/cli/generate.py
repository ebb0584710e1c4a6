"""`feco generate-logs`: write realistic synthetic search logs for demos, tests and benchmarks."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date, timedelta

from feco.cli.options import HelpFormatter, date_argument

_EPILOG = """\
incident spec (--incident, repeatable):
  feature=NAME,start=YYYY-MM-DD,days=N,share=S[,kind=zero|null|zero_fill][,shape=step|decay][,segment=DIM:VALUE]
  features   features=A|B|C in place of feature=: several features hit on the same rows
  source     source=FAMILY or source=FAMILY[:N]: all (the first N) features of one family
             (text, metadata, engagement, personalisation, price): a source outage
  share      share of the feature's values hit, in (0, 1]
  kind       zero: values become 0 (default); null: values become NULL;
             zero_fill: values and NULLs become 0 (an upstream failing to its default)
  shape      step: the full share from the first day (default);
             decay: share * d / days on day d = 1..days
  segment    only rows of one segment; DIM:VALUE with DIM one of
             product_group (electronics, fashion, home, ...), region (US, UK, DE, FR, JP, IN, BR),
             query_band (head, torso, tail), product_age (new, established)

world spec (--world): the generated world's knobs, any subset of
  zipf_exponent=S       query popularity ~ rank^-S (default 1.0; 0.6 is a flatter query mix)
  group_weights=W|W|..  traffic share of the 10 product groups (sum 1)
  region_weights=W|..   traffic share of US, UK, DE, FR, JP, IN (sum 1; BR launches apart)
  new_share=P           share of impressions on products under 30 days old (default 0.12)
  lifetime_days=D       mean age beyond 30 days of the established products shown (default 365)
  launch_every_days=N   new products arrive daily (1, default) or in batches every N days
  cohort_spread=S       log-sd of each arrival day's own engagement coverage (default 0)
 the calendar:
  weekend_volume=V      a weekend day's searches against a weekday's (default: a mild weekly shape)
  weekly_growth=G       volume grows by G a week, from the new region's launch (default 0)
  weekend_mix=M         every query's popularity exponent times M at weekends (below 1: flatter)
  weekend_groups=M|M|.. a further multiplier per product group at weekends (its own weekday pattern)
  holidays=D|D|..       holiday dates: holiday_volume=V (default 2.5) times the searches,
  holiday_mix=M           the exponent times M (default 1)
  rollout=F|D|N|K       feature F launched region by region over N days from D; before it
                        reaches a region only K of its rows log it

example:
  feco generate-logs --out var/logs --start 2026-03-01 --days 28 --events-per-day 20000 \\
    --incident feature=eng_ctr_30d,start=2026-03-15,days=5,share=0.9,kind=zero,shape=step,segment=region:DE
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "generate-logs",
        help="write synthetic search logs (Parquet, hive-partitioned)",
        description="Write DAYS days of synthetic search logs as "
        "DIR/ds=YYYY-MM-DD/hour=HH/part-0.parquet: one row per (search event, shown "
        "product), 33 features in five families, a graded label, diurnal and weekly "
        "traffic, cold-start products and a region (BR) launched mid-period. "
        "Injected incidents and the arguments are recorded in DIR/incidents.json. "
        "The same seed and arguments give the same bytes.",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="root folder of the logs")
    parser.add_argument("--start", required=True, type=date_argument, help="first day, YYYY-MM-DD (UTC)")
    parser.add_argument("--days", required=True, type=int, help="number of days")
    parser.add_argument(
        "--events-per-day",
        type=int,
        default=100_000,
        metavar="N",
        help="mean search events per day, ~12.5 rows each (default 100000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    parser.add_argument(
        "--incident",
        action="append",
        default=[],
        metavar="SPEC",
        help="inject an incident (repeatable); see the spec below",
    )
    parser.add_argument("--world", metavar="SPEC", help="the world's knobs; see the spec below")
    parser.add_argument(
        "--new-region-launch",
        type=date_argument,
        metavar="DATE",
        help="first day of BR traffic (default: start + days // 3); give it to "
        "generate one period in several runs",
    )
    parser.set_defaults(handler=_generate_logs)


def _generate_logs(args: argparse.Namespace) -> int:
    from feco.generator import (
        MANIFEST_NAME,
        World,
        generate_logs,
        parse_incident,
        parse_world,
    )

    incidents = [parse_incident(spec) for spec in args.incident]
    world = parse_world(args.world) if args.world else World()
    started = time.perf_counter()

    def report(ds: date) -> None:
        done = (ds - args.start).days + 1
        print(
            f"feco: generated ds={ds.isoformat()} ({done}/{args.days} days, "
            f"{time.perf_counter() - started:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    files = generate_logs(
        args.out,
        start=args.start,
        days=args.days,
        events_per_day=args.events_per_day,
        seed=args.seed,
        incidents=incidents,
        new_region_launch=args.new_region_launch,
        world=world,
        progress=report,
    )
    last = args.start + timedelta(days=args.days - 1)
    print(
        f"wrote {len(files)} files for {args.start}..{last} under {args.out} "
        f"(ground truth: {args.out}/{MANIFEST_NAME})"
    )
    return 0
