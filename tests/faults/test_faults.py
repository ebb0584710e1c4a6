"""Faults against the real CLI: kills mid-run and mid-delivery, two runs at once, Ctrl-C in a
query, odd input.

The warehouse must hold the previous state or the complete new one, never a partial day;
re-running must give identical rows; a second run waits or fails clearly; an alert is delivered
at least once. `scripts/fault_report.py` runs these with the other fault cases as a table.
"""

import fcntl
import http.server
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import date, timedelta
from typing import ClassVar

import duckdb
import polars as pl
import pytest

from feco import tasks
from feco.config import parse_config
from logbuilder import FEATURES, make_events, write_config_file, write_logs

DAY = date(2026, 4, 6)
FECO = [sys.executable, "-m", "feco"]


def write_config(folder, features=FEATURES) -> str:
    return str(write_config_file(folder, features=features, events_per_window=2000))


@pytest.fixture
def folder(tmp_path):
    for offset in range(2):
        write_logs(tmp_path / "logs", make_events(DAY + timedelta(days=offset), events=60_000,
                                                  seed=offset, rows_per_event=10))
    write_config(tmp_path)
    return tmp_path


def feco(folder, *args, env=None, **kwargs):
    return subprocess.run([*FECO, *args, "--config", str(folder / "feco.toml")], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, check=False, **kwargs)


def day_tables(folder) -> dict[str, list]:
    with duckdb.connect(str(folder / "feco.duckdb"), read_only=True) as conn:
        return {table: conn.sql(f"SELECT * EXCLUDE (published_at) FROM {table} ORDER BY ALL").fetchall()
                if table == "runs" else conn.sql(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in ("runs", "sample_windows", "coverage_states", "feature_status")}


def test_a_run_killed_at_any_moment_leaves_the_previous_or_the_complete_day(folder, tmp_path_factory):
    clean = tmp_path_factory.mktemp("clean")
    os.symlink(folder / "logs", clean / "logs")
    write_config(clean)
    for ds in (DAY + timedelta(days=1), DAY):  # as below: the day's query bands take the next day's events too
        assert feco(clean, "run", "--ds", str(ds)).returncode == 0
    expected = day_tables(clean)
    started = time.monotonic()
    assert feco(folder, "run", "--ds", str(DAY + timedelta(days=1))).returncode == 0  # an earlier day
    duration = time.monotonic() - started
    before = day_tables(folder)
    for fraction in (0.1, 0.3, 0.5, 0.7, 0.9):
        process = subprocess.Popen([*FECO, "run", "--ds", str(DAY), "--config", str(folder / "feco.toml")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(duration * fraction)
        process.send_signal(signal.SIGKILL)
        process.wait()
        state = day_tables(folder)
        published_now = [row for row in state["runs"] if row[0] == DAY]
        if published_now:  # the day is complete, exactly as a clean run writes it
            assert {k: [r for r in v if r[0] == DAY] for k, v in state.items()} == \
                {k: [r for r in v if r[0] == DAY] for k, v in expected.items()}
        else:  # nothing of the day, the earlier day untouched
            assert all(r[0] != DAY for rows in state.values() for r in rows)
            assert state == before
    assert feco(folder, "run", "--ds", str(DAY)).returncode == 0
    assert day_tables(folder) == expected


def lock_is_held(path) -> bool:
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def test_a_second_run_waits_or_fails_clearly_and_nothing_is_double_counted(folder):
    first = subprocess.Popen([*FECO, "run", "--ds", str(DAY), "--config", str(folder / "feco.toml")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = folder / "feco.duckdb.lock"
    deadline = time.monotonic() + 30
    while not (lock.exists() and lock_is_held(lock)) and time.monotonic() < deadline:
        time.sleep(0.02)
    impatient = feco(folder, "run", "--ds", str(DAY), env={"FECO_LOCK_WAIT_SECONDS": "0"})
    patient = subprocess.Popen([*FECO, "run", "--ds", str(DAY), "--config", str(folder / "feco.toml")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert first.wait() == 0 and patient.wait() == 0
    assert impatient.returncode == 3
    assert impatient.stderr.startswith("feco: error: another feco run holds") and "Traceback" not in impatient.stderr
    tables = day_tables(folder)
    assert len(tables["runs"]) == 1
    keys = [row[:5] for row in tables["coverage_states"]]
    assert len(keys) == len(set(keys))


# Two full runs around the interrupt (~35 s): slow. A query giving way to a run is in the suite
# (tests/test_cli_query.py).
@pytest.mark.slow
def test_ctrl_c_cancels_a_long_query_without_harm(folder):
    assert feco(folder, "run", "--ds", str(DAY)).returncode == 0
    query = subprocess.Popen(
        [*FECO, "query", "SELECT count(*) FROM range(100000000000) a, range(10) b",
         "--config", str(folder / "feco.toml")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    query.send_signal(signal.SIGINT)
    _, err = query.communicate(timeout=30)
    assert query.returncode == 130 and "interrupted" in err
    assert feco(folder, "status").returncode == 0
    assert feco(folder, "run", "--ds", str(DAY)).returncode == 0


def test_hostile_names_and_values_are_data_not_sql(tmp_path):
    odd_feature = 'ctr "7d"; DROP TABLE runs; --'
    # Half the other events spell Zürich decomposed (u and a combining diaeresis): NFC makes it one segment.
    events = make_events(DAY, events=3000, seed=1).with_columns(
        pl.when(pl.col("region") == "DE").then(pl.lit("DE'; DROP TABLE runs; --"))
        .when(pl.col("event_id") % 2 == 0).then(pl.lit("Zu\u0308rich 東京 \\ x"))
        .otherwise(pl.lit("Zürich 東京 \\ x")).alias("region"),
        pl.col("f_sparse").alias(odd_feature),
    )
    write_logs(tmp_path / "logs", events)
    config = parse_config({
        "paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
        "logs": {"features": [*FEATURES, odd_feature]},
        "sampling": {"events_per_window": 50},
    }, source=tmp_path / "feco.toml")
    tasks.run_day(DAY, config, deliver=False)
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        regions = {r for (r,) in conn.sql("SELECT DISTINCT segment_value FROM feco_daily WHERE segment_dim = 'region'").fetchall()}
        assert regions == {"DE'; DROP TABLE runs; --", "Zürich 東京 \\ x"}
        assert conn.sql("SELECT count(*) FROM runs").fetchall() == [(1,)]
        same = conn.sql("SELECT a.n_covered = b.n_covered FROM feco_daily a JOIN feco_daily b USING (ds, segment_dim, segment_value) "
                        "WHERE a.feature = $odd AND b.feature = 'f_sparse' AND a.segment_dim = 'all'",
                        params={"odd": odd_feature}).fetchall()
        assert same == [(True,)]


def test_odd_values_duplicates_and_stray_timestamps(tmp_path):
    events = make_events(DAY, events=3000, seed=2)
    n = events.height
    values = [math.nan, math.inf, -math.inf, None, -5.0, 1e300]
    events = events.with_columns(pl.Series("f_dense", [values[i % len(values)] for i in range(n)], dtype=pl.Float64))
    stray = make_events(DAY - timedelta(days=1), events=200, seed=3)  # another day's rows in this partition
    duplicated = pl.concat([events, events.head(30)])  # an event logged twice
    write_logs(tmp_path / "logs", duplicated)
    day_folder = tmp_path / "logs" / f"ds={DAY}" / "hour=01"
    stray.write_parquet(day_folder / "part-stray.parquet")
    config = parse_config({"paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
                           "logs": {"features": FEATURES}, "sampling": {"events_per_window": 50}},
                          source=tmp_path / "feco.toml")
    tasks.run_day(DAY, config, deliver=False)
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        rows, present, covered = conn.sql(
            "SELECT n_rows, n_present, n_covered FROM feco_daily WHERE feature = 'f_dense' AND segment_dim = 'all'").fetchall()[0]
        # NaN and NULL are not present; +inf and 1e300 are covered; -inf and -5 are present, not covered
        assert present == pytest.approx(rows * 4 / 6, abs=rows * 0.05)
        assert covered == pytest.approx(rows * 2 / 6, abs=rows * 0.05)
        windows = conn.sql("SELECT window_start, window_end FROM sample_windows").fetchall()
        sampled = tasks.read_sample(DAY, config.paths.samples)[0]
        assert sampled["event_ts"].dt.date().unique().to_list() == [DAY]
        assert len(windows) == 8


class BlockingWebhook(http.server.BaseHTTPRequestHandler):
    """Answers 200, except that the POST numbered ``block_at`` is held open until released."""

    block_at = 0
    received: ClassVar[list[str]] = []
    in_flight = threading.Event()
    release = threading.Event()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        BlockingWebhook.received.append(body["feco"]["message_id"])
        if len(BlockingWebhook.received) == BlockingWebhook.block_at:
            BlockingWebhook.in_flight.set()
            BlockingWebhook.release.wait(60)
        try:
            self.send_response(200)
            self.end_headers()
        except OSError:  # the client was killed while it waited
            pass

    def log_message(self, *args):
        pass


def deliveries(folder) -> dict[str, dict[str, tuple]]:
    with duckdb.connect(str(folder / "feco.duckdb"), read_only=True) as conn:
        rows = conn.sql("SELECT message_id, channel, status, attempts FROM page_deliveries").fetchall()
        open_ids = {m for (m,) in conn.sql("SELECT message_id FROM incidents WHERE event IS NOT NULL").fetchall()}
    by_channel: dict[str, dict[str, tuple]] = {}
    for message_id, channel, status, attempts in rows:
        by_channel.setdefault(channel, {})[message_id] = (status, attempts)
    return {"open": open_ids, **by_channel}


def test_a_run_killed_while_a_webhook_post_is_in_flight_delivers_every_message_at_least_once(tmp_path):
    """SIGKILL while the webhook holds the second of three POSTs open, then `feco run` again.

    Delivery is at least once: the message whose POST was in flight is sent again (the server
    may have acted on it; the killed run never recorded an answer), no message is lost, every
    other message and channel is sent exactly once, and no row says delivered for a POST never
    answered.
    """
    absent = ["f_gone_a", "f_gone_b", "f_gone_c"]  # logged the day before, gone on DAY: three incidents open
    before = DAY - timedelta(days=1)
    write_logs(tmp_path / "logs", make_events(before, events=2000, seed=3).with_columns(
        *(pl.lit(0.5).alias(name) for name in absent)))
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=4))
    (tmp_path / "feco.toml").write_text(write_config_file(tmp_path, features=[*FEATURES, *absent]).read_text()
                                        + '[alerts.notify]\njsonl = "alerts.jsonl"\nwebhook_url_env = "FECO_TEST_WEBHOOK"\n')
    backfill = feco(tmp_path, "backfill", "--start", str(before), "--end", str(DAY))  # detects, delivers nothing
    assert backfill.returncode == 0, backfill.stderr

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BlockingWebhook)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    BlockingWebhook.block_at, BlockingWebhook.received = 2, []
    BlockingWebhook.in_flight.clear()
    BlockingWebhook.release.clear()
    env = {**os.environ, "FECO_TEST_WEBHOOK": f"http://127.0.0.1:{server.server_port}/hooks/SECRET-TOKEN"}
    try:
        run = subprocess.Popen([*FECO, "run", "--ds", str(DAY), "--config", str(tmp_path / "feco.toml")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        assert BlockingWebhook.in_flight.wait(120), "the run never reached the webhook"
        run.send_signal(signal.SIGKILL)
        run.wait()
        BlockingWebhook.release.set()

        killed = deliveries(tmp_path)
        first, in_flight = BlockingWebhook.received
        assert len(killed["open"]) == len(absent)
        assert killed["log"] == killed["jsonl"] == {a: ("delivered", 1) for a in killed["open"]}
        assert killed["webhook"] == {first: ("delivered", 1)}  # the in-flight POST is not recorded as delivered

        rerun = feco(tmp_path, "run", "--ds", str(DAY), env=env)
        assert rerun.returncode == 0, rerun.stderr
    finally:
        BlockingWebhook.release.set()
        server.shutdown()
        server.server_close()

    after = deliveries(tmp_path)
    for channel in ("log", "jsonl", "webhook"):
        assert {a: status for a, (status, _) in after[channel].items()} == {a: "delivered" for a in after["open"]}
    assert after["log"] == after["jsonl"] == killed["log"]  # nothing sent twice on the channels that finished
    assert sorted(BlockingWebhook.received) == sorted([*after["open"], in_flight])  # the in-flight one twice, none lost
    assert len((tmp_path / "alerts.jsonl").read_text().splitlines()) == len(absent)
    assert "SECRET-TOKEN" not in rerun.stdout + rerun.stderr
