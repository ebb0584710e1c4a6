"""Alerts through the pipeline: warm-up, a local incident, re-runs, and delivery with retries."""

import http.server
import shutil
import json
import threading
from datetime import date, timedelta

import duckdb
import polars as pl
import pytest

from feco import tasks
from feco.cli import main
from logbuilder import make_config, make_events, write_logs

START = date(2026, 3, 2)
INCIDENT = START + timedelta(days=10)
DAYS = [START + timedelta(days=i) for i in range(12)]


def write_days(config, *, incident: bool = True, days=DAYS):
    for i, ds in enumerate(days):
        events = make_events(ds, events=8000, seed=i)
        if incident and ds >= INCIDENT:  # f_sparse zeroed in region DE
            events = events.with_columns(
                pl.when(pl.col("region") == "DE").then(0.0).otherwise(pl.col("f_sparse")).alias("f_sparse"))
        write_logs(config.paths.logs, events)


def configured(folder):
    return make_config(folder, sampling={"events_per_window": 150, "seed": 1},
                       alerts={"min_rows": 300, "notify": {"jsonl": "alerts.jsonl",
                                                           "webhook_url_env": "FECO_TEST_WEBHOOK"}})


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


def alerts(config, where="TRUE"):
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return conn.sql(f"SELECT * FROM alerts WHERE {where} ORDER BY ALL").pl()


def run(config, days, **kwargs):
    for ds in days:
        tasks.run_day(ds, config, **kwargs)


def test_first_day_runs_only_floor_and_missing_rules(fresh):
    result = tasks.run_day(DAYS[0], fresh, deliver=False)
    assert result["alerts"]["open"] == 0
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


def test_low_volume_segments_are_marked_not_alerted(config):
    small = alerts(config, "rule = 'low_volume'")
    assert set(small["status"]) == {"suppressed"} and small["feature"].is_null().all()


class Webhook(http.server.BaseHTTPRequestHandler):
    answer = 200
    received: list = []

    def do_POST(self):  # noqa: N802 - the http.server API
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
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return conn.sql("SELECT * FROM alert_deliveries ORDER BY ALL").pl()


def test_alerts_reach_stdout_jsonl_and_webhook_once(config, webhook, capsys):
    tasks.run_day(DAYS[-1], config)
    out = capsys.readouterr().out
    assert "[CRITICAL] drop_vs_moving_average: f_sparse in region=DE" in out
    lines = (config.paths.warehouse.parent / "alerts.jsonl").read_text().splitlines()
    assert {json.loads(line)["segment_value"] for line in lines} == {"DE"}
    # The incident's first day is paged; on its second it is 'ongoing': listed, not paged again.
    assert len(Webhook.received) == len(lines) == 1
    assert json.loads(lines[0])["ds"] == INCIDENT.isoformat()
    assert "f_sparse in region=DE" in Webhook.received[0]["text"]
    assert alerts(config, f"ds = DATE '{DAYS[-1]}' AND segment_value = 'DE'")["status"].to_list() == ["ongoing"]
    assert set(deliveries(config)["status"]) == {"delivered"}
    tasks.notify(DAYS[-1], config)  # nothing pending: nothing sent again
    assert len(Webhook.received) == 1


def test_a_failed_webhook_is_recorded_and_retried_without_leaking_the_url(config, webhook, capsys):
    Webhook.answer = 500
    result = tasks.notify(DAYS[-1], config)
    assert result["webhook"] == {"delivered": 0, "failed": 1}  # the incident's headline
    assert result["log"] == {"delivered": 1, "failed": 0}
    failed = deliveries(config).filter(channel="webhook")
    assert set(failed["status"]) == {"failed"} and set(failed["last_error"]) == {"webhook answered HTTP 500"}
    Webhook.answer = 200
    assert tasks.notify(DAYS[-1], config)["webhook"] == {"delivered": 1, "failed": 0}
    assert deliveries(config).filter(channel="webhook")["attempts"].to_list() == [2]
    assert "SECRET-TOKEN" not in capsys.readouterr().out


def test_an_unreachable_webhook_does_not_stop_the_run(config, monkeypatch):
    monkeypatch.setenv("FECO_TEST_WEBHOOK", "http://127.0.0.1:9/hooks/SECRET-TOKEN")
    result = tasks.notify(DAYS[-1], config)
    result = {"delivered": result}
    assert result["delivered"]["webhook"]["failed"] == 1
    errors = deliveries(config).filter(channel="webhook")["last_error"].to_list()
    assert all(e.startswith("webhook unreachable") and "SECRET" not in e for e in errors)


def test_alerts_command_lists_headlines_and_groups(config, capsys):
    config_file = config.paths.warehouse.parent / "feco.toml"
    config_file.write_text(
        "[paths]\nlogs='logs'\nsamples='samples'\nwarehouse='feco.duckdb'\n"
        "[logs]\nfeatures=['f_dense','f_sparse','f_signed']\n")
    assert main(["alerts", "--ds", str(INCIDENT), "--config", str(config_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{INCIDENT} [CRITICAL] drop_vs_moving_average: f_sparse in region=DE")
    assert main(["alerts", "--ds", str(INCIDENT), "--all", "--config", str(config_file)]) == 0
    grouped = [line for line in capsys.readouterr().out.splitlines() if line.startswith("    ")]
    assert grouped, "the global and cross alerts are listed under the regional headline"
    assert main(["alerts", "--since", str(START), "--format", "json", "--config", str(config_file)]) == 0
    assert {a["ds"] for a in json.loads(capsys.readouterr().out)} == {str(INCIDENT), str(DAYS[-1])}


class SlowWebhook(Webhook):
    def do_POST(self):  # noqa: N802 - the http.server API
        import time

        time.sleep(1.5)
        super().do_POST()


def test_a_webhook_that_times_out_is_recorded_and_retried(config, monkeypatch):
    server = http.server.HTTPServer(("127.0.0.1", 0), SlowWebhook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("FECO_TEST_WEBHOOK", f"http://127.0.0.1:{server.server_port}/hooks/SECRET-TOKEN")
    slow = config.model_copy(update={"alerts": config.alerts.model_copy(update={
        "notify": config.alerts.notify.model_copy(update={"timeout_seconds": 0.3})})})
    try:
        result = tasks.notify(DAYS[-1], slow)
    finally:
        server.shutdown()
    assert result["webhook"]["failed"] == 1 and result["log"]["delivered"] == 1
    errors = deliveries(config).filter(channel="webhook")["last_error"].to_list()
    assert all("timed out" in e and "SECRET" not in e for e in errors)
