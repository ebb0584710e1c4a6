"""Pipeline commands: run a day, backfill a range, query the warehouse, show its status."""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
import time
from datetime import date, timedelta
from pathlib import Path

from feco.cli.options import (
    FORMAT_HELP,
    FORMATS,
    HelpFormatter,
    config_option,
    date_argument,
    format_option,
    print_frame,
    to_json,
    visible,
    write_out,
)
from feco.errors import DataError, FecoError, UsageError
from feco.locking import QUERY_TIMEOUT_SECONDS, READ_MEMORY_LIMIT
from feco.sql_files import schema_relations

INCIDENT_TABLE_COLUMNS = ("incident_id", "severity", "feature", "segment_dim", "segment_value", "status", "opened_ds",
                          "last_ds", "alerts", "paged", "on_call")
ALERT_TABLE_COLUMNS = ("incident_id", "ds", "severity", "rule", "feature", "segment_dim", "segment_value", "status",
                       "lagging")
# How feco.alerts.cost_severity.describe_cost joins an incident's cost to each alert's detail.
COST_SENTENCE = "; costs an estimated "


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="one day: sample, count, score, detect, publish and page",
        description="Sample one day's logs and count their coverage states; publish them to the warehouse "
                    "in one transaction with the serving model's scores of the sample, the NDCG its "
                    "coverage puts at risk and the alerts and incidents detected, replacing that day's "
                    "rows (rerunning a day is safe); then deliver the incident messages not sent yet.",
    )
    run.add_argument("--ds", required=True, type=date_argument, help="the day, YYYY-MM-DD")
    incomplete_option(run)
    as_of_option(run)
    run.add_argument("--rescore", action="store_true",
                     help="score the day with the [ranker.model] file as it is now (a new version from this day "
                          "when it changed), not with the version of the team's model that scored it before")
    config_option(run)
    run.set_defaults(handler=_run)

    ready = subparsers.add_parser(
        "logs-ready", help="whether a day's logs are complete",
        description="Check the config's [readiness] for one day (a marker file, or every hour the "
                    "windows read present and unchanged for settle_minutes) from the file listing "
                    "alone. Exit 0 when complete, 1 when not: for a cron job to wait on before "
                    "`feco run`; the Airflow DAG waits on the same check.",
    )
    ready.add_argument("--ds", required=True, type=date_argument, help="the day, YYYY-MM-DD")
    config_option(ready)
    ready.set_defaults(handler=_logs_ready)

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
                          help="at the end, deliver the backfill's incident messages: one digest, and a "
                               "message apart for each incident still live on the last day "
                               "(default: detect and store only)")
    incomplete_option(backfill)
    as_of_option(backfill)
    config_option(backfill)
    backfill.set_defaults(handler=_backfill)

    query = subparsers.add_parser(
        "query", help="run read-only SQL on the warehouse",
        description="Run SQL on the warehouse, opened read-only with file access switched off: "
                    "statements that write, ATTACH, COPY, INSTALL/LOAD and reading other files "
                    "are refused. The query runs in a child process that the operating system "
                    "holds to --memory-limit of memory (its address space; DuckDB's own limit is "
                    "the same), that spills at most as much again to a temp folder of its own, "
                    "and that is killed after --timeout seconds. A pipeline run waits "
                    "up to 60 s for a query to close the warehouse: the default timeout lets it in.",
        epilog=_relations_epilog(),
        formatter_class=HelpFormatter,
    )
    query.add_argument("sql", nargs="?", help="the SQL query; - reads it from standard input")
    query.add_argument("--file", metavar="PATH", help="read the SQL from a file (- for standard input)")
    query.add_argument("--timeout", type=float, default=QUERY_TIMEOUT_SECONDS, metavar="SECONDS",
                       help="kill the query after this long (default %(default)g; 0: no limit)")
    query.add_argument("--memory-limit", default=READ_MEMORY_LIMIT, metavar="SIZE",
                       help="memory the query may take, e.g. 512MB, 2GB, 1.5GiB (default %(default)s; at least 16MB)")
    format_option(query)
    config_option(query)
    query.set_defaults(handler=_query)

    status = subparsers.add_parser(
        "status", help="what the warehouse holds",
        description="Days present, the last publish, sampled events, missing features, and the "
                    "alert rules that cannot run yet (and why).",
    )
    format_option(status)
    config_option(status)
    status.set_defaults(handler=_status)

    alerts = subparsers.add_parser(
        "alerts", help="list incidents",
        description="List the incidents tracked on one day (--ds: each as it stood that day) or on any day "
                    "since a date (--since; default: the last published day), most severe first, then the "
                    "largest, each with how it stands (open, ongoing, recovered since the day its data came "
                    "back, resolved), whether it paged or went to the daily digest, its upstream source (with the owner and runbook the config gives "
                    "it) and the query to look further. --all sums up the alerts attached to each; "
                    "--verbose lists them.",
    )
    when = alerts.add_mutually_exclusive_group()
    when.add_argument("--ds", type=date_argument, help="one day")
    when.add_argument("--since", type=date_argument, help="every day from this one on")
    alerts.add_argument("--all", action="store_true",
                        help="under each incident, one line on its alerts: how many, of which severity, the "
                             "worst; with a table, csv or json --format, every alert")
    alerts.add_argument("--verbose", action="store_true",
                        help="with text output, every alert of each incident, one line each (implies --all)")
    alerts.add_argument("--format", choices=("text", *FORMATS), default="text",
                        help=f"output: text (lines per incident, the default), {FORMAT_HELP}")
    config_option(alerts)
    alerts.set_defaults(handler=_alerts)

    drops = subparsers.add_parser(
        "drops", help="largest coverage drops against the moving average",
        description="The days on which a feature's coverage in a segment fell furthest below the "
                    "average of the days before it (moving_average_days of them), one row per day and "
                    "feature with its drop in all traffic beside; days in the alerts' warm-up "
                    "([alerts] warmup_days) and segments with few sampled rows are left out, and so "
                    "are crosses of dimensions unless --dim names one.",
    )
    drops.add_argument("--since", type=date_argument, default=date.min, help="first day to report")
    drops.add_argument("--dim", metavar="DIM",
                       help="only this segment dimension: all (all traffic), one of the config's dimensions "
                            "(region, product_group, ...) or a cross as stored (\"region x query_band\")")
    drops.add_argument("--limit", type=int, default=10, help="rows to show (default 10)")
    drops.add_argument("--min-rows", type=int,
                       help="ignore segments with fewer sampled rows that day (default: [alerts] min_rows)")
    format_option(drops)
    config_option(drops)
    drops.set_defaults(handler=_drops)


def incomplete_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--allow-incomplete", action="store_true",
                        help="sample a day whose logs lack an hour a window reads, recording the window as "
                             "missing (default: refuse the day, naming the hours)")


def as_of_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--as-of", metavar="VERSION",
                        help="logs in a table: read it at this Iceberg snapshot id or Delta version, as "
                             "sample_windows.table_version recorded a day's read, to rerun a day as it was "
                             "(default: the table's current one, with any rows added since)")


def _relations_epilog() -> str:
    import shutil
    import textwrap

    relations = schema_relations()
    width = shutil.get_terminal_size().columns - 2  # as argparse wraps the rest of the help
    listed = [textwrap.fill(", ".join(relations[kind]), width, initial_indent=f"  {label:<8}",
                            subsequent_indent=" " * 10) for kind, label in (("table", "tables:"), ("view", "views:"))]
    return ("relations (from sql/schema; `feco query \"DESCRIBE name\"` lists a relation's columns):\n"
            + "\n".join(listed) + "\n\n"
            "example:\n  feco query \"SELECT * FROM feco_ma7 WHERE segment_dim = 'all' "
            "ORDER BY ds DESC LIMIT 10\"")


def _run(args: argparse.Namespace) -> int:
    from feco import tasks

    started = time.monotonic()
    result = tasks.run_day(args.ds, tasks.as_config(args.config), allow_incomplete=args.allow_incomplete,
                           as_of=args.as_of, rescore=args.rescore)
    days = len(result["restated"])
    restated = (f"; the query bands of {days} earlier day{'s' * (days > 1)} restated (their alerts as detected)"
                if days else "")
    print(f"{result['ds']}: published {result['events']:,} events, {result['rows']:,} rows{restated}; "
          f"{_alert_counts(result['alerts'])} ({time.monotonic() - started:.1f}s)")
    return 0


def _logs_ready(args: argparse.Namespace) -> int:
    from feco import tasks

    readiness = tasks.check_logs(args.ds, args.config)
    if readiness.ready:
        print(f"{args.ds}: ready ({readiness.reason})")
        return 0
    print(readiness.give_up_line() if readiness.overdue else f"{args.ds}: not ready yet: {readiness.reason}",
          file=sys.stderr)
    return 1


def _alert_counts(detected: dict, *, sent: bool = True) -> str:
    """'3 alerts, 2 incidents active; messages: 1 opened, 1 resolved' ("messages not sent (no
    --notify): …" for a backfill without ``--notify``, which only detects)."""
    line = f"{detected['alerts']} alert{'' if detected['alerts'] == 1 else 's'}, {detected['incidents']} incidents active"
    messages = ", ".join(f"{n} {event}" for event, n in detected["messages"].items())
    label = "messages" if sent else "messages not sent (no --notify)"
    return line + (f"; {label}: {messages}" if messages else "")


def _backfill(args: argparse.Namespace) -> int:
    from feco import tasks

    if args.end < args.start:
        raise UsageError(f"--end {args.end} is before --start {args.start}")
    config = tasks.as_config(args.config)
    days = [args.start + timedelta(days=i) for i in range((args.end - args.start).days + 1)]
    failed, done = [], []
    for number, ds in enumerate(days, start=1):
        started = time.monotonic()
        prefix = f"[{number:>{len(str(len(days)))}}/{len(days)}] {ds}"
        try:
            result = tasks.run_day(ds, config, deliver=False, allow_incomplete=args.allow_incomplete,
                                   as_of=args.as_of)
        except UsageError:
            raise  # a bad config or option fails every day alike
        except Exception as error:  # noqa: BLE001 - any other failure is this day's: list it, go on
            failed.append(ds)
            reason = error if isinstance(error, FecoError) else f"{type(error).__name__}: {error}"
            print(visible(f"{prefix} FAILED: {reason}"), file=sys.stderr, flush=True)
            if args.fail_fast:
                break
            continue
        done.append(ds)
        print(f"{prefix} ok: {result['events']:,} events, {result['rows']:,} rows, "
              f"{_alert_counts(result['alerts'], sent=args.notify)} ({time.monotonic() - started:.1f}s)",
              file=sys.stderr, flush=True)
    if args.notify and done:  # one digest for the backfill, not one delivery a day
        tasks.notify(done[-1], config, backfill_from=days[0])
    if failed:
        raise DataError(f"{len(failed)} of {len(days)} days failed: "
                        + ", ".join(d.isoformat() for d in failed))
    print(f"backfilled {len(days)} days, {args.start} to {args.end}")
    return 0


def _query(args: argparse.Namespace) -> int:
    from feco.user_query import QueryProcess, timeout_seconds

    text = _query_text(args)
    with QueryProcess(text, memory_limit=args.memory_limit, timeout=timeout_seconds(args.timeout)) as process:
        # loaded while the query's process loads its own libraries
        from feco.config import load_config

        config = load_config(args.config)
        _check_warehouse(config, args)
        frame = process.run(config.paths.warehouse, moving_average_days=config.moving_average_days)
    print_frame(frame, args.format)
    return 0


def _reader(args: argparse.Namespace):
    """The config, and the warehouse opened for reading (brought up to date first)."""
    from feco.config import load_config
    from feco.warehouse import read_configured

    config = load_config(args.config)
    _check_warehouse(config, args)
    return config, read_configured(config)


def _check_warehouse(config, args: argparse.Namespace) -> None:
    """A first run's hint, naming the config the command was given."""
    if not config.paths.warehouse.exists():
        raise DataError(f"no warehouse at {config.paths.warehouse} yet: run `feco run --ds DATE"
                        f"{_config_flag(args)}` first")


def _config_flag(args: argparse.Namespace) -> str:
    """`` --config PATH`` for a command suggested to the user, when they gave one."""
    return f" --config {shlex.quote(args.config)}" if args.config else ""


def _query_text(args: argparse.Namespace) -> str:
    """The SQL from the argument, --file or standard input ("-"); exactly one of them."""
    if (args.sql is None) == (args.file is None):
        raise UsageError("give the SQL as an argument or with --file PATH (- for standard input)")
    if "-" in (args.sql, args.file):
        return sys.stdin.read()
    if args.sql is not None:
        return args.sql
    try:
        return Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read --file {args.file}: {error}") from None


def _status(args: argparse.Namespace) -> int:
    from feco.cli.oncall import status_facts
    from feco.sources import source_for
    from feco.warehouse import named_query

    config, reader = _reader(args)
    logs = source_for(config)
    version, unread = _logs_table_version(logs) if logs.versioned else (None, None)
    with reader as conn:
        row = named_query(conn, "status_days", {"events_per_window": config.sampling.events_per_window,
                                                "table_version": version}).row(0, named=True)
        warnings = _rules_that_cannot_run(conn, config, days=row["days"])
        changed = _rule_changes(conn, config, last_ds=row["last_ds"])
        not_judged = _not_judged(conn, last_ds=row["last_ds"])
        followed = _references_followed(conn, last_ds=row["last_ds"])
        ranker = _ranker_status(conn, config, last_ds=row["last_ds"])
        model_changes = _model_changes(conn)
        ndcg = _ndcg_status(conn, last_ds=row["last_ds"])
        unmeasured = _not_measured(conn, config)
        on_call = status_facts(conn, config, first_ds=row["first_ds"], last_ds=row["last_ds"])
        incidents = _incident_standings(conn, last_ds=row["last_ds"])
    logs_table = _logs_table(config, row, version=version, unread=unread) if logs.versioned else None
    facts = {"warehouse": str(config.paths.warehouse), **row, "logs_table_version": version,
             "logs_table": logs_table, "rules_not_running": warnings, "coverage_rules_changed": changed,
             "not_judged_on_last_day": not_judged, "decay_references_followed": followed, "ranker": ranker,
             "model_changes": model_changes, "ndcg": ndcg, "not_measured": unmeasured, "incidents": incidents,
             **on_call}
    if args.format == "json":
        print(to_json(facts, indent=1))
    elif args.format == "csv":
        import polars as pl

        print_frame(pl.DataFrame([{**facts, "rules_not_running": "; ".join(warnings),
                                   "coverage_rules_changed": "; ".join(changed),
                                   "not_judged_on_last_day": "; ".join(not_judged),
                                   "decay_references_followed": "; ".join(followed),
                                   "model_changes": "; ".join(model_changes),
                                   "not_measured": "; ".join(unmeasured),
                                   "incidents": "; ".join(incidents),
                                   **{key: to_json(value) for key, value in on_call.items()}}]), "csv")
    else:
        _print_status(facts, events_per_window=config.sampling.events_per_window)
    return 0


def _print_status(facts: dict, *, events_per_window: int) -> None:
    from feco.cli.oncall import status_lines

    print(f"warehouse:         {facts['warehouse']}")
    print(f"days:              {facts['days']} ({facts['first_ds']} to {facts['last_ds']})")
    print(f"last published:    {facts['last_published_at']}")
    print(f"events sampled:    {facts['events_sampled']:,}")
    print(f"short windows:     {facts['short_windows']} (fewer events than the "
          f"{events_per_window:,} wanted)")
    if facts["missing_windows"]:
        print(f"missing windows:   {facts['missing_windows']} (hours without logs, sampled with --allow-incomplete: "
              f"{', '.join(str(d) for d in facts['missing_days'])}; see sample_windows.hours_missing)")
    print(f"missing features:  {facts['features_missing']} feature-days")
    if facts["null_days"]:
        days = ", ".join(str(d) for d in facts["null_days"][:5]) + (" …" if len(facts["null_days"]) > 5 else "")
        print(f"rows left out:     {facts['rows_null_timestamp']:,} with a NULL timestamp, "
              f"{facts['rows_null_event_id']:,} with a NULL event id, in the hours sampled ({days}; "
              "see sample_windows)")
    if facts["outside_days"]:
        days = ", ".join(str(d) for d in facts["outside_days"][:5]) + (" …" if len(facts["outside_days"]) > 5 else "")
        print(f"rows left out:     {facts['rows_outside_day']:,} stamped on another day than their folder's, "
              f"in the hours sampled ({days}; see sample_windows.rows_outside_day)")
    if facts["logs_table"]:
        print(f"logs table:        {facts['logs_table']}")
    for warning in facts["rules_not_running"]:
        print(f"rule not running:  {warning}")
    for change in facts["coverage_rules_changed"]:
        print(f"rule changed:      {change}")
    for line in facts["not_judged_on_last_day"]:
        print(visible(f"not judged:        {line}"))
    for line in facts["decay_references_followed"]:
        print(visible(f"reference moved:   {line}"))
    print(f"ranker:            {facts['ranker']}")
    for line in facts["model_changes"]:
        print(f"model changed:     {line}")
    if facts["ndcg"]:
        print(f"NDCG at risk:      {facts['ndcg']}")
    for line in facts["not_measured"]:
        print(f"not measured:      {line}")
    for line in facts["incidents"]:
        print(visible(f"incident:          {line}"))
    for line in status_lines(facts):
        print(line)


def _incident_standings(conn, *, last_ds) -> list[str]:
    """How each incident tracked in the week to the last day stands, its urgency and headline:
    a 3 a.m. reader sees at once what is still failing and what has recovered."""
    from feco.alerts.incidents import describe_place
    from feco.warehouse import named_query

    if last_ds is None:
        return []
    listed = named_query(conn, "incident_list", {"since": last_ds - timedelta(days=6), "until": None})
    return [f"{row['severity']} {describe_place(row)}: {_standing(row)}, opened {row['opened_ds']}, "
            f"{'high urgency (paged)' if row['urgency'] == 'high' else 'low urgency (daily digest)'}; "
            f"{_without_cost(row['detail'])}" for row in listed.iter_rows(named=True)]


def _logs_table_version(logs) -> tuple[str | None, str | None]:
    """The log table's current snapshot id or version, or why it cannot be read (status shows
    the warehouse all the same)."""
    try:
        return logs.version(), None
    except FecoError as error:
        return None, str(error)


def _logs_table(config, row: dict, *, version: str | None, unread: str | None) -> str:
    """Where the log table is now, and the days read at another snapshot or version: a rerun
    of those reads the rows added since, unless pinned to what they read."""
    if unread:
        return f"cannot tell which snapshot or version {config.paths.logs} is at: {unread}"
    line = f"{config.paths.logs} at {version or 'no snapshot (empty)'}"
    days, versions = row["days_read_earlier"], row["versions_read_earlier"]
    if not days:
        return line
    read = f"{days[0]} was" if len(days) == 1 else f"{len(days)} days ({days[0]} to {days[-1]}) were"
    shown = ", ".join(versions[:3]) + (", …" if len(versions) > 3 else "")
    return (f"{line}; {read} read at {shown}: a rerun reads the table as it is now, rows added since included; "
            "`feco run --ds DAY --as-of VERSION` reads it as the day did")


def _not_measured(conn, config) -> list[str]:
    """What the last published day was not measured for, its logs lacking an optional column,
    and the key that turns each on (feco.config.OPTIONAL_COLUMNS; table columns_absent)."""
    from feco.warehouse import named_query

    turns_on = {optional.key: optional.turns_on for optional in config.optional_columns()}
    return [f"{turns_on[key]}: the logs have no column '{column}' (set {key} to the column that holds it)"
            for key, column in named_query(conn, "columns_absent").iter_rows() if key in turns_on]


def _ranker_status(conn, config, *, last_ds) -> str:
    """Which model scores the last day and how incidents are ranked; without a model, that
    pages use the coverage drop alone (said here once, not on every run)."""
    from feco.ranker.store import current_model

    model = current_model(conn, last_ds) if last_ds else None
    if model is None:
        return ("no model yet: nothing is scored or explained and incidents are ranked by the coverage drop "
                "alone (`feco train-ranker --ds DATE` trains one; the feco_ranker DAG does when it is due)")
    ranking = ("by cost (the NDCG their loss costs it, replayed: table incident_costs)"
               if config.alerts.severity.by == "cost" else "by the drop weighted by importance")
    return (f"model {model['kind']} {model['version']} (valid from {model['valid_from']}) scores {last_ds}; "
            f"incidents ranked {ranking}")


def _model_changes(conn) -> list[str]:
    """Each time the team's model file held new bytes: the version from then on, and the one
    before it, which keeps the days it scored."""
    from feco.warehouse import named_query

    versions = named_query(conn, "ranker_team_versions").rows(named=True)
    return [f"the [ranker.model] file held new bytes on {new['valid_from']}: version {new['version']} serves "
            f"from then on ({_scored(new)}); {old['version']} keeps the days it scored ({_scored(old)})"
            for old, new in itertools.pairwise(versions)]


def _scored(version: dict) -> str:
    days = version["days_scored"]
    if not days:
        return "no day scored yet"
    span = f"{version['first_scored']}" if days == 1 else f"{version['first_scored']} to {version['last_scored']}"
    return f"{days} day{'s' * (days > 1)} scored, {span}"


def _ndcg_status(conn, *, last_ds) -> str | None:
    """The last day's NDCG at risk (what its coverage costs the serving model) and served NDCG
    beside the model's, in all traffic; None before any day is published."""
    from feco.warehouse import named_query

    if last_ds is None:
        return None
    found = named_query(conn, "ndcg_at_risk_status", {"ds": last_ds}).row(0, named=True)
    served = ("no served NDCG that day (it needs the logs' [logs] label and [ranker] position columns)"
              if found["served_ndcg8"] is None else f"served NDCG@8 {found['served_ndcg8']:.4f}" + (
                  "" if found["model_ndcg8"] is None else f", model {found['model_ndcg8']:.4f}"))
    if found["d_ndcg8"] is None:
        risk = "not measured (no model serving the day, or no clean day before it to replay)"
    else:
        interval = "" if found["d_ndcg8_low"] is None else \
            f" ({found['d_ndcg8_low']:+.4f} to {found['d_ndcg8_high']:+.4f})"
        risk = f"{found['d_ndcg8']:+.4f} NDCG@8{interval}"
    return f"{risk} on {last_ds} in all traffic; {served} (views ndcg_at_risk_daily, served_daily_ndcg)"


def _not_judged(conn, *, last_ds) -> list[str]:
    """What the coverage rules did not judge on the last day, and why (table unjudged)."""
    from feco.warehouse import named_query

    if last_ds is None:
        return []
    rows = named_query(conn, "unjudged_on", {"ds": last_ds}).iter_rows(named=True)
    return [f"{_place(row)}{' (' + row['feature'] + ')' if row['feature'] else ''}: {row['detail']}" for row in rows]


def _references_followed(conn, *, last_ds) -> list[str]:
    """The decay references that follow a rise (a launch, a rollout): a rise is not a failure,
    and what the decay rule now measures against has moved."""
    from feco.warehouse import named_query

    if last_ds is None:
        return []
    rows = named_query(conn, "reference_moves_on", {"ds": last_ds}).iter_rows(named=True)
    return [f"{row['feature']} in {_place(row)}: from {row['reference']:.1%} to {row['followed']:.1%} since "
            f"{row['since']} (a rise held; the decay rule judges against it)" for row in rows]


def _place(row: dict) -> str:
    return "all traffic" if row["segment_dim"] == "all" else f"{row['segment_dim']}={row['segment_value']}"


def _rule_changes(conn, config, *, last_ds) -> list[str]:
    """The features whose coverage rule changed within the alerts' spread period: their series
    restarted at the change, and the drop and decay rules judge them again once they have history."""
    from feco.warehouse import named_query

    if last_ds is None:
        return []
    since = last_ds - timedelta(days=config.alerts.drop.spread_days)
    warmup = config.alerts.warmup_days
    return [f"{change['feature']}: counted under '{change['rule']}' since {change['rule_since']} (was "
            f"'{change['previous_rule']}'); its moving average and alert history restart there, and drops are "
            f"judged after {warmup} days under it ({change['days']} so far)"
            for change in named_query(conn, "rule_changes", {"since": since}).iter_rows(named=True)]


def _rules_that_cannot_run(conn, config, *, days: int) -> list[str]:
    """Why an alert rule stays silent whatever the data: no reference period, a reference
    period the warehouse has too few days of, or too little history yet."""
    from feco.warehouse import named_query

    settings = config.alerts
    warnings = []
    if days <= settings.warmup_days:
        warnings.append(f"drop, decay: they start once {settings.warmup_days} days of history "
                        f"precede a day ([alerts] warmup_days); the warehouse has {days}")
    reference = config.decay_reference()
    if reference is None:
        warnings.append("decay: no reference period; set [alerts.decay] reference to a week "
                        "of normal traffic the warehouse holds")
        return warnings
    needed = reference.days_needed()
    held = named_query(conn, "reference_days", {
        "ref_start": reference.start, "ref_end": reference.end, "min_rows": settings.min_rows,
    }).item()
    if held < needed:
        warnings.append(f"decay: its reference period {reference.start} to {reference.end} has "
                        f"{held} days in the warehouse with {settings.min_rows:,}+ sampled rows; "
                        f"it needs {needed} ([alerts.decay] reference)")
    warnings += _same_products_not_counted(conn, config, days=days)
    return warnings


def _same_products_not_counted(conn, config, *, days: int) -> list[str]:
    """Whether the decay rule judges product-age segments without their own products' change
    (feco.same_products): a cohort of new products with fewer values then reads as a decay."""
    from feco import same_products
    from feco.warehouse import named_query

    segments = config.segments.names()
    if days <= same_products.LAG_DAYS or not any((d,) in segments for d in same_products.DIMENSIONS):
        return []
    if named_query(conn, "same_products_counted").item():
        return []
    return [f"decay: product-age segments are judged without the same products' coverage a week apart "
            f"(none counted on the last day: it needs [logs] product_id, '{config.logs.product_id}', in the logs, "
            f"and the day {same_products.LAG_DAYS} days before sampled): a cohort of new products with fewer "
            "values reads as a decay"]


def _alerts(args: argparse.Namespace) -> int:
    from feco.cli.oncall import with_states
    from feco.warehouse import fetch, named_query

    config, reader = _reader(args)
    with reader as conn:
        last = fetch(conn, "SELECT max(ds) AS last FROM runs").item()
        since, until = (args.ds, args.ds) if args.ds else (args.since or last, None)
        incidents = with_states(conn, named_query(conn, "incident_list", {"since": since, "until": until}),
                                config=config)
        attached = named_query(conn, "incident_alerts", {"incident_ids": incidents["incident_id"].to_list(),
                                                          "until": until}) if args.all or args.verbose else None
        last_judged = until or last
        unjudged = named_query(conn, "unjudged_on", {"ds": last_judged}) if last_judged else None
    if args.format == "table":  # the columns that fit a terminal; csv and json carry them all
        print_frame((incidents if attached is None else attached).select(
            INCIDENT_TABLE_COLUMNS if attached is None else ALERT_TABLE_COLUMNS), "table")
    elif args.format != "text":
        print_frame(incidents if attached is None else attached, args.format)
    else:
        if incidents.is_empty():
            print(f"no incidents since {since}" if until is None else f"no incidents on {since}")
        _print_incidents(incidents, attached, config=config, verbose=args.verbose, config_flag=_config_flag(args))
        _print_unjudged(unjudged, last_judged)
    return 0


def _print_unjudged(unjudged, ds) -> None:
    """What the rules did not judge on the day shown: no news there is not good news."""
    if unjudged is None or unjudged.is_empty():
        return
    print(f"\nNot judged on {ds}:")
    for row in unjudged.iter_rows(named=True):
        print(visible(f"  {row['feature'] + ' in ' if row['feature'] else ''}{_place(row)}: {row['detail']}"))


def _print_incidents(incidents, attached, *, config, verbose: bool, config_flag: str) -> None:
    """Each incident's lines (``attached``: the alerts of each, or None), values from the logs
    made ``visible``."""
    for row in incidents.iter_rows(named=True):
        alerts = None if attached is None else attached.filter(incident_id=row["incident_id"])
        write_out("".join(f"{visible(line)}\n" for line in _incident_lines(
            row, alerts, config=config, verbose=verbose, config_flag=config_flag)))


def _incident_lines(row: dict, alerts, *, config, verbose: bool, config_flag: str) -> list[str]:
    """An incident's lines: where and how it stands, its headline's detail, its upstream source,
    the query to look further; with ``alerts``, one line on them, or (``verbose``) each."""
    from feco.alerts.incidents import describe_place
    from feco.alerts.notify import SEVERITY_MARK

    place = describe_place(row)
    if row["headline_dim"] is not None and (row["headline_dim"], row["headline_value"]) != (
            row["segment_dim"], row["segment_value"]):
        place += f" (worst: {_place({'segment_dim': row['headline_dim'], 'segment_value': row['headline_value']})})"
    span = f"{row['opened_ds']}" + (f" to {row['last_ds']}" if row["last_ds"] != row["opened_ds"] else "")
    paged = "" if row["paged"] else "; low urgency, in the daily digest: " + (row["not_paged"] or "not paged")
    headline = f"{SEVERITY_MARK.get(row['severity'], row['severity'])} {place}: {_standing(row)}, {span}"
    # the id is what `feco ack` and the other on-call commands take
    lines = [f"{headline} ({row['alerts']} alerts{paged}) id {row['incident_id']}", f"    {row['detail']}"]
    if row["on_call"]:
        lines.append(f"    on call: {row['on_call']}")
    if alerts is not None:
        lines += _alert_lines(alerts) if verbose else [f"    {_alerts_summary(alerts)}"]
    source = row["source"] or config.logs.source_of(row["feature"])
    if source:
        owner, runbook = config.logs.source_contact(source)
        lines.append(f"    upstream: {source}" + (f"; owner {owner}" if owner else "")
                     + (f"; runbook {runbook}" if runbook else ""))
    lines.append(f"    look further: {_query_command(row)}{config_flag}")
    return lines


def _standing(row: dict) -> str:
    """How an incident stands: 'recovered since D' once its data is back within its normal
    band (a 7-day average may still hold the failure), 'resolved (recovered since D)', or its status."""
    back = row.get("recovered_ds")
    if row["status"] == "resolved":
        return "resolved" + (f" (recovered since {back})" if back else "")
    return f"recovered since {back}" if back else row["status"]


def _query_command(row: dict) -> str:
    """The `feco query` that shows the incident's coverage, as the report prints it: in double
    quotes when nothing in the SQL is special there (values from the logs are data), else in
    incident_command's single quotes, which a shell keeps whole whatever they hold."""
    from feco.alerts.channels import incident_command, incident_sql

    sql = incident_sql(row)
    return f'feco query "{sql}"' if not set(sql) & set('$`"\\!') else incident_command(row)


def _alerts_summary(alerts) -> str:
    """'15 alerts on 4 days (1 critical, 14 high); worst: ...; 1 lagging ...': an incident's
    alerts in one line. The worst is the incident's headline rule's choice among its live alerts:
    the most severe, then not a cross, then the largest change."""
    from feco.alerts.severity import SEVERITY_RANK

    by_severity = alerts.group_by("severity").len().iter_rows()
    counts = ", ".join(f"{n} {severity}" for severity, n in
                       sorted(by_severity, key=lambda pair: SEVERITY_RANK.get(pair[0], -1), reverse=True))
    line = f"{alerts.height} alerts on {alerts['ds'].n_unique()} days ({counts})"
    live = alerts.filter(~alerts["lagging"])
    if not live.is_empty():
        worst = live.with_columns(rank=live["severity"].replace_strict(SEVERITY_RANK, default=-1),
                                  cross=live["segment_dim"].str.contains(" x ", literal=True),
                                  change=live["drop_abs"].abs()).sort(
            "rank", "cross", "change", descending=[True, False, True], nulls_last=True).row(0, named=True)
        line += f"; worst: {worst['ds']} {worst['severity']} {worst['rule']}: {_without_cost(worst['detail'])}"
    lagging = alerts.height - live.height
    if lagging:
        line += (f"; {lagging} lagging, on days without a live alert (a 7-day average still holding the bad "
                 "days: they do not keep the incident open)")
    return line


def _alert_lines(alerts) -> list[str]:
    """Each alert on a line of its own; the incident's cost, which every alert of a day repeats,
    once on each day it changed."""
    lines, cost = [], None
    for alert in alerts.iter_rows(named=True):
        detail, _, day_cost = (alert["detail"] or "").partition(COST_SENTENCE)
        if day_cost and day_cost != cost:
            lines.append(f"      {alert['ds']} cost: an estimated {day_cost}")
            cost = day_cost
        lagging = " (lagging)" if alert["lagging"] else ""
        lines.append(f"      {alert['ds']} {alert['severity']} {alert['rule']}{lagging}: {detail}")
    return lines


def _without_cost(detail: str | None) -> str:
    return (detail or "").partition(COST_SENTENCE)[0]


def _drops(args: argparse.Namespace) -> int:
    from feco.warehouse import named_query

    config, reader = _reader(args)
    days = config.moving_average_days
    min_rows = config.alerts.min_rows if args.min_rows is None else args.min_rows
    with reader as conn:
        frame = named_query(conn, "largest_drops", {
            "since": args.since, "days": days, "min_days": min(3, days), "warmup_days": config.alerts.warmup_days,
            "min_rows": min_rows, "dim": args.dim, "limit": args.limit,
        })
    if frame.is_empty():  # nothing found: a misspelt --dim is the likelier reason
        _check_dimension(args.dim, config)
    if args.format == "table":
        where = f"in {args.dim}" if args.dim else "crosses left out: --dim names one"
        print(f"Largest coverage drops against the average of the previous {days} days (days after the alerts' "
              f"{config.alerts.warmup_days}-day warm-up, segments of {min_rows:,}+ sampled rows; {where}):")
    print_frame(frame, args.format)
    return 0


def _check_dimension(dim: str | None, config) -> None:
    """A usage error for a --dim the config does not compute (the warehouse may hold others,
    computed under an earlier config), with the names it does."""
    import difflib

    known = ["all", *config.segments.dimensions, *(" x ".join(cross) for cross in config.segments.crosses)]
    if dim is None or dim in known:
        return
    close = difflib.get_close_matches(dim, known, n=1)
    raise UsageError(f"--dim {dim!r} is not a segment dimension of the config"
                     + (f"; did you mean {close[0]!r}?" if close else "")
                     + f" (known: {', '.join(known)})")
