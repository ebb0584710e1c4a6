"""Pipeline commands: run a day, backfill a range, query the warehouse, show its status."""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date, timedelta

from feco.cli.options import config_option, date_argument, print_frame
from feco.errors import DataError, UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="sample, count and publish one day",
        description="Sample one day's logs, count coverage states and publish them to the "
                    "warehouse, replacing that day's rows (rerunning a day is safe).",
    )
    run.add_argument("--ds", required=True, type=date_argument, help="the day, YYYY-MM-DD")
    config_option(run)
    run.set_defaults(handler=_run)

    backfill = subparsers.add_parser(
        "backfill", help="run every day of a date range",
        description="Run each day from --start to --end inclusive, showing progress. A day that "
                    "fails is reported and the others go on (unless --fail-fast); the exit "
                    "status is non-zero if any day failed.",
    )
    backfill.add_argument("--start", required=True, type=date_argument, help="first day, YYYY-MM-DD")
    backfill.add_argument("--end", required=True, type=date_argument, help="last day, YYYY-MM-DD")
    backfill.add_argument("--fail-fast", action="store_true", help="stop at the first failed day")
    backfill.add_argument("--notify", action="store_true",
                          help="deliver each day's alerts too (default: detect and store only)")
    config_option(backfill)
    backfill.set_defaults(handler=_backfill)

    query = subparsers.add_parser(
        "query", help="run read-only SQL on the warehouse",
        description="Run one SQL query on the warehouse, opened read-only with file access "
                    "switched off: statements that write, ATTACH, COPY, INSTALL/LOAD and reading "
                    "other files are refused. Tables: sample_windows, coverage_states, "
                    "feature_status, runs, coverage_reference, alerts, incidents; views: feco_daily, feco_ma7, "
                    "incident_summary.",
        epilog="example: feco query \"SELECT * FROM feco_ma7 WHERE segment_dim = 'all' "
               "ORDER BY ds DESC LIMIT 10\"",
    )
    query.add_argument("sql", help="the SQL query")
    query.add_argument("--format", choices=("table", "csv", "json"), default="table")
    config_option(query)
    query.set_defaults(handler=_query)

    status = subparsers.add_parser(
        "status", help="what the warehouse holds",
        description="Days present, the last publish, sampled events, missing features.",
    )
    config_option(status)
    status.set_defaults(handler=_status)

    alerts = subparsers.add_parser(
        "alerts", help="list incidents",
        description="List the incidents tracked on one day (--ds) or on any day since a date (--since; "
                    "default: the last published day), most severe first, then the largest, each with "
                    "its status now. --all lists every alert attached to each.",
    )
    when = alerts.add_mutually_exclusive_group()
    when.add_argument("--ds", type=date_argument, help="one day")
    when.add_argument("--since", type=date_argument, help="every day from this one on")
    alerts.add_argument("--all", action="store_true", help="list each incident's alerts under it")
    alerts.add_argument("--format", choices=("table", "csv", "json"), default="table")
    config_option(alerts)
    alerts.set_defaults(handler=_alerts)

    drops = subparsers.add_parser(
        "drops", help="largest coverage drops against the moving average",
        description="The days on which a feature's coverage in a segment fell furthest below "
                    "the average of the 7 days before it.",
    )
    drops.add_argument("--since", type=date_argument, default=date.min, help="first day to report")
    drops.add_argument("--limit", type=int, default=10, help="rows to show (default 10)")
    drops.add_argument("--min-rows", type=int, default=500,
                       help="ignore segments with fewer sampled rows that day (default 500)")
    config_option(drops)
    drops.set_defaults(handler=_drops)


def _run(args: argparse.Namespace) -> int:
    from feco import tasks

    started = time.monotonic()
    result = tasks.run_day(args.ds, tasks.as_config(args.config))
    print(f"{result['ds']}: published {result['events']:,} events, {result['rows']:,} rows; "
          f"{_alert_counts(result['alerts'])} ({time.monotonic() - started:.1f}s)")
    return 0


def _alert_counts(detected: dict) -> str:
    """'3 alerts, 2 incidents active; messages: 1 opened, 1 resolved'."""
    line = f"{detected['alerts']} alert{'' if detected['alerts'] == 1 else 's'}, {detected['incidents']} incidents active"
    messages = ", ".join(f"{n} {event}" for event, n in detected["messages"].items())
    return line + (f"; messages: {messages}" if messages else "")


def _backfill(args: argparse.Namespace) -> int:
    from feco import tasks

    if args.end < args.start:
        raise UsageError(f"--end {args.end} is before --start {args.start}")
    config = tasks.as_config(args.config)
    days = [args.start + timedelta(days=i) for i in range((args.end - args.start).days + 1)]
    failed = []
    for number, ds in enumerate(days, start=1):
        started = time.monotonic()
        prefix = f"[{number:>{len(str(len(days)))}}/{len(days)}] {ds}"
        try:
            result = tasks.run_day(ds, config, deliver=args.notify)
        except DataError as error:
            failed.append(ds)
            print(f"{prefix} FAILED: {error}", file=sys.stderr, flush=True)
            if args.fail_fast:
                break
            continue
        print(f"{prefix} ok: {result['events']:,} events, {result['rows']:,} rows, "
              f"{_alert_counts(result['alerts'])} ({time.monotonic() - started:.1f}s)",
              file=sys.stderr, flush=True)
    if failed:
        raise DataError(f"{len(failed)} of {len(days)} days failed: "
                        + ", ".join(d.isoformat() for d in failed))
    print(f"backfilled {len(days)} days, {args.start} to {args.end}")
    return 0


def _query(args: argparse.Namespace) -> int:
    import duckdb

    from feco.tasks import as_config
    from feco.warehouse import fetch_interruptibly, open_read_only

    config = as_config(args.config)
    with open_read_only(config.paths.warehouse) as conn:
        try:
            frame = fetch_interruptibly(conn, args.sql)
        except duckdb.Error as error:
            raise UsageError(_refusal(error)) from None
    print_frame(frame, args.format)
    return 0


def _refusal(error: Exception) -> str:
    message = str(error).splitlines()[0]
    if "read-only mode" in message:
        return f"query refused: feco query is read-only ({message})"
    if "disabled by configuration" in message:
        return f"query refused: feco query cannot read or write files ({message})"
    if "locked" in message:
        return f"query refused: settings are locked in feco query ({message})"
    return f"query failed: {message}"


def _status(args: argparse.Namespace) -> int:
    from feco.tasks import as_config
    from feco.warehouse import named_query, open_read_only

    config = as_config(args.config)
    with open_read_only(config.paths.warehouse) as conn:
        row = named_query(conn, "status_days",
                          {"events_per_window": config.sampling.events_per_window}).row(0, named=True)
    print(f"warehouse:         {config.paths.warehouse}")
    print(f"days:              {row['days']} ({row['first_ds']} to {row['last_ds']})")
    print(f"last published:    {row['last_published_at']}")
    print(f"events sampled:    {row['events_sampled']:,}")
    print(f"short windows:     {row['short_windows']} (fewer events than the "
          f"{config.sampling.events_per_window:,} wanted)")
    print(f"missing features:  {row['features_missing']} feature-days")
    return 0


def _alerts(args: argparse.Namespace) -> int:
    from feco.tasks import as_config
    from feco.warehouse import fetch, named_query, open_read_only

    config = as_config(args.config)
    with open_read_only(config.paths.warehouse) as conn:
        last = fetch(conn, "SELECT max(ds) AS last FROM runs").item()
        since, until = (args.ds, args.ds) if args.ds else (args.since or last, None)
        incidents = named_query(conn, "incident_list", {"since": since, "until": until})
        attached = named_query(conn, "incident_alerts", {"incident_ids": incidents["incident_id"].to_list()}) \
            if args.all else None
    if args.format != "table":
        print_frame(incidents if attached is None else attached, args.format)
    elif incidents.is_empty():
        print(f"no incidents since {since}" if until is None else f"no incidents on {since}")
    else:
        _print_incidents(incidents, attached)
    return 0


def _print_incidents(incidents, attached) -> None:
    from feco.alerts.incidents import describe_place
    from feco.alerts.notify import SEVERITY_MARK

    for row in incidents.iter_rows(named=True):
        span = f"{row['opened_ds']}" + (f" to {row['last_ds']}" if row["last_ds"] != row["opened_ds"] else "")
        print(f"{SEVERITY_MARK.get(row['severity'], row['severity'])} {describe_place(row)}: {row['status']}, "
              f"{span} ({row['alerts']} alerts{'' if row['paged'] else ', not paged'})")
        print(f"    {row['detail']}")
        if attached is not None:
            for alert in attached.filter(incident_id=row["incident_id"]).iter_rows(named=True):
                print(f"      {alert['ds']} {alert['severity']} {alert['rule']}: {alert['detail']}")


def _drops(args: argparse.Namespace) -> int:
    from feco.tasks import as_config
    from feco.warehouse import named_query, open_read_only

    config = as_config(args.config)
    with open_read_only(config.paths.warehouse) as conn:
        frame = named_query(conn, "largest_drops", {
            "since": args.since, "min_days": 3, "min_rows": args.min_rows, "limit": args.limit,
        })
    print("Largest coverage drops against the average of the previous 7 days:")
    print_frame(frame, "table")
    return 0


