"""The pipeline CLI: one clear line on errors, progress on backfill, a read-only query surface."""

import json
import os
from datetime import date, timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from feco.cli import main
from logbuilder import FEATURES, make_events, write_config_file, write_logs

START = date(2026, 3, 1)


@pytest.fixture
def config_file(tmp_path):
    for i in range(4):
        if i != 2:
            write_logs(tmp_path / "logs", make_events(START + timedelta(days=i), events=1500, seed=i))
    return str(write_config_file(tmp_path))


def test_run_then_query_in_every_format(config_file, capsys):
    assert main(["run", "--ds", "2026-03-01", "--config", config_file]) == 0
    assert "2026-03-01: published 40 events, 120 rows" in capsys.readouterr().out
    sql = "SELECT feature, n_rows FROM feco_daily WHERE segment_dim = 'all' ORDER BY feature"
    assert main(["query", sql, "--config", config_file, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"feature": f, "n_rows": 120} for f in sorted(FEATURES)]
    assert main(["query", sql, "--config", config_file, "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["feature,n_rows", "f_dense,120"]
    assert main(["query", sql, "--config", config_file]) == 0
    assert "f_sparse" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("DELETE FROM runs", "read-only"),
        ("INSERT INTO runs SELECT * FROM runs", "read-only"),
        ("DROP TABLE runs", "read-only"),
        ("CREATE TABLE x AS SELECT 1", "read-only"),
        ("ATTACH '/tmp/other.duckdb' AS other", "cannot read or write files"),
        ("COPY runs TO '/tmp/runs.csv'", "cannot read or write files"),
        ("SELECT * FROM read_csv('/etc/passwd')", "cannot read or write files"),
        ("INSTALL httpfs", "cannot read or write files"),
        ("SET enable_external_access = true", "locked"),
        ("SELEC 1", "query failed"),
    ],
)
def test_query_refuses_writes_and_file_access(config_file, capsys, sql, message):
    main(["run", "--ds", "2026-03-01", "--config", config_file])
    capsys.readouterr()
    assert main(["query", sql, "--config", config_file]) == 2
    err = capsys.readouterr().err
    assert err.startswith("feco: error: ") and message in err
    assert len(err.strip().splitlines()) == 1


def test_backfill_reports_every_day_and_fails_on_a_missing_one(config_file, capsys):
    code = main(["backfill", "--start", "2026-03-01", "--end", "2026-03-04", "--config", config_file])
    err = capsys.readouterr().err
    assert code == 1
    assert "[1/4] 2026-03-01 ok" in err and "[4/4] 2026-03-04 ok" in err
    assert "[3/4] 2026-03-03 FAILED: no log partition for 2026-03-03" in err
    assert "1 of 4 days failed: 2026-03-03" in err
    assert main(["status", "--config", config_file]) == 0
    assert "days:              3 (2026-03-01 to 2026-03-04)" in capsys.readouterr().out


def test_backfill_fail_fast_stops_at_the_first_failure(config_file, capsys):
    code = main(["backfill", "--start", "2026-03-03", "--end", "2026-03-04", "--fail-fast",
                 "--config", config_file])
    assert code == 1
    err = capsys.readouterr().err
    assert "[1/2] 2026-03-03 FAILED" in err and "[2/2]" not in err


@pytest.mark.parametrize(("notify", "said"), [([], "messages not sent (no --notify): 1 opened"),
                                               (["--notify"], "messages: 1 opened")], ids=["alone", "notify"])
def test_backfill_says_whether_its_messages_are_sent(config_file, capsys, monkeypatch, notify, said):
    from feco import tasks

    day = {"events": 40, "rows": 120, "alerts": {"alerts": 1, "incidents": 1, "messages": {"opened": 1}}}
    monkeypatch.setattr(tasks, "run_day", lambda ds, config, **options: day)
    delivered = []
    monkeypatch.setattr(tasks, "notify", lambda ds, config, **options: delivered.append(ds))
    assert main(["backfill", "--start", "2026-03-01", "--end", "2026-03-01", *notify, "--config", config_file]) == 0
    assert f"1 alert, 1 incidents active; {said} (" in capsys.readouterr().err
    assert delivered == ([START] if notify else [])


def test_errors_are_one_line_not_a_traceback(tmp_path, capsys):
    assert main(["run", "--ds", "2026-03-01", "--config", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("feco: error: config file") and "Traceback" not in err
    assert main(["status", "--config", str(tmp_path / "missing.toml")]) == 2


def test_query_before_any_run_explains_what_to_do(config_file, capsys):
    assert main(["query", "SELECT 1", "--config", config_file]) == 1
    assert f"run `feco run --ds DATE --config {config_file}` first" in capsys.readouterr().err


def test_bad_dates_are_usage_errors(config_file, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--ds", "03/01/2026", "--config", config_file])
    assert exit_info.value.code == 2
    assert "'03/01/2026' is not a date" in capsys.readouterr().err
    assert main(["backfill", "--start", "2026-03-04", "--end", "2026-03-01", "--config", config_file]) == 2


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in ("run", "backfill", "query", "status", "drops"):
        assert command in out


@pytest.mark.parametrize("command", ["coverage-drop", "coverage-drop-report"])
def test_experiment_help_shows_percent_signs_once(command, capsys):
    # argparse %-formats help strings but not descriptions: "%%" there printed literally.
    with pytest.raises(SystemExit):
        main(["experiment", command, "--help"])
    assert "%%" not in capsys.readouterr().out


def _read_only_folder(tmp_path):
    """A folder this process cannot create files in: a mode 555 one, or /sys for root."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    for candidate in (folder, Path("/sys")):
        try:
            os.close(os.open(candidate / "feco-probe", os.O_RDWR | os.O_CREAT))
        except OSError:
            return candidate
        os.remove(candidate / "feco-probe")
    pytest.skip("no folder here is read-only for this user")


def test_a_warehouse_folder_that_cannot_be_written_is_one_line(tmp_path, capsys):
    folder = _read_only_folder(tmp_path)
    write_logs(tmp_path / "logs", make_events(START, events=1500, seed=0))
    config = str(write_config_file(tmp_path))
    Path(config).write_text(Path(config).read_text().replace('warehouse = "feco.duckdb"',
                                                             f'warehouse = "{folder}/feco-test.duckdb"'))
    assert main(["run", "--ds", str(START), "--config", config]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"feco: error: cannot create the run lock {folder}/feco-test.duckdb.lock: ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["run", "--ds", str(START)], ["query", "SELECT 1"], ["status"]])
def test_a_warehouse_that_is_a_folder_is_one_line_and_leaves_nothing(tmp_path, capsys, command):
    write_logs(tmp_path / "logs", make_events(START, events=1500, seed=0))
    config = str(write_config_file(tmp_path))
    Path(config).write_text(Path(config).read_text().replace('warehouse = "feco.duckdb"', 'warehouse = "samples"'))
    (tmp_path / "samples").mkdir()
    before = sorted(tmp_path.rglob("*"))
    assert main([*command, "--config", config]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"feco: error: the warehouse {tmp_path}/samples is a folder: [paths] warehouse must "
                           f"name a DuckDB file, such as {tmp_path}/samples/feco.duckdb")
    assert sorted(tmp_path.rglob("*")) == before  # no lock, no sample, no owner file


HOSTILE_TEXT = "DE\x1b[2J\x1b]0;pwned\x07\r\n\x7f\x9b31m\u202eevil"


@pytest.mark.parametrize("output_format", ["table", "csv", "json"])
def test_printed_values_cannot_drive_the_terminal(output_format, capsys):
    # What `feco query`, `feco alerts` and `feco drops` print: a value from the logs in a text
    # column, a list, a categorical and a column's name (a PIVOT names columns after values).
    import unicodedata

    import polars as pl

    from feco.cli.options import print_frame

    frame = pl.DataFrame({"segment_value": [HOSTILE_TEXT, "Zürich"], "features": [[HOSTILE_TEXT], []],
                          HOSTILE_TEXT: ["c", "d"]}).with_columns(pl.col("segment_value").cast(pl.Categorical)
                                                                 .alias("category"))
    print_frame(frame, output_format)
    out = capsys.readouterr().out
    shown = [ch for ch in out if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf")]
    assert shown == []
    assert ("\\u001b[2J" if output_format == "json" else "DE\\x1b[2J\\x1b]0;pwned\\x07") in out
    assert "Zürich" in out or "Z\\u00fcrich" in out
    if output_format == "json":
        assert json.loads(out)[0]["segment_value"] == HOSTILE_TEXT  # JSON's own escapes, read back whole


def test_alerts_text_lines_cannot_drive_the_terminal(capsys):
    # `feco alerts` (text): each incident's lines and its alerts' lines, one line each.
    import unicodedata

    import polars as pl

    from feco.cli.pipeline import _print_incidents
    from feco.config import LogSchema

    incident = {"incident_id": "i1", "severity": "critical", "feature": "f_dense", "segment_dim": "region",
                "segment_value": HOSTILE_TEXT, "status": "open", "opened_ds": date(2026, 3, 1),
                "last_ds": date(2026, 3, 2), "alerts": 1, "paged": True, "source": None, "features": None,
                "headline_dim": "region", "headline_value": HOSTILE_TEXT,
                "detail": f"f_dense in region={HOSTILE_TEXT}: coverage 10.0% vs 50.0%",
                "on_call": f"silenced until 2026-03-03 00:00 UTC ({HOSTILE_TEXT}) by ana"}
    alert = {"incident_id": "i1", "ds": date(2026, 3, 2), "severity": "critical", "rule": "drop",
             "lagging": False, "detail": incident["detail"]}
    config = SimpleNamespace(logs=LogSchema(features=["f_dense"], sources={"dense": ["f_dense"]}))
    _print_incidents(pl.DataFrame([incident]), pl.DataFrame([alert]), config=config, verbose=True, config_flag="")
    out = capsys.readouterr().out
    assert [ch for ch in out if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf")] == []
    # headline, detail, who silenced it why, the alert, upstream, look further: one line each
    assert len(out.splitlines()) == 6 and "region=DE\\x1b[2J\\x1b]0;pwned\\x07" in out
