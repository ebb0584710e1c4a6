"""Where incident messages go, one module per service: ``http`` (the one HTTP client every
service shares: a deadline per request and per run, answers read safely, no secret in any
error), ``pagerduty`` (Events API v2) and ``slack`` (an incoming webhook with a formatted
message). The log, the JSON-lines file and the generic webhook are in feco.alerts.notify,
which chooses the channels and records every delivery.

A ``Message`` carries its text (the log line), its JSON-lines record, and the incident rows it
stands for, from which each service builds its own payload. Segment values and feature names
come from the logs: each service escapes them for its own markup, and the command to look
further is quoted for a shell (``incident_command``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import timedelta


@dataclass(frozen=True)
class Message:
    text: str  # the log line, and the webhook's "text"
    record: dict  # the JSON-lines record
    attachment: dict | None = None  # sent to the webhook beside "text"
    rows: tuple[dict, ...] = field(default=())  # the incident rows it carries (none: a plain line)
    digest: bool = False
    report: str | None = None  # the report's path or URL


def quote_literal(value: str) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def incident_sql(row: dict) -> str:
    """A ``feco query`` statement showing the incident's coverage, from a week before it opened:
    its features (all of a source's) in its segment, or the sampled volume."""
    since = f"DATE '{row['opened_ds'] - timedelta(days=7)}'"
    if not row["feature"]:
        return f"SELECT ds, events_sampled, rows_sampled FROM runs WHERE ds >= {since} ORDER BY ds"
    features = ", ".join(quote_literal(f) for f in (row.get("features") or [row["feature"]]))
    return ("SELECT ds, feature, n_rows, round(100 * coverage, 1) AS pct, round(100 * missing_share, 1) AS missing_pct "
            f"FROM feco_daily WHERE feature IN ({features}) AND segment_dim = {quote_literal(row['segment_dim'])} "
            f"AND segment_value = {quote_literal(row['segment_value'])} AND ds >= {since} ORDER BY feature, ds")


def incident_command(row: dict) -> str:
    """The ``feco query`` command that runs :func:`incident_sql`, quoted for a POSIX shell: a
    segment value holding ``$(...)``, backticks or quotes stays part of the SQL when the
    command is pasted into a terminal.

    Examples
    --------
    >>> from datetime import date
    >>> row = {"opened_ds": date(2026, 11, 20), "feature": "ctr", "segment_dim": "region",
    ...        "segment_value": "$(touch pwned)"}
    >>> shlex.split(incident_command(row)) == ["feco", "query", incident_sql(row)]
    True
    """
    return "feco query " + shlex.quote(incident_sql(row))


def report_link(report: str | None, row: dict | None = None) -> str | None:
    """The report's address, opened at the incident's trend when it is a web address (the
    page reads ``#trend/feature/dim/value``); None when there is no report or it is a local path."""
    if not report or not report.startswith(("http://", "https://")):
        return None
    if row is None or not row.get("feature"):
        return report
    from urllib.parse import quote

    return report + "#trend/" + "/".join(quote(str(part), safe="") for part in
                                         (row["feature"], row["segment_dim"], row["segment_value"]))
