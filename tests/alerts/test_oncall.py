"""On call: ack, snooze, silence, resolve by hand, mark as noise, recorded with who, when and
why, and honoured by notify on every channel (the PagerDuty and Slack stand-ins of
tests/services.py)."""

import json
from datetime import UTC, datetime, timedelta

import duckdb
import polars as pl
import pytest

from alerts.test_channels import ROUTING_KEY, with_channels
from alerts.test_pipeline_alerts import INCIDENT, RESOLVED, config, deliveries, published, table  # noqa: F401
from feco import tasks
from feco.alerts import oncall
from feco.alerts.detect import detect_under_noise
from feco.cli import main
from feco.config import Alerts, SlackSettings
from feco.warehouse import named_query
from services import pagerduty_server, slack_server

LIVE = INCIDENT + timedelta(days=2)  # the incident is ongoing: its resolution is cut off below
FUTURE = (datetime.now(UTC) + timedelta(days=30)).date().isoformat()


@pytest.fixture
def live(config):  # noqa: F811 - the fixture
    """The warehouse as on LIVE: one critical incident, open since INCIDENT, nothing sent."""
    execute(config, f"DELETE FROM incidents WHERE ds > DATE '{LIVE}'")
    return config


def execute(setup, sql: str, params=None):
    with duckdb.connect(str(setup.paths.warehouse)) as conn:
        conn.execute(sql, params)


def incident_id(setup) -> str:
    return table(setup, "incidents")["incident_id"].unique().item()


def paging(setup, monkeypatch, pagerduty, slack):
    monkeypatch.setenv("FECO_TEST_PD_KEY", ROUTING_KEY)
    monkeypatch.setenv("FECO_TEST_SLACK", slack.url)
    return with_channels(setup, pagerduty.url, slack=SlackSettings(webhook_url_env="FECO_TEST_SLACK"))


def config_flags(setup) -> list[str]:
    """A feco.toml over the fixture's warehouse, for the command line."""
    config_file = setup.paths.warehouse.parent / "feco.toml"
    config_file.write_text(
        "[paths]\nlogs='logs'\nsamples='samples'\nwarehouse='feco.duckdb'\n"
        "[logs]\nfeatures=['f_dense','f_sparse','f_signed']\n")
    return ["--config", str(config_file)]


def test_each_command_records_who_when_and_why(live, capsys):
    incident = incident_id(live)
    flags = config_flags(live)
    assert main(["ack", incident[:6], "--by", "ana", *flags]) == 0
    assert main(["snooze", incident, "--until", FUTURE, "--reason", "fix deploying", "--by", "ana", *flags]) == 0
    assert main(["silence", "--segment", "region=DE", "--until", FUTURE, "--reason", "DE migration", *flags]) == 0
    assert main(["noise", incident, "--by", "bo", *flags]) == 0
    assert main(["resolve", incident, "--reason", "backfilled", "--by", "bo", *flags]) == 0
    out = capsys.readouterr().out
    assert f"incident {incident} acknowledged by ana" in out and "silence " in out
    actions = table(live, "incident_actions").sort("acted_at")
    assert actions["action"].to_list() == ["ack", "snooze", "silence", "noise", "resolve"]
    assert actions["actor"].to_list()[:2] == ["ana", "ana"] and actions["actor"][2]  # the login name by default
    silence = actions.row(2, named=True)
    assert (silence["incident_id"], silence["segment_dim"], silence["segment_value"]) == (None, "region", "DE")
    assert actions.filter(action="resolve")["reason"].item() == "backfilled"
    assert set(actions.filter(action="ack")["severity_rank"]) == {4}  # critical, when acknowledged


def test_an_unknown_incident_is_one_line_exit_2_with_the_nearest_ids(live, capsys):
    incident = incident_id(live)
    typo = incident[:-1] + ("0" if incident[-1] != "0" else "1")
    assert tasks_cli(live, ["ack", typo]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"feco: error: '{typo}' is no incident; nearest: {incident}")


def test_until_in_the_past_or_not_a_time_is_a_usage_error(live, capsys):
    incident = incident_id(live)
    assert tasks_cli(live, ["snooze", incident, "--until", "2020-01-01"]) == 2
    assert "is not in the future" in capsys.readouterr().err
    assert tasks_cli(live, ["silence", "--feature", "f_sparse", "--until", "friday", "--reason", "x"]) == 2
    assert "is not a date (YYYY-MM-DD) or an ISO time" in capsys.readouterr().err
    assert tasks_cli(live, ["silence", "--feature", "f_spars", "--until", FUTURE, "--reason", "x"]) == 2
    assert "did you mean 'f_sparse'" in capsys.readouterr().err
    assert table(live, "incident_actions").is_empty()


def test_a_resolved_incident_takes_no_ack_but_a_noise_mark(config):  # noqa: F811 - the fixture
    incident = incident_id(config)  # resolved on RESOLVED
    with pytest.raises(Exception, match="is resolved on"):
        tasks.act_on_incident(incident, config, action="ack")
    assert tasks.act_on_incident(incident, config, action="noise")["action"] == "noise"


def tasks_cli(setup, argv) -> int:
    return main([*argv, *config_flags(setup)])


def test_a_silenced_incident_pages_no_one_says_why_and_pages_once_lifted(live, monkeypatch):
    silence = tasks.silence(live, segment="region=DE", until=FUTURE, reason="DE migration", by="ana")
    with pagerduty_server() as pagerduty, slack_server() as slack:
        channels = paging(live, monkeypatch, pagerduty, slack)
        sent = tasks.notify(LIVE, channels)
        assert sent["pagerduty"] == sent["slack"] == {"delivered": 0, "failed": 0}
        assert pagerduty.received == [] and slack.received == []
        held = deliveries(live)
        assert set(held["status"]) == {"held"} and set(held["channel"]) >= {"log", "pagerduty", "slack"}
        assert held["last_error"].str.starts_with("not sent: silenced until").all()
        assert held["last_error"].str.contains("(DE migration) by ana", literal=True).all()
        tasks.unsilence(silence["action_id"][:6], live, by="ana")
        sent = tasks.notify(LIVE, channels)
        assert sent["pagerduty"] == sent["slack"] == {"delivered": 1, "failed": 0}  # still open: it pages
    assert pagerduty.received[0]["event_action"] == "trigger"


def test_a_silence_of_another_segment_or_source_holds_nothing(live, monkeypatch):
    tasks.silence(live, segment="region=FR", until=FUTURE, reason="FR work")
    with pagerduty_server() as pagerduty, slack_server() as slack:
        sent = tasks.notify(LIVE, paging(live, monkeypatch, pagerduty, slack))
    assert sent["pagerduty"] == sent["slack"] == {"delivered": 1, "failed": 0}


def test_a_snoozed_incident_is_held_and_pages_once_its_snooze_is_over(live, monkeypatch):
    incident = incident_id(live)
    tasks.act_on_incident(incident, live, action="snooze", until=FUTURE, reason="looking", by="ana")
    with pagerduty_server() as pagerduty, slack_server() as slack:
        channels = paging(live, monkeypatch, pagerduty, slack)
        assert tasks.notify(LIVE, channels)["pagerduty"] == {"delivered": 0, "failed": 0}
        assert pagerduty.received == [] and slack.received == []
        assert deliveries(live)["last_error"].str.starts_with("not sent: snoozed until").all()
        # time passes: the snooze is over
        execute(live, "UPDATE incident_actions SET held_until = now() - INTERVAL 1 HOUR")
        sent = tasks.notify(LIVE, channels)
    assert sent["pagerduty"] == sent["slack"] == {"delivered": 1, "failed": 0}


def escalate(setup, *, paged_rank: int) -> None:
    """The day after LIVE the incident escalates to ``paged_rank``."""
    execute(setup, f"""INSERT INTO incidents SELECT * REPLACE (ds + 1 AS ds, 'escalated' AS event,
        'escalation' AS message_id, {paged_rank} AS paged_rank, {paged_rank} AS severity_rank)
        FROM incidents WHERE ds = DATE '{LIVE}'""")


@pytest.mark.parametrize(("paged_rank", "sent"), [(2, 0), (4, 1)], ids=["same-tier", "tier-rises"])
def test_an_acknowledged_incident_is_repaged_on_escalation_only_when_its_tier_rises(live, monkeypatch, paged_rank,
                                                                                    sent):
    execute(live, "UPDATE incidents SET severity_rank = 2, paged_rank = 2")  # medium when acknowledged
    with pagerduty_server() as pagerduty, slack_server() as slack:
        channels = paging(live, monkeypatch, pagerduty, slack)
        tasks.notify(LIVE, channels)  # the opening, before anyone acknowledged
        tasks.act_on_incident(incident_id(live), live, action="ack", by="ana")
        escalate(live, paged_rank=paged_rank)
        counts = tasks.notify(LIVE + timedelta(days=1), channels)
    assert counts["pagerduty"]["delivered"] == counts["slack"]["delivered"] == sent
    assert [event["event_action"] for event in pagerduty.received] == ["trigger"] * (1 + sent)
    escalation = deliveries(live).filter(message_id="escalation")
    if not sent:
        assert set(escalation["status"]) == {"acknowledged"}
        assert escalation["last_error"].str.starts_with("not sent: acknowledged by ana at").all()
        assert tasks.notify(LIVE + timedelta(days=1), channels)["log"] == {"delivered": 0, "failed": 0}  # nor later


def test_a_resolve_by_hand_sends_one_resolution_and_shows_who_and_why(live, monkeypatch):
    incident = incident_id(live)
    with pagerduty_server() as pagerduty, slack_server() as slack:
        channels = paging(live, monkeypatch, pagerduty, slack)
        tasks.notify(LIVE, channels)  # the opening
        tasks.act_on_incident(incident, live, action="resolve", reason="fixed upstream", by="bo")
        assert tasks.notify(LIVE, channels)["pagerduty"] == {"delivered": 1, "failed": 0}
        assert tasks.notify(LIVE, channels)["slack"] == {"delivered": 0, "failed": 0}  # once
    assert [event["event_action"] for event in pagerduty.received] == ["trigger", "resolve"]
    assert pagerduty.received[1]["dedup_key"] == incident and pagerduty.alerts.open == set()
    assert "resolved by hand by bo (fixed upstream)" in slack.received[-1]["text"]
    summary = table(live, "incident_summary").row(0, named=True)
    assert (summary["status"], summary["resolved_ds"], summary["resolved_by"]) == ("resolved", LIVE, "bo")


def test_a_rule_still_firing_after_a_resolve_by_hand_opens_a_new_incident(config):  # noqa: F811 - the fixture
    execute(config, f"DELETE FROM incidents WHERE ds > DATE '{INCIDENT}'")
    first = incident_id(config)
    tasks.act_on_incident(first, config, action="resolve", reason="thought it fixed")
    tasks.detect(INCIDENT + timedelta(days=1), config)  # f_sparse is still zero in DE
    next_day = table(config, "incidents", f"ds = DATE '{INCIDENT + timedelta(days=1)}'").row(0, named=True)
    assert next_day["incident_id"] != first and next_day["event"] == "opened"


def test_alerts_and_status_show_what_is_in_force(live, capsys):
    incident = incident_id(live)
    tasks.act_on_incident(incident, live, action="ack", by="ana")
    tasks.silence(live, source=None, feature="f_sparse", until=FUTURE, reason="reindex\x1b[2J", by="bo")
    assert tasks_cli(live, ["alerts", "--since", str(INCIDENT)]) == 0
    out = capsys.readouterr().out
    assert f"alerts) id {incident}\n" in out and "    on call: acknowledged by ana at " in out
    assert "; silenced until " in out and "(reindex\\x1b[2J) by bo" in out  # a terminal's escape, shown as text
    assert tasks_cli(live, ["alerts", "--since", str(INCIDENT), "--format", "json"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert (listed["acked_by"], listed["ack_rank"], listed["silenced_by"]) == ("ana", 4, "bo")
    assert tasks_cli(live, ["status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("silenced:") and "(feature f_sparse)" in line for line in lines)
    assert any(line.startswith(f"acknowledged:      {incident} acknowledged by ana") for line in lines)


def test_status_measures_the_false_pages_marked_noise_per_week(config, capsys):  # noqa: F811 - the fixture
    tasks.act_on_incident(incident_id(config), config, action="noise", by="ana")
    assert tasks_cli(config, ["status", "--format", "json"]) == 0
    weeks = json.loads(capsys.readouterr().out)["false_pages"]
    assert [week["false_pages"] for week in weeks] == [0, 0, 2, 0]  # its opening and resolution, in its week
    assert weeks[2] == {"week": "2026-03-09", "false_pages": 2, "marked_noise": 1, "over_in_a_day": 0}


class AlphaSeen:
    """A rule that fires nothing and notes the alpha each series was judged at."""

    name = "drop_vs_moving_average"

    def __init__(self):
        self.seen = []

    def detect(self, inputs, settings, alpha):
        self.seen += [(feature, alpha) for feature in inputs["feature"]]
        return inputs.head(0)


def test_a_series_marked_noise_is_judged_at_a_smaller_alpha():
    rule = AlphaSeen()
    judged = pl.DataFrame({"feature": ["f_sparse", "f_dense"], "segment_dim": ["region"] * 2,
                           "segment_value": ["DE"] * 2})
    noise = pl.DataFrame({"rule": [rule.name, "decay_vs_reference"], "feature": ["f_sparse", "f_dense"],
                          "segment_dim": ["region"] * 2, "segment_value": ["DE"] * 2, "noise_marks": [2, 5]})
    detect_under_noise(rule, judged, Alerts(), alpha=0.003, noise=noise)
    assert sorted(rule.seen) == [("f_dense", 0.003), ("f_sparse", pytest.approx(0.001))]  # the other rule's: its own


def test_noise_marks_count_by_the_days_the_incident_paged(config):  # noqa: F811 - the fixture
    tasks.act_on_incident(incident_id(config), config, action="noise", by="ana")
    spread_days = config.alerts.drop.spread_days

    def marks(ds):
        with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
            return named_query(conn, "noise_marks", {"ds": ds, "spread_days": spread_days}).rows()

    assert marks(INCIDENT) == []  # not on the day it paged, which a rerun judges as it was
    assert marks(INCIDENT + timedelta(days=1)) == [("drop_vs_moving_average", "f_sparse", "region", "DE", 1)]
    assert marks(INCIDENT + timedelta(days=spread_days + 1)) == []


def test_a_silence_of_a_source_holds_the_incidents_of_its_features(live):
    now = datetime.now(UTC)
    with duckdb.connect(str(live.paths.warehouse)) as conn:
        oncall.silence(conn, feature=None, segment=None, source="sparse_job", until=now + timedelta(days=1),
                       reason="sparse job rerun", actor="ana", now=now)
        held = oncall.states(conn, now=now, sources={"sparse_job": ["f_sparse"]})
        other = oncall.states(conn, now=now, sources={"dense_job": ["f_dense"]})
    assert held.select("incident_id", "silence_reason").rows() == [(incident_id(live), "sparse job rerun")]
    assert other.is_empty()
