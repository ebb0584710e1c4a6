"""On-call commands: ack, snooze, silence, unsilence, resolve, noise (feco.alerts.oncall).

Each records one action, with who (``--by``, default the login name), when and why, and prints
one line saying what it recorded; ``feco alerts`` and ``feco status`` show what is in force.
"""

from __future__ import annotations

import argparse

from feco.cli.options import config_option, visible

UNTIL_HELP = "a date (its 00:00 UTC) or an ISO time, e.g. 2026-12-09T18:00 (UTC unless it names its zone)"


def register(subparsers: argparse._SubParsersAction) -> None:
    for name, help_text, action in (
        ("ack", "acknowledge an incident: its escalations page no one unless its tier rises", "ack"),
        ("snooze", "hold an incident's messages until a time; still open then, it pages", "snooze"),
        ("resolve", "resolve an incident by hand: one resolve message; firing again opens a new one", "resolve"),
        ("noise", "mark an incident as a false page: its series needs a larger change to page again", "noise"),
    ):
        parser = subparsers.add_parser(name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        parser.add_argument("incident", metavar="INCIDENT", help="its id, or a prefix of it (`feco alerts` shows it)")
        if action == "snooze":
            parser.add_argument("--until", required=True, help=UNTIL_HELP)
        parser.add_argument("--reason", required=action == "resolve", help="why, for whoever reads it next")
        _by_option(parser)
        parser.set_defaults(handler=_act, action=action)

    silence = subparsers.add_parser(
        "silence", help="hold the messages of a feature, segment or source until a time (planned work)",
        description="Silence every incident that matches all the matchers given (at least one): its "
                    "messages are not sent but recorded as not sent, and an incident still open when the "
                    "silence ends pages then.")
    silence.add_argument("--feature", help="a feature, as in [logs] features")
    silence.add_argument("--segment", metavar="DIM=VALUE", help="an incident's segment, e.g. region=DE")
    silence.add_argument("--source", help="an upstream source, as in [logs.sources]")
    silence.add_argument("--until", required=True, help=UNTIL_HELP)
    silence.add_argument("--reason", required=True, help="why (the planned work), shown wherever it holds a message")
    _by_option(silence)
    silence.set_defaults(handler=_silence)

    unsilence = subparsers.add_parser("unsilence", help="lift a silence before its end",
                                      description="Lift a silence before its end (`feco status` lists them).")
    unsilence.add_argument("silence", metavar="SILENCE", help="its id, or a prefix of it")
    unsilence.add_argument("--reason", help="why")
    _by_option(unsilence)
    unsilence.set_defaults(handler=_unsilence)


def _by_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", help="who acts (default: the login name)")
    config_option(parser)


DONE = {"ack": "acknowledged", "snooze": "snoozed", "resolve": "resolved by hand", "noise": "marked noise"}


def _act(args: argparse.Namespace) -> int:
    from feco import tasks

    row = tasks.act_on_incident(args.incident, args.config, action=args.action, by=args.by, reason=args.reason,
                                until=getattr(args, "until", None))
    until = f" until {row['held_until'].isoformat(timespec='minutes')}" if row["held_until"] else ""
    print(visible(f"incident {row['incident_id']} {DONE[args.action]}{until} by {row['actor']}"))
    return 0


def _silence(args: argparse.Namespace) -> int:
    from feco import tasks

    row = tasks.silence(args.config, feature=args.feature, segment=args.segment, source=args.source,
                        until=args.until, reason=args.reason, by=args.by)
    matchers = ", ".join(f"{name} {value}" for name, value in (
        ("feature", args.feature), ("segment", args.segment), ("source", args.source)) if value)
    print(visible(f"silence {row['action_id']} ({matchers}) until {row['held_until'].isoformat(timespec='minutes')} "
                  f"by {row['actor']}: {row['reason']}"))
    return 0


def _unsilence(args: argparse.Namespace) -> int:
    from feco import tasks

    row = tasks.unsilence(args.silence, args.config, by=args.by, reason=args.reason)
    print(visible(f"silence {row['unsilences']} lifted by {row['actor']}"))
    return 0


FALSE_PAGE_WEEKS = 4


def with_states(conn, incidents, *, config):
    """``incidents`` (incident_list's rows) with what people on call did to each (oncall_states'
    columns) and ``on_call``, that in one line (feco.alerts.oncall.describe_state)."""
    from datetime import UTC, datetime

    import polars as pl

    from feco.alerts.oncall import describe_state, states

    found = states(conn, now=datetime.now(UTC), sources=config.logs.source_features())
    joined = incidents.join(found, on="incident_id", how="left")
    return joined.with_columns(pl.Series("on_call", [describe_state(row) for row in joined.iter_rows(named=True)],
                                         dtype=pl.String))


def status_facts(conn, config, *, first_ds, last_ds) -> dict:
    """`feco status`'s on-call facts: the silences in force, the live incidents acknowledged,
    and the false pages of the last weeks against ``[alerts] false_pages_per_week``."""
    from datetime import UTC, datetime

    import polars as pl

    from feco.alerts.oncall import describe_silence
    from feco.warehouse import named_query

    now = datetime.now(UTC)
    silences = [describe_silence(row) for row in named_query(conn, "oncall_silences", {"now": now}).iter_rows(named=True)]
    live = named_query(conn, "incident_list", {"since": first_ds, "until": None}).filter(
        pl.col("status") != "resolved") if first_ds else None
    acked = [] if live is None else [
        f"{row['incident_id']} {row['on_call']}" for row in with_states(conn, live, config=config).iter_rows(named=True)
        if row["acked_by"] and not row["resolved_by"]]
    weeks = named_query(conn, "false_pages", {"last_ds": last_ds, "weeks": FALSE_PAGE_WEEKS}) if last_ds else None
    return {"silences": silences, "acknowledged": acked,
            "false_pages": [] if weeks is None else weeks.to_dicts(),
            "false_pages_per_week": config.alerts.false_pages_per_week}


def status_lines(facts: dict) -> list[str]:
    """The lines `feco status` prints for :func:`status_facts`."""
    lines = [f"silenced:          {line}" for line in facts["silences"]]
    lines += [f"acknowledged:      {line}" for line in facts["acknowledged"]]
    if facts["false_pages"]:
        weeks = ", ".join(str(week["false_pages"]) for week in facts["false_pages"])
        lines.append(f"false pages:       {weeks} in the weeks from {facts['false_pages'][0]['week']} (budget "
                     f"{facts['false_pages_per_week']:g} a week: pages marked noise, or over within a day unchanged)")
    return [visible(line) for line in lines]
