"""Alerts and incidents through the pipeline: warm-up, a local incident that opens and resolves,
re-runs, and delivery of its messages with retries and digests."""

import http.server
import json
import shutil
import threading
from datetime import date, timedelta
from typing import ClassVar

import duckdb
import polars as pl
import pytest

from feco import tasks
from feco.cli import main
from hostile import accept, close_early, drip, garbage, hang, hostile_server
from logbuilder import make_config, make_events, write_logs

START = date(2026, 3, 2)
INCIDENT = START + timedelta(days=10)
INCIDENT_DAYS = 2
RESOLVED = INCIDENT + timedelta(days=INCIDENT_DAYS + 1)  # two normal days after it
DAYS = [START + timedelta(days=i) for i in range(15)]


def write_days(config, *, incident: bool = True, days=DAYS):
    for i, ds in enumerate(days):
        events = make_events(ds, events=8000, seed=i)
        if incident and INCIDENT <= ds < INCIDENT + timedelta(days=INCIDENT_DAYS):  # f_sparse zeroed in DE
            events = events.with_columns(
                pl.when(pl.col("region") == "DE").then(0.0).otherwise(pl.col("f_sparse")).alias("f_sparse"))
        write_logs(config.paths.logs, events)


def configured(folder, **notify):
    return make_config(folder, sampling={"events_per_window": 150, "seed": 1},
                       alerts={"min_rows": 300, "incidents": {"page_after_days": 7},  # 12 days of logs
                               "notify": {"jsonl": "alerts.jsonl", "webhook_url_env": "FECO_TEST_WEBHOOK", **notify}})


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """Logs and a warehouse with every day published and detected, nothing delivered yet."""
    folder = tmp_path_factory.mktemp("published")
    config = configured(folder)
    write_days(config)
    run(config, DAYS, deliver=False)
    return folder


@pytest.fixture
def config(published, tmp_path):
    shutil.copytree(published, tmp_path / "copy")
    return configured(tmp_path / "copy")


@pytest.fixture
def fresh(tmp_path):
    config = configured(tmp_path)
    write_days(config, days=DAYS[:1])
    return config


def table(config, name, where="TRUE"):
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return conn.sql(f"SELECT * FROM {name} WHERE {where} ORDER BY ALL").pl()


def alerts(config, where="TRUE"):
    return table(config, "alerts", where)


def run(config, days, **kwargs):
    for ds in days:
        tasks.run_day(ds, config, **kwargs)


def test_first_day_runs_only_floor_and_missing_rules(fresh):
    result = tasks.run_day(DAYS[0], fresh, deliver=False)
    assert result["alerts"]["incidents"] == 0 and result["alerts"]["messages"] == {}
    assert alerts(fresh, "rule LIKE 'drop%' OR rule LIKE 'decay%'").is_empty()


def test_local_incident_alerts_on_its_region_and_reruns_replace_alerts(config):
    fired = alerts(config, f"ds = DATE '{INCIDENT}' AND status = 'open'")
    assert fired.select("feature", "segment_dim", "segment_value", "rule").rows() == [
        ("f_sparse", "region", "DE", "drop_vs_moving_average")]
    row = fired.row(0, named=True)
    assert row["observed"] == 0.0 and row["drop_rel"] == pytest.approx(1.0)
    assert row["severity"] == "critical" and "f_sparse in region=DE" in row["detail"]
    before = alerts(config)
    tasks.run_day(INCIDENT, config, deliver=False)
    assert alerts(config).equals(before)
    quiet_days = alerts(config, f"ds < DATE '{INCIDENT}' AND status = 'open'")
    assert quiet_days.is_empty(), quiet_days


def test_one_incident_opens_on_its_region_goes_on_and_resolves_once(config):
    days = table(config, "incidents").sort("ds")
    assert days["incident_id"].n_unique() == 1, days
    assert set(days.select("feature", "segment_dim", "segment_value").rows()) == {("f_sparse", "region", "DE")}
    assert days["ds"].to_list() == [INCIDENT + timedelta(days=i) for i in range(4)]
    assert days["status"].to_list() == ["open", "ongoing", "ongoing", "resolved"]
    assert days["event"].to_list() == ["opened", None, None, "resolved"]
    assert set(days["severity"]) == {"critical"} and set(days["severity_rank"]) == {4}
    assert days["alert_ids"].list.len().to_list()[:2] >= [1, 1]  # the day's alerts attach to it
    summary = table(config, "incident_summary").row(0, named=True)
    assert summary["opened_ds"] == INCIDENT and summary["resolved_ds"] == RESOLVED and summary["days"] == 4


def test_rerunning_days_leaves_the_same_incidents(config):
    before = table(config, "incidents")
    run(config, DAYS[-6:], deliver=False)
    assert table(config, "incidents").equals(before)


def test_segments_too_small_or_too_young_to_judge_are_listed_not_alerted(config):
    unjudged = table(config, "unjudged")
    few = unjudged.filter(pl.col("reason") == "few_rows")
    assert few.height and few["feature"].is_null().all() and few["detail"].str.contains("under min_rows").all()
    assert set(unjudged.filter(pl.col("reason") == "warm_up")["ds"]) == set(DAYS[:7])  # warmup_days
    assert alerts(config, "rule = 'low_volume'").is_empty()


class Webhook(http.server.BaseHTTPRequestHandler):
    answer = 200
    received: ClassVar[list] = []

    def do_POST(self):  # the http.server API names it
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Webhook.received.append(body)
        self.send_response(Webhook.answer)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook(monkeypatch):
    server = http.server.HTTPServer(("127.0.0.1", 0), Webhook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_port}/hooks/SECRET-TOKEN"
    monkeypatch.setenv("FECO_TEST_WEBHOOK", url)
    Webhook.received, Webhook.answer = [], 200
    yield url
    server.shutdown()


def deliveries(config):
    return table(config, "page_deliveries")


def test_messages_reach_stdout_jsonl_and_webhook_once(config, webhook, capsys):
    tasks.notify(DAYS[-1], config)
    out = capsys.readouterr().out
    assert f"{INCIDENT} [CRITICAL] incident opened: f_sparse in region=DE" in out
    assert f"{RESOLVED} [CRITICAL] incident resolved: f_sparse in region=DE" in out
    lines = [json.loads(line) for line in (config.paths.warehouse.parent / "alerts.jsonl").read_text().splitlines()]
    assert [(r["event"], r["segment_value"]) for r in lines] == [("opened", "DE"), ("resolved", "DE")]
    assert [m["feco"]["event"] for m in Webhook.received] == ["opened", "resolved"]
    assert "f_sparse in region=DE" in Webhook.received[0]["text"]
    assert set(deliveries(config)["status"]) == {"delivered"}
    tasks.notify(DAYS[-1], config)  # nothing pending: nothing sent again
    tasks.run_day(RESOLVED, config)  # nor after re-running a day
    assert len(Webhook.received) == 2


def test_many_pending_messages_go_as_one_digest(config, webhook, capsys):
    digesting = configured(config.paths.warehouse.parent, digest_after=1, report="var/demo/report/index.html")
    result = tasks.notify(DAYS[-1], digesting)
    assert result["webhook"] == {"delivered": 2, "failed": 0}
    (digest,) = Webhook.received
    assert digest["text"].startswith(f"feco digest: 2 incident messages from {INCIDENT} to {RESOLVED}, 1 incidents (1 critical)")
    report = config.paths.warehouse.parent / "var/demo/report/index.html"  # relative to the config's folder
    assert "[CRITICAL] f_sparse in region=DE" in digest["text"] and f"report: {report}" in digest["text"]
    assert digest["feco"]["by_severity"] == {"critical": 1}
    assert capsys.readouterr().out.count("feco digest") == 1


def test_a_backfill_with_notify_sends_one_digest_not_a_message_a_day(config, webhook, capsys):
    # the incident opens on day 10 and resolves on day 13: a day-by-day delivery sent each
    # day's message on its own; the backfill sends them as one digest at its end
    config_file = config.paths.warehouse.parent / "backfill.toml"
    config_file.write_text(
        "[paths]\nlogs='logs'\nsamples='samples'\nwarehouse='feco.duckdb'\n"
        "[logs]\nfeatures=['f_dense','f_sparse','f_signed']\n[sampling]\nevents_per_window=150\nseed=1\n"
        "[coverage.rules]\nf_signed='!= 0'\n[segments]\ncrosses=[['region','query_band']]\n"
        "[alerts]\nmin_rows=300\n[alerts.incidents]\npage_after_days=7\n"
        "[alerts.notify]\nwebhook_url_env='FECO_TEST_WEBHOOK'\ndigest_after=1\n")
    assert main(["backfill", "--start", str(DAYS[9]), "--end", str(DAYS[-1]), "--notify",
                 "--config", str(config_file)]) == 0
    (digest,) = Webhook.received
    assert digest["text"].startswith(f"feco digest: 2 incident messages from {INCIDENT} to {RESOLVED}")
    assert capsys.readouterr().out.count("feco digest") == 1


def test_a_failed_webhook_is_recorded_and_retried_without_leaking_the_url(config, webhook, capsys):
    Webhook.answer = 500
    result = tasks.notify(DAYS[-1], config)
    assert result["webhook"] == {"delivered": 0, "failed": 2}
    warning = capsys.readouterr().err.splitlines()
    assert warning == ["feco: warning: 2 incident message(s) not delivered on webhook (webhook answered HTTP 500); "
                       "the next run tries again"]
    assert result["log"] == {"delivered": 2, "failed": 0}
    failed = deliveries(config).filter(channel="webhook")
    assert set(failed["status"]) == {"failed"} and set(failed["last_error"]) == {"webhook answered HTTP 500"}
    Webhook.answer = 200
    assert tasks.notify(DAYS[-1], config)["webhook"] == {"delivered": 2, "failed": 0}
    assert deliveries(config).filter(channel="webhook")["attempts"].to_list() == [2, 2]
    assert "SECRET-TOKEN" not in capsys.readouterr().out


def test_an_unreachable_webhook_does_not_stop_the_run(config, monkeypatch):
    monkeypatch.setenv("FECO_TEST_WEBHOOK", "http://127.0.0.1:9/hooks/SECRET-TOKEN")
    result = tasks.notify(DAYS[-1], config)
    assert result["webhook"]["failed"] == 2
    errors = deliveries(config).filter(channel="webhook")["last_error"].to_list()
    assert errors == ["webhook failed: ConnectionRefusedError"] * 2


def test_alerts_command_lists_incidents_and_their_alerts(config, capsys):
    config_file = config.paths.warehouse.parent / "feco.toml"
    config_file.write_text(
        "[paths]\nlogs='logs'\nsamples='samples'\nwarehouse='feco.duckdb'\n"
        "[logs]\nfeatures=['f_dense','f_sparse','f_signed']\n")
    assert main(["alerts", "--ds", str(INCIDENT), "--config", str(config_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"[CRITICAL] f_sparse in region=DE: open, {INCIDENT} (")  # as it stood that day
    assert main(["alerts", "--ds", str(RESOLVED), "--config", str(config_file)]) == 0
    assert capsys.readouterr().out.startswith("[CRITICAL] f_sparse in region=DE: resolved (recovered since ")
    assert main(["alerts", "--ds", str(INCIDENT), "--all", "--verbose", "--config", str(config_file)]) == 0
    attached = [line for line in capsys.readouterr().out.splitlines() if line.startswith("      ")]
    assert any("drop_vs_moving_average: f_sparse in region=DE" in line for line in attached)
    assert main(["alerts", "--since", str(START), "--format", "json", "--config", str(config_file)]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["severity_rank"] == 4 and listed["status"] == "resolved"
    assert main(["alerts", "--ds", str(START), "--config", str(config_file)]) == 0
    first_day = capsys.readouterr().out.splitlines()
    assert first_day[:3] == [f"no incidents on {START}", "", f"Not judged on {START}:"]  # no news is not good news
    assert first_day[3].startswith("  all traffic: 0 of warmup_days (7) days of history")


def with_notify(config, **changes):
    notify = config.alerts.notify.model_copy(update=changes)
    return config.model_copy(update={"alerts": config.alerts.model_copy(update={"notify": notify})})


@pytest.mark.parametrize(("behaviour", "error"), [
    (drip, "webhook timed out after 0.3s"), (hang, "webhook timed out after 0.3s"),
    (garbage, "webhook failed: BadStatusLine"), (close_early, "webhook failed: IncompleteRead")])
def test_a_misbehaving_webhook_is_recorded_as_failed_and_retried(config, monkeypatch, behaviour, error):
    with hostile_server(behaviour) as (url, _):
        monkeypatch.setenv("FECO_TEST_WEBHOOK", url)
        result = tasks.notify(DAYS[-1], with_notify(config, timeout_seconds=0.3))
    assert result["webhook"] == {"delivered": 0, "failed": 2} and result["log"]["delivered"] == 2
    assert deliveries(config).filter(channel="webhook")["last_error"].to_list() == [error] * 2
    with hostile_server(accept) as (url, outcome):
        monkeypatch.setenv("FECO_TEST_WEBHOOK", url)
        assert tasks.notify(DAYS[-1], config)["webhook"] == {"delivered": 2, "failed": 0}
    assert outcome.requests == 2


def test_the_run_deadline_caps_every_request(config, monkeypatch):
    with hostile_server(hang) as (url, _):
        monkeypatch.setenv("FECO_TEST_WEBHOOK", url)
        result = tasks.notify(DAYS[-1], with_notify(config, timeout_seconds=30, deadline_seconds=0.5))
    assert result["webhook"] == {"delivered": 0, "failed": 2}
    first, second = deliveries(config).sort("last_attempt_at").filter(channel="webhook")["last_error"]
    # the first waits what is left of the run's 0.5 s (if anything is), the second is not sent
    assert first.startswith(("webhook timed out after 0.", "not sent"))
    assert second == "not sent: the run's delivery deadline had passed"


def test_a_url_that_is_not_http_is_one_config_error_line_without_the_url(config, monkeypatch, capsys):
    monkeypatch.setenv("FECO_TEST_WEBHOOK", " file:///hooks/SECRET-TOKEN ")
    config_file = config.paths.warehouse.parent / "feco.toml"
    config_file.write_text(
        "[paths]\nlogs='logs'\nsamples='samples'\nwarehouse='feco.duckdb'\n"
        "[logs]\nfeatures=['f_dense','f_sparse','f_signed']\n"
        "[alerts.notify]\nwebhook_url_env='FECO_TEST_WEBHOOK'\n")
    assert main(["run", "--ds", str(DAYS[-1]), "--config", str(config_file)]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == ("feco: error: $FECO_TEST_WEBHOOK is not an http(s) URL with a host "
                           "(its value is not shown: it is a secret)")
    assert "SECRET" not in out + err
