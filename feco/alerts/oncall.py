"""What people on call do to incidents: acknowledge, snooze, silence (and lift a silence),
resolve by hand, mark as noise.

Each action is a row appended to ``incident_actions`` with who, when and why; nothing is ever
updated or deleted, and which state is in force is derived (``sql/queries/oncall_states.sql``).
Notify asks :func:`quieted` which pending messages to hold back: a silenced or snoozed
incident's (``held``: sent once the silence or snooze is over, if still pending then) and an
acknowledged incident's escalations that do not rise above the tier it had when acknowledged
(``acknowledged``: never sent). Detect reads noise marks by the incident's days, never by the
wall clock (``sql/queries/noise_marks.sql``).
"""

from __future__ import annotations

import difflib
import getpass
import hashlib
from datetime import UTC, datetime

import duckdb
import polars as pl

from feco.alerts.incidents import describe_place
from feco.errors import UsageError
from feco.warehouse import fetch, named_query

INCIDENT_ACTIONS = ("ack", "snooze", "resolve", "noise")
# an incident's messages that re-page: an acknowledged incident's are held back up to its tier then
REPAGES = ("escalated", "grew")
SHORTEST_ID = 4  # a prefix of an incident id, as git takes a commit's


def default_actor() -> str:
    """Who acts when ``--by`` is not given: the login name (``$USER``, ``$LOGNAME``, …)."""
    try:
        return getpass.getuser()
    except OSError:  # no such variable and no password entry (a bare container)
        return "unknown"


def parse_until(text: str, *, now: datetime) -> datetime:
    """``--until``: a date (its 00:00 UTC) or an ISO time (UTC unless it names its zone), after ``now``.

    Examples
    --------
    >>> now = datetime(2026, 12, 8, 9, 30, tzinfo=UTC)
    >>> parse_until("2026-12-09", now=now).isoformat()
    '2026-12-09T00:00:00+00:00'
    >>> parse_until("2026-12-08T18:00+01:00", now=now).isoformat()
    '2026-12-08T18:00:00+01:00'
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"--until '{text}' is not a date (YYYY-MM-DD) or an ISO time (YYYY-MM-DDTHH:MM)") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if moment <= now:
        raise UsageError(f"--until {moment.isoformat()} is not in the future (now {now.isoformat(timespec='seconds')})")
    return moment


def find_incident(conn: duckdb.DuckDBPyConnection, text: str) -> dict:
    """The incident ``text`` names (its id, or a unique prefix of it at least ``SHORTEST_ID``
    long) as of its last tracked day; a UsageError naming the nearest ids otherwise."""
    ids = named_query(conn, "incident_ids")["incident_id"].to_list()
    found = [i for i in ids if i == text] or ([i for i in ids if i.startswith(text)] if len(text) >= SHORTEST_ID else [])
    if len(found) != 1:
        near = found[:3] if found else difflib.get_close_matches(text, ids, n=3, cutoff=0.3)
        what = "names several incidents" if found else "is no incident"
        hint = f"; nearest: {', '.join(near)}" if near else "; `feco alerts --since DATE` lists them"
        raise UsageError(f"'{text}' {what}{hint}")
    return fetch(conn, "SELECT * FROM incidents WHERE incident_id = $id ORDER BY ds DESC LIMIT 1",
                 {"id": found[0]}).row(0, named=True)


def act_on_incident(conn: duckdb.DuckDBPyConnection, incident: str, *, action: str, actor: str,
                    reason: str | None = None, until: datetime | None = None, now: datetime) -> dict:
    """Record ``action`` ('ack', 'snooze', 'resolve', 'noise') on an incident; returns its row.

    An incident resolved (by its coverage or by hand) can still be marked noise, nothing else.

    Examples
    --------
    On a warehouse with an incident (not run as a doctest: it needs one)::

        act_on_incident(conn, "3f2a", action="ack", actor="ana", now=datetime.now(UTC))
    """
    if action not in INCIDENT_ACTIONS:
        raise UsageError(f"unknown action {action!r}: one of {', '.join(INCIDENT_ACTIONS)}")
    row = find_incident(conn, incident)
    resolved_by_hand = _resolved_by_hand(conn, row["incident_id"])
    if action != "noise" and (row["status"] == "resolved" or resolved_by_hand):
        how = f" by {resolved_by_hand}" if resolved_by_hand else f" on {row['ds']}"
        raise UsageError(f"incident {row['incident_id']} ({describe_place(row)}) is resolved{how}: "
                         f"nothing to {action}")
    detail = _resolution_text(row, actor, reason) if action == "resolve" else None
    return _append(conn, action=action, incident_id=row["incident_id"], ds=row["ds"],
                   severity_rank=row["severity_rank"], held_until=until, reason=reason, detail=detail, actor=actor,
                   now=now)


def silence(conn: duckdb.DuckDBPyConnection, *, feature: str | None, segment: str | None, source: str | None,
            until: datetime, reason: str, actor: str, now: datetime) -> dict:
    """Record a silence of every incident its matchers match (``segment``: ``dim=value``)
    until ``until``; returns its row (its ``action_id`` is what ``feco unsilence`` takes)."""
    if not (feature or segment or source):
        raise UsageError("a silence needs --feature, --segment or --source (a silence of everything pages no one)")
    dim, value = _segment(segment) if segment else (None, None)
    return _append(conn, action="silence", feature=feature, segment_dim=dim, segment_value=value, source=source,
                   held_until=until, reason=reason, actor=actor, now=now)


def unsilence(conn: duckdb.DuckDBPyConnection, silence_id: str, *, actor: str, reason: str | None,
              now: datetime) -> dict:
    """Lift a silence in force before its end."""
    ids = named_query(conn, "oncall_silences", {"now": now})["silence_id"].to_list()
    found = [i for i in ids if i.startswith(silence_id)] if len(silence_id) >= SHORTEST_ID else []
    if len(found) != 1:
        raise UsageError(f"'{silence_id}' is no silence in force" + (f"; in force: {', '.join(ids)}" if ids else
                                                                     "; none is"))
    return _append(conn, action="unsilence", unsilences=found[0], reason=reason, actor=actor, now=now)


def states(conn: duckdb.DuckDBPyConnection, *, now: datetime,
           sources: dict[str, list[str]] | None = None) -> pl.DataFrame:
    """Each acted-on incident's on-call state at ``now`` (``sql/queries/oncall_states.sql``)."""
    pairs = [(feature, name) for name, features in (sources or {}).items() for feature in features]
    return named_query(conn, "oncall_states", {"now": now, "source_features": [f for f, _ in pairs],
                                               "source_names": [n for _, n in pairs]})


def quieted(conn: duckdb.DuckDBPyConnection, pending: pl.DataFrame, *, now: datetime,
            sources: dict[str, list[str]] | None = None) -> pl.DataFrame:
    """The pending messages not to send now: message_id, status ('held': a silence or a snooze
    in force, sent later; 'acknowledged': an escalation no higher than the tier acknowledged,
    never sent) and note (the line recorded in page_deliveries.last_error)."""
    by_incident = {row["incident_id"]: row for row in states(conn, now=now, sources=sources).iter_rows(named=True)}
    quiet = []
    for row in pending.iter_rows(named=True):
        state = by_incident.get(row["incident_id"])
        held = state and _held_note(state)
        if held:
            quiet.append((row["message_id"], "held", held))
        elif state and state["acked_by"] and row["event"] in REPAGES and row["paged_rank"] <= state["ack_rank"]:
            quiet.append((row["message_id"], "acknowledged",
                          f"not sent: acknowledged by {state['acked_by']} at {_moment(state['acked_at'])}"))
    return pl.DataFrame(quiet, schema={"message_id": pl.String, "status": pl.String, "note": pl.String},
                        orient="row")


def describe_state(state: dict | None) -> str | None:
    """One line on what people did to an incident ('acknowledged by ana at …; silenced until …'),
    or None when nothing is in force."""
    if not state:
        return None
    parts = []
    if state["resolved_by"]:
        parts.append(f"resolved by hand by {state['resolved_by']} at {_moment(state['resolved_at'])}"
                     + (f" ({state['resolve_reason']})" if state["resolve_reason"] else ""))
    if state["acked_by"]:
        parts.append(f"acknowledged by {state['acked_by']} at {_moment(state['acked_at'])}")
    held = _held_note(state)
    if held:
        parts.append(held.removeprefix("not sent: "))
    if state["noise_marks"]:
        parts.append(f"marked noise by {state['noise_by']}")
    return "; ".join(parts) or None


def describe_silence(row: dict) -> str:
    """One line on a silence in force: its id, what it matches, until when, who and why."""
    matchers = [f"{name} {row[name]}" for name in ("feature", "source") if row[name]]
    if row["segment_dim"]:
        matchers.append(f"segment {row['segment_dim']}={row['segment_value']}")
    return (f"{row['silence_id']} ({', '.join(matchers)}) until {row['held_until'].isoformat(timespec='minutes')} "
            f"by {row['actor']}: {row['reason']}")


def _held_note(state: dict) -> str | None:
    if state["silenced_until"] is not None:
        return (f"not sent: silenced until {_moment(state['silenced_until'])} ({state['silence_reason']}) "
                f"by {state['silenced_by']}")
    if state["snoozed_until"] is not None:
        reason = f" ({state['snooze_reason']})" if state["snooze_reason"] else ""
        return f"not sent: snoozed until {_moment(state['snoozed_until'])}{reason} by {state['snoozed_by']}"
    return None


def _resolution_text(incident: dict, actor: str, reason: str | None) -> str:
    """The resolution message's detail, as the automatic one reads: place, what, since when."""
    why = f" ({reason})" if reason else ""
    return f"{describe_place(incident)}: resolved by hand by {actor}{why} (opened {incident['opened_ds']})"


def _moment(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _segment(text: str) -> tuple[str, str]:
    dim, sep, value = text.partition("=")
    if not sep or not dim or not value:
        raise UsageError(f"--segment '{text}' is not dim=value (e.g. region=DE)")
    return dim, value


def _resolved_by_hand(conn, incident_id: str) -> str | None:
    return fetch(conn, "SELECT min_by(actor, acted_at) AS actor FROM incident_actions "
                       "WHERE action = 'resolve' AND incident_id = $id", {"id": incident_id}).item()


def _append(conn, *, action: str, actor: str, now: datetime, **values) -> dict:
    row = {"action": action, "incident_id": None, "ds": None, "severity_rank": None, "feature": None,
           "segment_dim": None, "segment_value": None, "source": None, "held_until": None, "unsilences": None,
           "reason": None, "detail": None, **values, "actor": actor, "acted_at": now}
    row["action_id"] = hashlib.sha1("|".join(map(str, row.values())).encode()).hexdigest()[:12]
    columns = ", ".join(f'"{name}"' for name in row)
    conn.execute(f"INSERT INTO incident_actions ({columns}) VALUES ({', '.join('$' + name for name in row)})", row)
    return row
