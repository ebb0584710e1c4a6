"""PagerDuty and Slack channels against local stand-ins that check each payload against the
service's documented schema and answer as the service does (tests/services.py)."""

import json
import shlex
import time
from datetime import date

import duckdb
import pytest

# config and published are fixtures: one incident, nothing sent
from alerts.test_pipeline_alerts import INCIDENT, RESOLVED, config, deliveries, published, with_notify  # noqa: F401
from feco import tasks
from feco.alerts.channels import Message, pagerduty, slack
from feco.config import PagerDutySettings, SlackSettings
from services import (
    RATE_LIMITED,
    pagerduty_errors,
    pagerduty_server,
    slack_error,
    slack_server,
)

ROUTING_KEY = "R0UT1NGKEY0123456789abcdefSECRET"  # 32 characters, as PagerDuty's are


def with_channels(config, pagerduty_url=None, **notify):
    channels = {"webhook_url_env": None, **notify}
    if pagerduty_url:
        channels["pagerduty"] = PagerDutySettings(url=pagerduty_url, routing_key_env="FECO_TEST_PD_KEY")
    return with_notify(config, **channels)


def everything_printed(config, capsys) -> str:
    jsonl = config.paths.warehouse.parent / "alerts.jsonl"
    out = capsys.readouterr()
    stored = deliveries(config).write_json()
    return out.out + out.err + (jsonl.read_text() if jsonl.exists() else "") + stored


def test_pagerduty_triggers_on_open_and_resolves_on_resolve_keyed_by_the_incident(config, monkeypatch, capsys):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        paging = with_channels(config, service.url)
        assert tasks.notify(INCIDENT, paging)["pagerduty"] == {"delivered": 1, "failed": 0}
        assert tasks.notify(RESOLVED, paging)["pagerduty"] == {"delivered": 1, "failed": 0}
        assert tasks.notify(RESOLVED, paging)["pagerduty"] == {"delivered": 0, "failed": 0}  # nothing twice
    trigger, resolve = service.received
    incident_id = deliveries(config).join(
        tasks_incidents(config), on="message_id").filter(channel="pagerduty")["incident_id"].unique().item()
    assert (trigger["event_action"], trigger["dedup_key"]) == ("trigger", incident_id)
    assert (resolve["event_action"], resolve["dedup_key"]) == ("resolve", incident_id)
    assert trigger["payload"]["severity"] == "critical"  # the incident is critical
    assert trigger["payload"]["group"] == "region=DE" and trigger["payload"]["component"] == "f_sparse"
    assert "f_sparse in region=DE" in trigger["payload"]["summary"]
    assert trigger["payload"]["custom_details"]["sql"].startswith("feco query ")
    assert all(pagerduty_errors(event) == [] for event in service.received)
    assert service.alerts.unmatched == [] and service.alerts.open == set()
    assert ROUTING_KEY not in everything_printed(config, capsys)


def tasks_incidents(config):
    import duckdb

    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return conn.sql("SELECT message_id, incident_id FROM incidents WHERE message_id IS NOT NULL").pl()


def test_an_incident_over_before_pagerduty_was_sent_its_trigger_is_left_out_of_it(config, monkeypatch, capsys):
    """Both messages pending at once: a resolve alone would open nothing in PagerDuty, a trigger
    now would page someone for an incident that is over. The log's digest carries it."""
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        paging = with_channels(config, service.url, digest_after=1)
        assert tasks.notify(RESOLVED, paging)["pagerduty"] == {"delivered": 0, "failed": 0}
        assert tasks.notify(RESOLVED, paging)["pagerduty"] == {"delivered": 0, "failed": 0}  # nor later
    assert service.received == []
    left_out = deliveries(config).filter(channel="pagerduty")
    assert left_out["status"].to_list() == ["left_out"] * 2 and left_out["attempts"].to_list() == [0, 0]
    digest = capsys.readouterr().out
    assert "feco digest: 2 incident messages" in digest and "[CRITICAL] f_sparse in region=DE: resolved" in digest


def test_a_rate_limit_is_waited_out_when_its_retry_after_fits_the_deadline(config, monkeypatch):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        service.planned = [RATE_LIMITED]  # Retry-After: 1
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 1, "failed": 0}
    assert len(service.received) == 2 and service.times[1] - service.times[0] >= 1.0
    assert service.received[0] == service.received[1]


def test_a_rate_limit_past_the_deadline_is_recorded_and_the_next_run_sends_it(config, monkeypatch, capsys):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as service:
        service.planned = [(429, {"Retry-After": "120"}, "{}")]
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 0, "failed": 1}
        [error] = deliveries(config).filter(channel="pagerduty")["last_error"]
        assert error == "pagerduty answered HTTP 429 (rate limited; it asked for 120 s, past the run's delivery deadline)"
        assert "the next run tries again" in capsys.readouterr().err
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 1, "failed": 0}
    assert deliveries(config).filter(channel="pagerduty")["attempts"].to_list() == [2]


def test_a_payload_the_service_refuses_is_recorded_as_rejected_and_not_sent_again(config, monkeypatch, capsys):
    short_key = "SHORTSECRETKEY"  # PagerDuty's keys have 32 characters: its schema check answers 400
    monkeypatch.setenv("FECO_TEST_PD_KEY", short_key)
    with pagerduty_server() as service:
        paging = with_channels(config, service.url)
        assert tasks.notify(INCIDENT, paging)["pagerduty"] == {"delivered": 0, "failed": 1}
        first = capsys.readouterr()
        assert tasks.notify(INCIDENT, paging)["pagerduty"] == {"delivered": 0, "failed": 0}
    assert len(service.received) == 1  # not retried
    [row] = deliveries(config).filter(channel="pagerduty").iter_rows(named=True)
    refusal = ("pagerduty refused the message as invalid (HTTP 400: Length of 'routing_key' is incorrect "
               "(should be 32 characters))")
    assert row["status"] == "rejected" and row["attempts"] == 1 and row["last_error"] == refusal
    # what happens next is said once, by the warning
    assert first.err.splitlines()[-1] == ("feco: warning: 1 incident message(s) not delivered on pagerduty "
                                          f"({refusal}); not sent again")
    printed = first.out + first.err + everything_printed(config, capsys)
    assert short_key not in printed


def test_a_missing_routing_key_is_a_recorded_failure_that_names_where_it_was_looked_for(config, monkeypatch):
    monkeypatch.delenv("FECO_TEST_PD_KEY", raising=False)
    with pagerduty_server() as service:
        assert tasks.notify(INCIDENT, with_channels(config, service.url))["pagerduty"] == {"delivered": 0, "failed": 1}
    assert service.received == []
    assert deliveries(config).filter(channel="pagerduty")["last_error"].item().startswith(
        "no PagerDuty routing key ($FECO_TEST_PD_KEY")


def test_slack_gets_a_formatted_message_with_segment_figures_report_and_sql(config, monkeypatch, capsys):
    with slack_server() as service:
        monkeypatch.setenv("FECO_TEST_SLACK", service.url)
        messaging = with_channels(config, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"),
                                  report="https://feco.example.com/report/index.html")
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 2, "failed": 0}
    opened, resolved = service.received
    assert all(slack_error(message) is None for message in service.received)
    header, detail, fields, sql, link = opened["blocks"]
    assert header["text"]["text"] == ":red_circle: CRITICAL: incident opened · f_sparse in region=DE"
    assert "f_sparse" in detail["text"]["text"] and "%" in detail["text"]["text"]  # the figures
    assert {"*Segment*\nregion=DE", "*Severity*\ncritical"} <= {f["text"] for f in fields["fields"]}
    command = shlex.split(sql["text"]["text"].split("```")[1])
    assert command[:2] == ["feco", "query"] and command[2].startswith("SELECT ds, feature")
    assert "segment_value = 'DE'" in command[2]
    assert link["elements"][0]["text"] == ("<https://feco.example.com/report/index.html#trend/f_sparse/region/DE|"
                                           "Open the report at this trend>")
    assert resolved["blocks"][0]["text"]["text"].startswith(":red_circle: CRITICAL: incident resolved")
    assert opened["text"].startswith(f"{INCIDENT} [CRITICAL] incident opened")  # the notification's fallback
    assert "SLACKSECRET" not in everything_printed(config, capsys)


def test_slack_gets_a_digest_as_one_formatted_message(config, monkeypatch):
    with slack_server() as service:
        monkeypatch.setenv("FECO_TEST_SLACK", service.url)
        messaging = with_channels(config, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"), digest_after=1)
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 2, "failed": 0}
    [digest] = service.received
    assert slack_error(digest) is None
    assert digest["blocks"][0]["text"]["text"].startswith("feco digest: 2 incident messages")
    assert "[CRITICAL] f_sparse in region=DE" in digest["blocks"][1]["text"]["text"]


def test_slack_answers_are_honoured_a_429_waited_out_and_a_400_not_retried(config, monkeypatch):
    with slack_server() as service:
        monkeypatch.setenv("FECO_TEST_SLACK", service.url)
        messaging = with_channels(config, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"))
        service.planned = [(429, {"Retry-After": "1"}, "rate_limited"), (400, {}, "invalid_payload")]
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 1, "failed": 1}
        assert tasks.notify(RESOLVED, messaging)["slack"] == {"delivered": 0, "failed": 0}
    assert len(service.received) == 3  # the opening twice (429, then 200 after a second); the resolution once
    statuses = dict(deliveries(config).filter(channel="slack").select("status", "last_error").iter_rows())
    assert statuses == {"delivered": None,
                        "rejected": "slack refused the message as invalid (HTTP 400: invalid_payload)"}


SOURCE_OUTAGE = {
    "ds": date(2026, 3, 12), "event": "opened", "message_id": "m1", "incident_id": "inc-engagement-DE",
    "feature": "eng_ctr_7d", "segment_dim": "region", "segment_value": "DE", "opened_ds": date(2026, 3, 12),
    "status": "open", "severity": "high", "severity_rank": 3, "paged_rank": 3, "headline_rule": "drop",
    "headline_dim": "region", "headline_value": "DE", "rows_lost": 12345, "source": "engagement",
    "features": ["eng_ctr_7d", "eng_ctr_30d", "eng_views_7d"],
    "detail": "engagement: 3 of 8 features in region=DE (eng_ctr_7d, eng_ctr_30d, eng_views_7d); coverage 41.0% "
              "against 78.2% expected",
}


@pytest.mark.parametrize("event", ["opened", "escalated", "resolved"])
def test_a_source_outage_reads_well_in_slack_and_keys_one_pagerduty_alert(event):
    row = SOURCE_OUTAGE | {"event": event}
    message = Message("line", {}, rows=(row,), report="https://feco.example.com/report/")
    blocks = slack.payload(message)["blocks"]
    assert slack_error(slack.payload(message)) is None
    features = next(b for b in blocks if "failed together" in b.get("text", {}).get("text", ""))
    assert features["text"]["text"] == ("*engagement*: 3 features failed together: `eng_ctr_7d`, `eng_ctr_30d`, "
                                        "`eng_views_7d`")
    sql = shlex.split(next(b for b in blocks if "Look further" in b.get("text", {}).get("text", ""))
                      ["text"]["text"].split("```")[1])[2]
    assert "feature IN ('eng_ctr_7d', 'eng_ctr_30d', 'eng_views_7d')" in sql
    paged = pagerduty.event(message, routing_key=ROUTING_KEY, source="feco")
    assert pagerduty_errors(paged) == []
    assert paged["dedup_key"] == "inc-engagement-DE"
    assert paged["event_action"] == ("resolve" if event == "resolved" else "trigger")
    if event != "resolved":
        assert paged["payload"]["severity"] == "error" and paged["payload"]["component"] == "engagement"
        assert paged["links"][0]["href"] == "https://feco.example.com/report/#trend/eng_ctr_7d/region/DE"


@pytest.mark.parametrize(("severity", "urgency", "mapped"), [
    ("critical", "high", "critical"), ("high", "high", "error"), ("medium", "high", "error"), ("low", "high", "error"),
    ("medium", "low", "warning")])
def test_a_page_reaches_pagerduty_at_high_urgency_whatever_its_tier(severity, urgency, mapped):
    # issue 62: a medium incident that paged went as "warning", low urgency under PagerDuty's
    # "based on severity" rule (critical, error: high; warning, info: low): nobody was woken
    message = Message("line", {}, rows=(SOURCE_OUTAGE | {"severity": severity, "urgency": urgency},))
    assert pagerduty.event(message, routing_key=ROUTING_KEY, source="feco")["payload"]["severity"] == mapped


def test_an_incident_that_pages_no_one_reaches_slack_in_the_daily_digest_and_never_pagerduty(config, monkeypatch):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with duckdb.connect(str(config.paths.warehouse)) as conn:  # a mild incident in tail queries, live that day
        conn.execute("INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, status, "
                     "severity, severity_rank, paged_rank, normal_days, rows_lost, alert_ids, features, not_paged) "
                     "VALUES (?, 'mild', 'f_dense', 'query_band', 'tail', ?, 'open', 'low', 1, 0, 0, 12, [], "
                     "['f_dense'], 'not paged: low, milder than page_min_severity (medium)')", [INCIDENT, INCIDENT])
    with pagerduty_server() as paged, slack_server() as chat:
        monkeypatch.setenv("FECO_TEST_SLACK", chat.url)
        channels = with_channels(config, paged.url, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"))
        tasks.notify(INCIDENT, channels)
        tasks.notify(INCIDENT, channels)  # a rerun of the day sends its digest once
    [trigger] = paged.received
    assert trigger["payload"]["severity"] == "critical" and trigger["payload"]["component"] == "f_sparse"
    assert trigger["payload"]["custom_details"]["urgency"] == "high"
    page, digest = chat.received
    assert {"*Urgency*\nhigh (a page)"} <= {f["text"] for f in page["blocks"][2]["fields"]}
    assert digest["blocks"][0]["text"]["text"] == (f"feco daily digest, {INCIDENT}: 1 live incident that pages no one "
                                                   "(low urgency)")
    assert "f_dense in query_band=tail: open" in digest["blocks"][1]["text"]["text"]
    assert "f_sparse" not in digest["text"] and slack_error(digest) is None


def test_a_plain_line_reaches_pagerduty_and_slack_as_well(monkeypatch):
    from feco.alerts.notify import send_message
    from feco.config import Notify

    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    with pagerduty_server() as paged, slack_server() as chat:
        settings = Notify(webhook_url_env=None, pagerduty=PagerDutySettings(url=paged.url, routing_key_env="FECO_TEST_PD_KEY"),
                          slack=SlackSettings(webhook_url_env=None))
        started = time.monotonic()
        result = send_message("feco: feco_daily.sample failed for 2026-11-20 (try 3)", settings=settings,
                              secrets={"slack": chat.url}, echo=lambda _: None)
    assert result == {"log": "delivered", "pagerduty": "delivered", "slack": "delivered"}
    assert paged.received[0]["event_action"] == "trigger" and "dedup_key" not in paged.received[0]
    assert chat.received == [{"text": "feco: feco_daily.sample failed for 2026-11-20 (try 3)"}]
    assert time.monotonic() - started < settings.timeout_seconds


# Values a tester put in the logs: a mention, a link that spoofs feco's own, markup, and a
# command substitution for whoever pastes the suggested command into a shell.
MENTION, SPOOF, MARKUP = "<!channel>", "<https://evil.example/login|Open the report>", "tv & <audio>"
SHELL = "$(touch pwned) `touch pwned2` 'q' \"d\" \\"
HOSTILE = SOURCE_OUTAGE | {
    "segment_value": MENTION, "source": MARKUP, "features": [SPOOF, "eng_ctr_30d"],
    "detail": f"engagement: 2 of 8 features in region={MENTION} ({SPOOF}, eng_ctr_30d); coverage 41.0%"}


def _mrkdwn_texts(message: dict) -> list[str]:
    """Every text of a Slack message that Slack reads as mrkdwn: the fallback and each block's."""
    texts = [message["text"]]
    for block in message.get("blocks", []):
        parts = [block.get("text"), *block.get("fields", []), *block.get("elements", [])]
        texts += [part["text"] for part in parts if part and part["type"] == "mrkdwn"]
    return texts


@pytest.mark.parametrize("digest", [False, True])
def test_slack_shows_values_from_the_logs_as_text_and_keeps_its_own_link(digest):
    from feco.alerts.notify import digest_text, page_text

    report = "https://feco.example.com/report/"
    text = digest_text([HOSTILE], report) if digest else page_text(HOSTILE)
    message = Message(text, {}, rows=(HOSTILE,), digest=digest, report=report)
    sent = slack.payload(message)
    assert slack_error(sent) is None
    texts = _mrkdwn_texts(sent)
    link = next(t for t in texts if t.startswith("<https://feco.example.com/report/"))
    assert link.endswith("|Open the report at this trend>" if not digest else "|Open the report>")
    assert "evil.example" not in link
    for shown in (t for t in texts if t is not link):
        assert "<" not in shown and ">" not in shown, shown  # no mention, no link, no markup
    everything = "\n".join(texts)
    if digest:
        assert "[HIGH] tv &amp; &lt;audio&gt; (2 features) in region=&lt;!channel&gt;: open" in everything
    else:
        assert "&lt;!channel&gt; (&lt;https://evil.example/login|Open the report&gt;, eng_ctr_30d)" in everything
        assert "*tv &amp; &lt;audio&gt;*: 2 features failed together" in everything


def _as_the_shell_reads_it(command: str, folder) -> list[str]:
    """The arguments /bin/sh passes to ``feco`` when ``command`` is pasted (``feco`` a function
    that prints them), run in ``folder``."""
    import subprocess

    script = 'feco() { printf "%s\\0" "$@"; }\n' + command
    done = subprocess.run(["sh", "-c", script], cwd=folder, capture_output=True, check=True)
    return done.stdout.decode().split("\0")[:-1]


def test_the_suggested_command_is_quoted_for_a_shell(tmp_path):
    from feco.alerts.channels import incident_sql

    row = SOURCE_OUTAGE | {"segment_value": SHELL, "features": [SHELL, "eng_ctr_30d"]}
    message = Message("line", {}, rows=(row,))
    in_slack = next(t for t in _mrkdwn_texts(slack.payload(message)) if t.startswith("*Look further*"))
    code = in_slack.split("```")[1]
    paged = pagerduty.event(message, routing_key=ROUTING_KEY, source="feco")["payload"]["custom_details"]["sql"]
    for command in (code.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"), paged):
        assert _as_the_shell_reads_it(command, tmp_path) == ["query", incident_sql(row)]
    assert list(tmp_path.iterdir()) == []  # nothing ran


@pytest.mark.parametrize("answer", [
    "invalid_token: SLACKSECRET",            # the token alone
    "no_team for services/T000/B000/SLACK",  # the path around it, the token cut short
    f"{'x' * 190}/T000/B000/SLACKSECRET",    # cut to 200 characters inside the token
])
def test_a_slack_refusal_never_quotes_any_part_of_the_webhook_url(answer):
    from feco.alerts.channels.http import Rejected, post_answered

    with slack_server() as service:
        service.planned = [(400, {}, answer)]
        with pytest.raises(Rejected) as refused:
            post_answered(service.url, {"text": "x"}, deadline=time.monotonic() + 5, timeout=5, service="slack")
    reason = str(refused.value)
    assert reason.startswith("slack refused the message as invalid (HTTP 400: ")
    for secret in ("SLACKSEC", "T000/B000", "/services/"):
        assert secret not in reason, reason


def test_a_pagerduty_refusal_never_quotes_any_part_of_the_routing_key():
    from feco.alerts.channels.http import Rejected, post_answered

    with pagerduty_server() as service:
        service.planned = [(400, {}, json.dumps({"errors": [f"unknown routing key {ROUTING_KEY[:20]}…"]}))]
        with pytest.raises(Rejected) as refused:
            post_answered(service.url, {}, deadline=time.monotonic() + 5, timeout=5, service="pagerduty",
                          secrets=(ROUTING_KEY,))
    assert str(refused.value) == "pagerduty refused the message as invalid (HTTP 400: unknown routing key ***…)"


def test_the_log_line_shows_control_characters_as_escapes():
    from feco.alerts.notify import page_text, send_message
    from feco.config import Notify

    row = SOURCE_OUTAGE | {"detail": "eng_ctr_7d in region=DE\x1b[2J\x1b]0;pwned\x07\nFAKE [CRITICAL] line"}
    line = page_text(row)
    assert line.endswith("region=DE\\x1b[2J\\x1b]0;pwned\\x07\\nFAKE [CRITICAL] line")
    printed = []
    send_message("feco: failed: \x1b[31mred\x9b\u202eevil", settings=Notify(webhook_url_env=None), echo=printed.append)
    assert printed == ["feco: failed: \\x1b[31mred\\x9b\\u202eevil"]


def test_the_slack_compatible_webhook_gets_its_text_escaped_as_slack_reads_it():
    from feco.alerts.notify import send_message
    from feco.config import Notify

    with slack_server() as hook:
        send_message(f"feco: failed in region={MENTION} ({MARKUP})", settings=Notify(webhook_url_env=None),
                     webhook_url=hook.url, echo=lambda _: None)
    assert hook.received == [{"text": "feco: failed in region=&lt;!channel&gt; (tv &amp; &lt;audio&gt;)"}]


def test_an_incident_that_grew_says_so_on_every_channel():
    from feco.alerts.notify import page_text

    row = SOURCE_OUTAGE | {"event": "grew", "detail": "eng_ctr_30d fails too: eng_ctr_30d in region=DE: coverage 0.0%"}
    line = page_text(row)
    assert " incident grew (open since " in line and line.endswith("eng_ctr_30d fails too: eng_ctr_30d in region=DE: "
                                                                   "coverage 0.0%")
    sent = slack.payload(Message(line, {}, rows=(row,)))
    assert slack_error(sent) is None and ": incident grew · " in sent["blocks"][0]["text"]["text"]
    trigger = pagerduty.event(Message(line, {}, rows=(row,)), routing_key=ROUTING_KEY, source="feco")
    assert trigger["event_action"] == "trigger" and trigger["dedup_key"] == row["incident_id"]
