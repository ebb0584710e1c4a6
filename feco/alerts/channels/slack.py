"""Slack, through an incoming webhook: a formatted message (Block Kit) with a plain fallback.

An incident's message has a headline (severity, what happened, where), its segment, its
figures (the detail line: coverage against what was expected, rows lost, the cost when known),
for a source outage the features that failed, a link to the report at the incident's trend
when the report has a web address, and the SQL to look further. A digest lists the top
incidents. The webhook URL is the secret: from the environment or an Airflow connection.
Limits kept (Slack refuses the message otherwise): a header of 150 characters, a text of
3,000, ten fields of 2,000, fifty blocks.

Every text from the logs (segment values, feature and source names, the lines built from
them) is escaped before it reaches mrkdwn, the ``text`` fallback included (Slack renders it
as mrkdwn in notifications): no value can mention anyone or show a link; feco's own link to
the report stays one. The header is plain_text, where Slack parses no markup.
"""

from __future__ import annotations

import re

from feco.alerts.channels import Message, incident_command, report_link
from feco.alerts.channels.http import post_answered
from feco.alerts.incidents import describe_place
from feco.alerts.rules import segment_name

ICON = {"critical": ":red_circle:", "high": ":large_orange_circle:", "medium": ":large_yellow_circle:",
        "low": ":white_circle:", "info": ":white_circle:"}
HEADER_CHARACTERS, TEXT_CHARACTERS, FIELD_CHARACTERS = 150, 3000, 2000


def send(message: Message, *, url: str, deadline: float, timeout: float) -> None:
    post_answered(url, payload(message), deadline=deadline, timeout=timeout, service="slack")


def payload(message: Message) -> dict:
    """``text`` (what notifications and old clients show) and ``blocks`` (the message)."""
    text = _cut(escape(message.text), TEXT_CHARACTERS)
    if not message.rows:
        return {"text": text}
    blocks = _digest_blocks(message) if message.digest else _incident_blocks(message, message.rows[-1])
    return {"text": text, "blocks": blocks}


def _incident_blocks(message: Message, row: dict) -> list[dict]:
    severity = row["severity"]
    what = {"opened": "incident opened", "escalated": "incident escalated", "grew": "incident grew",
            "resolved": "incident resolved"}
    headline = f"{severity.upper()}: {what.get(row['event'], row['event'])} · {describe_place(row)}"
    urgency = "low (daily digest)" if row.get("urgency") == "low" else "high (a page)"
    fields = [("Severity", severity), ("Urgency", urgency), ("Segment", segment_name(row)), ("Rule", row["headline_rule"] or "—"),
              ("Open since", str(row["opened_ds"])), ("Status", row["status"]), ("Rows lost", f"{row['rows_lost']:,}")]
    blocks = [_header(f"{ICON.get(severity, '')} {headline}"), _section(escape(row["detail"] or message.text)),
              {"type": "section", "fields": [_mrkdwn(_cut(f"*{name}*\n{escape(value)}", FIELD_CHARACTERS))
                                             for name, value in fields]}]
    if row.get("source"):
        features = ", ".join(f"`{escape(f)}`" for f in row["features"])
        blocks.append(_section(f"*{escape(row['source'])}*: {len(row['features'])} features failed together: "
                               f"{features}"))
    blocks.append(_section(f"*Look further*\n```{escape(incident_command(row))}```"))
    blocks.append(_report_context(message.report, row))
    return blocks


def _digest_blocks(message: Message) -> list[dict]:
    first, *lines = message.text.splitlines()
    report_lines = [line for line in lines if line.startswith("report:")]
    incidents = "\n".join(line.strip() for line in lines if line not in report_lines)
    return [_header(first), _section(escape(incidents) or "—"), _report_context(message.report, None)]


def _report_context(report: str | None, row: dict | None) -> dict:
    link = report_link(report, row)
    if link:
        text = f"<{link}|Open the report{' at this trend' if row and row.get('feature') else ''}>"
    else:
        text = f"Report: {escape(report)}" if report else "Report: `feco report --out DIR`"
    return {"type": "context", "elements": [_mrkdwn(text)]}


def escape(text: str) -> str:
    """Text shown as it is in Slack's mrkdwn: ``&``, ``<`` and ``>`` escaped, as Slack
    documents, so that no value mentions anyone (``<!channel>``) or links anywhere.

    Examples
    --------
    >>> escape("<!channel> tv & <audio>")
    '&lt;!channel&gt; tv &amp; &lt;audio&gt;'
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    """At most ``limit`` characters of escaped text, never ending inside an escape (``&am``)."""
    return re.sub(r"&[a-z]*$", "", text[:limit])


def _header(text: str) -> dict:
    return {"type": "header", "text": {"type": "plain_text", "text": text[:HEADER_CHARACTERS], "emoji": True}}


def _section(text: str) -> dict:
    return {"type": "section", "text": _mrkdwn(_cut(text, TEXT_CHARACTERS))}


def _mrkdwn(text: str) -> dict:
    return {"type": "mrkdwn", "text": text}
