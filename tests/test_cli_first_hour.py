"""Issue 38, a new user's first hour: what the CLI says about incidents, drops and its own
options, the errors a first config and first logs meet, and the trec_eval preset's measures."""

import argparse
import json
import os
import subprocess
import sys
from datetime import date, timedelta

import numpy as np
import polars as pl
import pytest

from feco import user_query
from feco.cli import build_parser, main
from feco.warehouse import open_for_write
from logbuilder import make_events, write_config_file, write_empty_warehouse_config, write_logs, write_states

DAY = date(2026, 3, 10)
COST = "; costs an estimated -0.004 NDCG@8 in all traffic (-0.006 to -0.002)"
SOURCE = '[logs.sources.dense]\nfeatures = ["f_dense"]\nowner = "#ranking-data"\nrunbook = "https://wiki.example/f_dense"\n'


@pytest.fixture
def config_file(tmp_path):
    return write_empty_warehouse_config(tmp_path)


def alert(conn, ds, alert_id, segment, *, rule="drop_vs_moving_average", severity="high", drop=0.3, cost=COST):
    conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, drop_abs, "
                 "severity, status, detail) VALUES (?, ?, 'f_dense', ?, ?, ?, 0.5, ?, ?, 'open', ?)",
                 [ds, alert_id, *segment, rule, drop, severity, f"f_dense in {segment[1]}: fell by {drop}{cost}"])


def incident_day(conn, ds, *, status, headline=None, alert_ids=(), normal_days=0):
    """A day of incident i1: f_dense, rooted in all traffic, opened on DAY."""
    dim, value = headline or (None, None)
    conn.execute("INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, status, "
                 "severity, severity_rank, paged_rank, normal_days, rows_lost, headline_alert_id, headline_rule, "
                 "headline_dim, headline_value, alert_ids, detail, features) VALUES (?, 'i1', 'f_dense', 'all', "
                 "'all', ?, ?, 'high', 3, 3, ?, 40, ?, ?, ?, ?, ?, ?, ['f_dense'])",
                 [ds, DAY, status, normal_days, alert_ids[0] if headline else None,
                  "drop_vs_moving_average" if headline else None, dim, value, list(alert_ids),
                  f"f_dense in {value}: fell{COST}" if headline else "f_dense in all traffic: recovering"])


@pytest.fixture
def incident(config_file, tmp_path):
    """An incident in all traffic whose headline was in region DE: two days of alerts (each
    detail ending in the incident's cost), a day with only a lagging decay and no headline,
    resolved on the fourth day; the same decay fires again the day after, in no incident."""
    de, all_traffic, cross = ("region", "DE"), ("all", "all"), ("region x query_band", "DE x head")
    write_config_file(tmp_path, extra=SOURCE)  # f_dense is source dense's
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        alert(conn, DAY, "a1", de, drop=0.3)
        alert(conn, DAY, "a2", all_traffic, severity="medium", drop=0.05)
        alert(conn, DAY, "a3", cross, drop=0.4)
        alert(conn, DAY + timedelta(1), "a4", de, drop=0.25)
        for day, alert_id in ((2, "a5"), (4, "a6")):
            alert(conn, DAY + timedelta(day), alert_id, de, rule="decay_vs_reference", severity="critical", cost="")
        incident_day(conn, DAY, status="open", headline=de, alert_ids=("a1", "a2", "a3"))
        incident_day(conn, DAY + timedelta(1), status="ongoing", headline=de, alert_ids=("a4",))
        incident_day(conn, DAY + timedelta(2), status="ongoing", alert_ids=("a5",), normal_days=1)
        incident_day(conn, DAY + timedelta(3), status="resolved", normal_days=2)
        conn.execute("INSERT INTO runs VALUES (?, now(), 40, 120, 3, 'digest')", [DAY + timedelta(4)])
    return config_file


def alerts_out(config_file, capsys, *args) -> list[str]:
    assert main(["alerts", "--since", "2026-03-01", *args, "--config", config_file]) == 0
    return capsys.readouterr().out.splitlines()


# --- 1: a query that matches nothing says so -------------------------------------------------

def test_an_empty_table_says_0_rows_and_csv_stays_bare(config_file, capsys):
    sql = "SELECT ds, feature FROM feco_daily WHERE ds = DATE '2026-01-21'"
    assert main(["query", sql, "--config", config_file]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "0 rows"
    assert main(["query", sql, "--format", "csv", "--config", config_file]) == 0
    assert capsys.readouterr().out == "ds,feature\n"


# --- 2: what a fresh clone lacks says where to get it -----------------------------------------

def test_a_dataset_a_clone_lacks_is_pointed_at_make_data(tmp_path):
    from feco.errors import DataError
    from feco.paper.datasets import load_split

    with pytest.raises(DataError, match=r"mq2008 is not at .*`make data` fetches them .*docs/data.md"):
        load_split("mq2008", 1, root=tmp_path)


# --- 3: the headline segment; alerts under an incident only on the days it held them -------

def test_the_headline_says_the_worst_segment_when_it_is_not_the_incidents(incident, capsys):
    headline, detail, _, _ = alerts_out(incident, capsys)
    assert headline.startswith("[HIGH] f_dense in all traffic (worst: region=DE): resolved (recovered since "
                               "2026-03-12), 2026-03-10 to 2026-03-13")
    assert detail == f"    f_dense in DE: fell{COST}"


def test_lagging_alerts_are_marked_and_later_ones_are_not_the_incidents(incident, capsys):
    out = alerts_out(incident, capsys, "--verbose")
    listed = [line for line in out if line.startswith("      2026-")]
    assert [line.split()[0] for line in listed if "cost:" not in line] == ["2026-03-10"] * 3 + ["2026-03-11", "2026-03-12"]
    assert listed[-1] == "      2026-03-12 critical decay_vs_reference (lagging): f_dense in DE: fell by 0.3"
    assert not any("2026-03-14" in line for line in out)  # fired after it resolved: in no incident
    assert main(["alerts", "--since", "2026-03-01", "--all", "--format", "csv", "--config", incident]) == 0
    rows = list(pl.read_csv(capsys.readouterr().out.encode()).select("alert_id", "lagging").iter_rows())
    assert sorted(rows) == [("a1", False), ("a2", False), ("a3", False), ("a4", False), ("a5", True)]


def test_ds_shows_each_incident_as_it_stood_that_day_recovered_since_its_data_came_back(incident, capsys):
    # issue 62: `feco alerts --ds 2026-11-17 --all` showed the incident as it stands today
    def on(day: int) -> list[str]:
        assert main(["alerts", "--ds", str(DAY + timedelta(day)), "--all", "--config", incident]) == 0
        return capsys.readouterr().out.splitlines()

    failing, recovered = on(1), on(2)
    assert failing[0].startswith("[HIGH] f_dense in all traffic (worst: region=DE): ongoing, 2026-03-10 to 2026-03-11 "
                                 "(4 alerts")
    assert failing[2].startswith("    4 alerts on 2 days")
    assert recovered[0].startswith("[HIGH] f_dense in all traffic (worst: region=DE): recovered since 2026-03-12, "
                                   "2026-03-10 to 2026-03-12 (5 alerts")
    assert recovered[1] == f"    f_dense in DE: fell{COST}"  # the headline stays the failure's


def test_status_says_how_each_incident_of_the_week_stands_and_its_urgency(incident, capsys):
    assert main(["status", "--config", incident]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("incident:")]
    assert line == ("incident:          high f_dense in all traffic: resolved (recovered since 2026-03-12), opened "
                    "2026-03-10, low urgency (daily digest); f_dense in DE: fell")


# --- 5: the CLI ------------------------------------------------------------------------------

def test_all_is_one_line_per_incident_and_verbose_says_the_cost_once(incident, capsys):
    out = alerts_out(incident, capsys, "--all")
    assert len(out) == 5  # headline, detail, the alerts' line, upstream, look further
    assert out[2] == ("    5 alerts on 3 days (1 critical, 3 high, 1 medium); worst: 2026-03-10 high "
                      "drop_vs_moving_average: f_dense in DE: fell by 0.3; 1 lagging, on days without a live alert "
                      "(a 7-day average still holding the bad days: they do not keep the incident open)")
    verbose = alerts_out(incident, capsys, "--verbose")
    assert sum("costs an estimated" in line or "cost: an estimated" in line for line in verbose) == 2  # detail, once
    assert "      2026-03-10 cost: an estimated -0.004 NDCG@8 in all traffic (-0.006 to -0.002)" in verbose


def test_an_incident_says_its_source_owner_runbook_and_the_query_to_look_further(incident, capsys):
    _, _, upstream, further = alerts_out(incident, capsys)
    assert upstream == "    upstream: dense; owner #ranking-data; runbook https://wiki.example/f_dense"
    command = further.removeprefix("    look further: ")
    assert command.startswith('feco query "SELECT ds, feature') and command.endswith(f" --config {incident}")
    sql = command.split('"')[1]
    assert main(["query", sql, "--format", "csv", "--config", incident]) == 0
    assert capsys.readouterr().out.startswith("ds,feature,n_rows,pct,missing_pct")


def test_drops_leave_out_crosses_and_warmup_and_show_the_all_traffic_drop(config_file, tmp_path, capsys):
    days = [DAY - timedelta(9) + timedelta(days=i) for i in range(12)]  # 2026-03-01 .. 03-12
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        write_states(conn, {ds: 0.4 if ds == days[-1] else 0.8 for ds in days})
        write_states(conn, {ds: 0.2 if ds == days[-1] else 0.8 for ds in days}, ("region x query_band", "DE x head"))
        write_states(conn, {ds: 0.1 if ds == days[4] else 0.8 for ds in days}, ("region", "US"))  # in warm-up
        write_states(conn, {ds: 0.5 if ds == days[-1] else 0.8 for ds in days}, ("region", "DE"), rows_per_window=50)
    assert main(["drops", "--format", "json", "--config", config_file]) == 0
    top, *_ = json.loads(capsys.readouterr().out)
    assert (top["ds"], top["segment_dim"], top["drop_points"], top["all_traffic_drop_points"]) == (
        "2026-03-12", "all", pytest.approx(40, abs=0.2), pytest.approx(40, abs=0.2))
    assert main(["drops", "--dim", "region x query_band", "--format", "json", "--config", config_file]) == 0
    cross, *_ = json.loads(capsys.readouterr().out)
    assert (cross["segment_value"], cross["all_traffic_drop_points"]) == ("DE x head", pytest.approx(40, abs=0.2))
    assert main(["drops", "--dim", "region", "--min-rows", "100", "--format", "json", "--config", config_file]) == 0
    region, *_ = json.loads(capsys.readouterr().out)  # DE's 400 rows a day pass 100; US fell in the warm-up
    assert region["segment_value"] == "DE"
    assert main(["drops", "--dim", "regoin", "--config", config_file]) == 2
    assert "did you mean 'region'?" in capsys.readouterr().err


@pytest.mark.parametrize("output", ["table", "csv", "json"])
@pytest.mark.parametrize("unbuffered", [False, True])
def test_every_format_into_a_closed_pipe_exits_141(config_file, output, unbuffered):
    """With PYTHONUNBUFFERED set, sys.stdout dropped what a write left over when the reader
    went away: csv exited 0 with its output cut."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    env |= {"PYTHONUNBUFFERED": "1"} if unbuffered else {}
    shell = (f"{sys.executable} -m feco query 'SELECT * FROM range(300000)' --format {output} "
             f"--config {config_file} | head -n 1")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert (done.returncode, done.stderr, len(done.stdout.splitlines())) == (141, "", 1)


def test_coverage_states_names_its_window_window_index_and_query_says_so(config_file, tmp_path, capsys):
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        write_states(conn, {DAY: 0.8})
    assert main(["query", "SELECT window_index, n_rows FROM coverage_states ORDER BY 1 LIMIT 1", "--format", "csv",
                 "--config", config_file]) == 0
    assert capsys.readouterr().out == "window_index,n_rows\n0,1000\n"
    for sql in ("SELECT window FROM coverage_states", 'SELECT "window" FROM sample_windows'):
        assert main(["query", sql, "--config", config_file]) == 2
        err = capsys.readouterr().err
        assert "window is an SQL keyword" in err and "window_index" in err and err.count("\n") == 1


def test_a_warehouse_whose_states_have_window_is_upgraded_keeping_its_rows(tmp_path):
    path = tmp_path / "feco.duckdb"
    with open_for_write(path) as conn:  # made as a warehouse before migration 031 held it
        write_states(conn, {DAY: 0.8})
        conn.execute('ALTER TABLE coverage_states RENAME COLUMN window_index TO "window"')
        conn.execute("DELETE FROM schema_migrations WHERE migration = '031_coverage_states_window_index'")
        before = conn.sql("SELECT * FROM coverage_states ORDER BY ALL").fetchall()
    with open_for_write(path) as conn:
        assert "window" not in conn.sql("SELECT * FROM coverage_states").columns
        assert conn.sql("SELECT * FROM coverage_states ORDER BY ALL").fetchall() == before
        assert conn.sql("SELECT count(*) FROM feco_daily").fetchall() == [(1,)]


def test_an_empty_query_is_refused_before_its_process_starts(config_file, capsys, monkeypatch):
    def no_process(*args, **kwargs):
        raise AssertionError("a process was started")

    monkeypatch.setattr(user_query.subprocess, "Popen", no_process)
    for sql in ["", " ;\n-- a note\n/* a /* nested */ comment */"]:
        assert main(["query", sql, "--config", config_file]) == 2
        assert capsys.readouterr().err == "feco: error: the query is empty (no statement, only comments or blanks)\n"


def test_help_wraps_descriptions_and_every_option_has_help(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    head = capsys.readouterr().out.split("positional arguments:")[0]
    assert max(len(line) for line in head.splitlines()) <= 80
    without = []
    parsers = [("feco", build_parser())]
    while parsers:
        name, parser = parsers.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers += [(f"{name} {sub}", child) for sub, child in action.choices.items()]
            elif action.help is None:
                without.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert without == []


# --- 6: errors that say more --------------------------------------------------------------

def first_run(tmp_path, capsys, events: pl.DataFrame, *, ds: str = str(DAY), folder=None, extra: str = "") -> str:
    """`feco run` on logs of ``events`` (written as hour folders unless ``folder`` writes them):
    its one line of error."""
    (folder or write_logs)(tmp_path / "logs", events)
    config = write_config_file(tmp_path, extra=extra)
    assert main(["run", "--ds", ds, "--config", str(config)]) != 0
    err = capsys.readouterr().err
    assert err.startswith("feco: error: ") and err.count("\n") == 1
    return err


def test_a_text_feature_column_names_its_file_and_key(tmp_path, capsys):
    err = first_run(tmp_path, capsys, make_events(DAY, events=300).with_columns(pl.col("f_dense").cast(pl.String)))
    assert "feature column 'f_dense' is String, not numeric" in err and ".parquet" in err
    assert f"[logs] features in {tmp_path / 'feco.toml'}" in err


def test_files_directly_in_a_day_folder_are_named_as_such(tmp_path, capsys):
    def flat(root, events):
        (root / f"ds={DAY}").mkdir(parents=True)
        events.write_parquet(root / f"ds={DAY}" / "part-0.parquet")

    err = first_run(tmp_path, capsys, make_events(DAY, events=300), folder=flat)
    assert f"log file 'part-0.parquet' is in {tmp_path / 'logs' / f'ds={DAY}'} itself" in err and "''" not in err


def test_a_day_folder_named_otherwise_is_pointed_at(tmp_path, capsys):
    def basic(root, events):
        write_logs(root, events)
        (root / f"ds={DAY}").rename(root / "ds=20260310")

    err = first_run(tmp_path, capsys, make_events(DAY, events=300), folder=basic)
    assert "the logs hold 'ds=20260310'" in err and "ds=YYYY-MM-DD" in err
    assert "the logs hold ds=2026-03-10 to ds=2026-03-10" in first_run(
        tmp_path / "other", capsys, make_events(DAY, events=300), ds="2026-03-11")


@pytest.mark.parametrize(("column", "key"), [("region", "region"), ("query", "query")])  # label: test_coverage_only
def test_a_missing_column_names_its_key_and_file(tmp_path, capsys, column, key):
    err = first_run(tmp_path, capsys, make_events(DAY, events=300).drop(column))
    assert f"[logs] {key} in {tmp_path / 'feco.toml'}" in err and ".parquet" in err
    assert not (tmp_path / "samples" / f"ds={DAY}").exists()  # said before the day is sampled


def test_an_unknown_key_is_given_the_nearest_known_one(tmp_path, capsys):
    for extra, nearest in (("[alerts]\nwarmup_day = 8\n", "warmup_days"), ("[alerts.drop]\nrelativ = 0.1\n", "relative"),
                           (SOURCE.replace("owner", "ownr"), "owner")):
        config = write_config_file(tmp_path, extra=extra)
        assert main(["status", "--config", str(config)]) == 2
        assert f"unknown key; did you mean '{nearest}'?" in capsys.readouterr().err


def test_sources_are_lists_or_tables_with_an_owner_and_a_runbook(tmp_path, capsys):
    from feco.config import load_config

    tables = load_config(write_config_file(tmp_path, extra=SOURCE))
    short = load_config(write_config_file(tmp_path, extra='[logs.sources]\ndense = ["f_d*"]\n'))
    assert tables.logs.source_features() == short.logs.source_features() == {"dense": ["f_dense"]}
    assert tables.logs.source_contact("dense") == ("#ranking-data", "https://wiki.example/f_dense")
    assert short.logs.source_contact("dense") == (None, None)


def test_the_first_run_hint_keeps_the_config_it_was_given(tmp_path, capsys):
    config = write_config_file(tmp_path)
    for command in ("status", "alerts", "drops"):
        assert main([command, "--config", str(config)]) == 1
        assert capsys.readouterr().err == (f"feco: error: no warehouse at {tmp_path / 'feco.duckdb'} yet: run "
                                           f"`feco run --ds DATE --config {config}` first\n")


# --- 7: the trec_eval preset's measures -----------------------------------------------------

def test_the_trec_eval_preset_reports_recip_rank_without_a_cutoff(tmp_path, capsys):
    """Its default measures are trec_eval's: recip_rank has no cut-off, so a query whose first
    relevant item is below rank 10 counts (MRR@10 scored it 0)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(7)
    run, qrels = [], []
    for query in range(40):
        scores = rng.permutation(60) / 64  # exact in single precision: trec_eval 9 and 10 agree
        run += [f"q{query} Q0 d{item} {rank} {score} t" for rank, (item, score) in enumerate(
            sorted(enumerate(scores), key=lambda pair: -pair[1]), start=1)]
        qrels += [f"q{query} 0 d{item} 1" for item in rng.choice(60, 2, replace=False)]
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    assert main(["evaluate", "--preset", "trec_eval", "--format", "json", "--qrels", str(tmp_path / "qrels.txt"),
                 "--run", str(tmp_path / "run.txt")]) == 0
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    with open(tmp_path / "qrels.txt") as q, open(tmp_path / "run.txt") as r:
        values = pytrec_eval.RelevanceEvaluator(pytrec_eval.parse_qrel(q), {"recip_rank"}).evaluate(
            pytrec_eval.parse_run(r))
    expected = sum(v["recip_rank"] for v in values.values()) / len(values)
    assert "mrr@10" not in metrics and metrics["mrr"] == pytest.approx(expected, abs=1e-12)
    assert any(v["recip_rank"] < 0.1 for v in values.values())  # the cut-off would have changed it


@pytest.mark.parametrize("command", [["alerts"], ["status"], ["query", "SELECT 1"]])
def test_the_quick_commands_leave_the_alert_detector_scipy_and_pyarrow_unloaded(incident, command):
    # what keeps them under half a second (bench/cli_latency.py): SciPy alone takes ~0.5 s to
    # import, pyarrow 0.1 s (results reach polars through the Arrow C stream interface); a
    # warehouse with an incident, so that listing it runs
    script = ("import sys; from feco.cli import main; code = main(sys.argv[1:]); "
              "print(code, *(name in sys.modules for name in ('scipy', 'feco.alerts.detect', 'pyarrow')))")
    since = ["--since", "2026-03-01"] if command == ["alerts"] else []
    done = subprocess.run([sys.executable, "-c", script, *command, *since, "--config", incident],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "0 False False False", done.stdout + done.stderr
