"""The read-only CLI surface: every result type in every format, SQL from files and stdin,
limits on time and memory, and output into a closed pipe."""

import io
import json
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date, timedelta
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from feco.cli import main
from feco.locking import READ_MEMORY_LIMIT
from feco.warehouse import open_for_write
from logbuilder import write_config_file, write_empty_warehouse_config, write_states

EXOTIC = ("SELECT INTERVAL 1 DAY AS span, union_value(n := 2)::UNION(n INT, s VARCHAR) AS choice, "
          "[1, 2] AS list, {'a': 1, 'b': [INTERVAL 2 DAY]} AS record, 'nan'::DOUBLE AS nan, "
          "'-inf'::DOUBLE AS minus_inf, 1.50::DECIMAL(5, 2) AS price, sum(3) AS total")


@pytest.fixture
def config_file(tmp_path):
    return write_empty_warehouse_config(tmp_path)


def query(config_file, *args):
    return main(["query", *args, "--config", config_file])


def test_every_result_type_prints_in_every_format(config_file, capsys):
    assert query(config_file, EXOTIC, "--format", "json") == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row == {"span": "1 day", "choice": "2", "list": [1, 2],
                   "record": {"a": 1, "b": ["2 days"]}, "nan": None, "minus_inf": None,
                   "price": 1.5, "total": "3"}  # sum() is a HUGEINT: text, as JSON cannot keep every one

    assert query(config_file, EXOTIC, "--format", "csv") == 0
    header, line = capsys.readouterr().out.splitlines()
    assert header == "span,choice,list,record,nan,minus_inf,price,total"
    assert line.startswith('1 day,2,"[1, 2]",')

    assert query(config_file, EXOTIC, "--format", "table") == 0
    assert "1 day" in capsys.readouterr().out


def test_every_type_of_duckdb_prints_in_every_format(config_file, capsys):
    """test_all_types(): each type's least and greatest value and NULL, nested ones too."""
    for output_format in ("table", "csv"):
        assert query(config_file, "SELECT * FROM test_all_types()", "--format", output_format) == 0
        out, err = capsys.readouterr()
        assert err == "" and len(out.splitlines()) >= 4, output_format
    assert query(config_file, "SELECT * FROM test_all_types()", "--format", "json") == 0
    least, greatest, nothing = json.loads(capsys.readouterr().out)
    assert (greatest["hugeint"], greatest["uhugeint"], least["dec38_10"]) == (
        "170141183460469231731687303715884105727", "340282366920938463463374607431768211455",
        "-9999999999999999999999999999.9999999999")
    assert (least["date"], greatest["timestamp"], greatest["time"]) == (
        "5877642-06-25 (BC)", "294247-01-10 04:00:54.775806", "24:00:00")
    assert greatest["date_array"] == ["1970-01-01", "infinity", "-infinity", None, "2022-05-12"]
    assert set(nothing.values()) == {None}


def test_dates_and_times_python_cannot_hold_print_as_duckdb_writes_them(config_file, capsys):
    far = ("SELECT 'infinity'::DATE AS d, '-infinity'::TIMESTAMP AS t, 'infinity'::TIMESTAMPTZ AS tz, "
           "'infinity'::TIMESTAMP_S AS s, '-infinity'::TIMESTAMP_MS AS ms, DATE '10000-01-01' AS far, "
           "TIME '24:00:00' AS midnight, [DATE '2026-03-01', 'infinity'] AS days, DATE '2026-03-01' AS plain")
    assert query(config_file, far, "--format", "json") == 0
    assert json.loads(capsys.readouterr().out) == [{
        "d": "infinity", "t": "-infinity", "tz": "infinity", "s": "infinity", "ms": "-infinity", "far": "10000-01-01",
        "midnight": "24:00:00", "days": ["2026-03-01", "infinity"], "plain": "2026-03-01"}]
    assert query(config_file, far, "--format", "csv") == 0
    assert capsys.readouterr().out.splitlines()[1] == ('infinity,-infinity,infinity,infinity,-infinity,10000-01-01,'
                                                       '24:00:00,"[""2026-03-01"", ""infinity""]",2026-03-01')
    assert query(config_file, far, "--format", "table") == 0
    assert "┆ -infinity ┆" in capsys.readouterr().out


def test_json_and_csv_keep_every_digit_of_wide_numbers_and_nanoseconds(config_file, capsys):
    wide = ("SELECT 170141183460469231731687303715884105727::HUGEINT AS huge, "
            "340282366920938463463374607431768211455::UHUGEINT AS unsigned, "
            "12345678901234567890.123456789012345678::DECIMAL(38, 18) AS wide, "
            "1234567890123.45::DECIMAL(15, 2) AS narrow, TIMESTAMP_NS '2026-03-01 10:00:00.123456789' AS ns")
    assert query(config_file, wide, "--format", "json") == 0
    assert json.loads(capsys.readouterr().out) == [{
        "huge": "170141183460469231731687303715884105727", "unsigned": "340282366920938463463374607431768211455",
        "wide": "12345678901234567890.123456789012345678", "narrow": 1234567890123.45,
        "ns": "2026-03-01 10:00:00.123456789"}]
    assert query(config_file, wide, "--format", "csv") == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "170141183460469231731687303715884105727,340282366920938463463374607431768211455,"
        "12345678901234567890.123456789012345678,1234567890123.45,2026-03-01 10:00:00.123456789")


def test_columns_of_one_name_print_apart(config_file, capsys):
    """SELECT * of a join: a polars frame (it panicked) and a JSON object hold a name once."""
    joined = "SELECT * FROM (SELECT 1 AS ds, 2 AS ds_1) JOIN (SELECT 3 AS ds) ON true"
    assert query(config_file, joined, "--format", "json") == 0
    assert json.loads(capsys.readouterr().out) == [{"ds": 1, "ds_1": 2, "ds_2": 3}]
    assert query(config_file, joined, "--format", "csv") == 0
    assert capsys.readouterr().out == "ds,ds_1,ds_2\n1,2,3\n"


def test_json_has_no_nan_or_infinity_anywhere(config_file, capsys):
    assert query(config_file, "SELECT ['nan'::DOUBLE, 1.0] AS l, {'x': 'inf'::DOUBLE} AS s",
                 "--format", "json") == 0
    out = capsys.readouterr().out
    assert "NaN" not in out and "Infinity" not in out
    assert json.loads(out) == [{"l": [None, 1.0], "s": {"x": None}}]


def test_csv_writes_nested_values_as_json_text(config_file, capsys):
    assert query(config_file, "SELECT [1, 2] AS l, {'x': 'a'} AS s", "--format", "csv") == 0
    import csv

    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert json.loads(rows[0]["l"]) == [1, 2] and json.loads(rows[0]["s"]) == {"x": "a"}


def test_nested_values_holding_types_polars_lacks_keep_their_shape(config_file, capsys):
    """An INTERVAL, a BLOB or a UNION inside a struct, list, array or map is DuckDB's text for
    that value; the nesting around it stays, so CSV prints it as JSON text as --help says."""
    nested = ("SELECT {'a': 1, 'b': [INTERVAL 2 DAY]} AS record, [INTERVAL 1 HOUR, NULL] AS spans, "
              "array_value(INTERVAL 1 DAY, INTERVAL 3 DAY) AS fixed, MAP {'k': '\\xAA'::BLOB} AS blobs, "
              "[union_value(n := 2)::UNION(n INT, s VARCHAR)] AS choices")
    assert query(config_file, nested, "--format", "csv") == 0
    import csv

    (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert {name: json.loads(text) for name, text in row.items()} == {
        "record": {"a": 1, "b": ["2 days"]}, "spans": ["01:00:00", None], "fixed": ["1 day", "3 days"],
        "blobs": {"k": "\\xAA"}, "choices": ["2"]}


def test_sql_from_a_file_and_from_standard_input(config_file, tmp_path, capsys, monkeypatch):
    (tmp_path / "q.sql").write_text("-- how many days\nSELECT 42 AS answer\n")
    assert query(config_file, "--file", str(tmp_path / "q.sql"), "--format", "csv") == 0
    assert capsys.readouterr().out == "answer\n42\n"
    for args in (["-"], ["--file", "-"]):
        monkeypatch.setattr(sys, "stdin", io.StringIO("SELECT 7 AS answer"))
        assert query(config_file, *args, "--format", "csv") == 0
        assert capsys.readouterr().out == "answer\n7\n"


@pytest.mark.parametrize("args", [[""], ["  \n"], ["-- only a comment"], [],
                                  ["SELECT 1", "--file", "q.sql"]])
def test_an_empty_or_ambiguous_query_is_a_usage_error(config_file, capsys, args):
    assert query(config_file, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("feco: error: ") and len(err.strip().splitlines()) == 1


def test_a_query_is_cancelled_at_its_timeout(config_file, capsys):
    assert query(config_file, "SELECT sum(hash(range)) FROM range(100000000000)", "--timeout", "0.5") == 2
    assert "query cancelled after 0.5s" in capsys.readouterr().err


def test_a_query_its_own_alarm_ends_is_said_to_have_timed_out(config_file, capsys, monkeypatch):
    """Under load the parent can be late to kill the query's process at the deadline, and the
    alarm the process set itself (a second later) ends it first: a timeout too, not memory."""
    from feco import user_query

    def late(interval, kill):
        return threading.Timer(interval + 600, kill)

    monkeypatch.setattr(user_query, "threading", SimpleNamespace(Event=threading.Event, Timer=late))
    assert query(config_file, "SELECT sum(hash(range)) FROM range(100000000000)", "--timeout", "0.5") == 2
    assert capsys.readouterr().err.strip() == ("feco: error: query cancelled after 0.5s, its time limit: "
                                               "narrow it or give it more time")


def test_a_query_spills_to_a_bounded_folder_of_its_own_removed_when_it_ends(config_file, tmp_path, capsys,
                                                                          monkeypatch):
    """Not beside the warehouse, where a query killed at its deadline left 445 MB of DuckDB's
    temp files: a folder of the query's own, at most --memory-limit, removed however it ends."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    setting = "SELECT current_setting('temp_directory') AS folder, current_setting('max_temp_directory_size') AS most"
    assert query(config_file, setting, "--memory-limit", "64MB", "--format", "json") == 0
    [spill] = json.loads(capsys.readouterr().out)
    assert Path(spill["folder"]).parent == tmp_path / "tmp" and spill["most"] == "61.0 MiB"
    sort = "SELECT sum(r) FROM (SELECT row_number() OVER (ORDER BY hash(range)) AS r FROM range(300000000))"
    assert query(config_file, sort, "--memory-limit", "400MB", "--timeout", "4") == 2  # out of room, or of time
    assert capsys.readouterr().err.startswith("feco: error: query ")
    assert list((tmp_path / "tmp").iterdir()) == [] and not (tmp_path / "feco.duckdb.tmp").exists()


def test_the_deadline_holds_whatever_the_query_waits_on(config_file, tmp_path, capsys):
    """A writer holds the warehouse: the query's process waits for it (up to 10 s, then exit
    3), and the deadline, which covers the whole query, ends it first."""
    with open_for_write(tmp_path / "feco.duckdb"):
        assert query(config_file, "SELECT 1", "--timeout", "1") == 2
    assert capsys.readouterr().err.strip() == ("feco: error: query cancelled after 1s, its time limit: "
                                               "narrow it or give it more time")


def test_memory_limit_is_the_option_not_most_of_the_machine(config_file, capsys):
    setting = "SELECT current_setting('memory_limit') AS m"
    expected = duckdb.connect(config={"memory_limit": READ_MEMORY_LIMIT}).sql(setting).fetchall()[0][0]
    assert query(config_file, setting, "--format", "csv") == 0
    assert capsys.readouterr().out.splitlines()[1] == expected
    assert query(config_file, setting, "--memory-limit", "64MB", "--format", "csv") == 0
    assert capsys.readouterr().out.splitlines()[1] == "61.0 MiB"
    assert query(config_file, "SELECT list(range) FROM range(20000000)", "--memory-limit", "32MB") == 2
    assert "needs more than --memory-limit" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--memory-limit", "lots"], "--memory-limit 'lots' is not a size"),
    (["--memory-limit", "1KB"], "--memory-limit 1KB is too small"),
    (["--memory-limit=-5MB"], "is not a size"),
    (["--timeout", "nan"], "--timeout must be 0 (no limit) or a number of seconds, got nan"),
    (["--timeout", "inf"], "got inf"),
    (["--timeout", "-1"], "got -1"),
])
def test_a_bad_limit_is_one_line_and_a_usage_error(config_file, capsys, args, message):
    assert query(config_file, "SELECT 1", *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("feco: error: ") and message in err and len(err.strip().splitlines()) == 1


PEAK_OF_THE_QUERY = """
import resource, sys
from feco.cli import main
code = main(sys.argv[1:])
# the largest resident set of this process's children: the query's process
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024, file=sys.stderr)
"""


@pytest.mark.parametrize(("sql", "limit"), [
    ("SELECT length(repeat('x', 1500000000))", "200MB"),  # a string: outside DuckDB's buffer manager
    ("SELECT len(l) FROM (SELECT list(range(100000000)) AS l)", "300MB"),  # a list of 100M numbers
])
def test_the_memory_limit_holds_for_memory_duckdb_does_not_manage(config_file, sql, limit):
    """The operating system bounds the query's process: these reached 3.1 GB and 7.3 GB."""
    done = subprocess.run([sys.executable, "-c", PEAK_OF_THE_QUERY, "query", sql, "--memory-limit", limit,
                           "--config", config_file], capture_output=True, text=True, timeout=300, check=False)
    *lines, last = done.stderr.strip().splitlines()
    code, peak = map(int, last.split())
    assert code == 2 and len(lines) == 1 and "needs more than --memory-limit" in lines[0], done.stderr
    # what Python, DuckDB and pyarrow hold before the query starts (about 150 MB here), plus the limit
    assert peak < int(limit.removesuffix("MB")) * 1_000_000 + 300_000_000


def test_help_lists_every_relation_of_the_warehouse(config_file, capsys):
    with duckdb.connect(config_file.replace("feco.toml", "feco.duckdb"), read_only=True) as conn:
        relations = [name for (name,) in conn.sql(
            "SELECT table_name FROM information_schema.tables").fetchall()]
    with pytest.raises(SystemExit):
        main(["query", "--help"])
    out = capsys.readouterr().out
    assert len(relations) >= 16
    for name in relations:
        assert f" {name}," in out or f" {name}\n" in out, name


def test_output_into_a_closed_pipe_ends_quietly(config_file):
    shell = (f"{sys.executable} -m feco query 'SELECT * FROM range(300000)' --config {config_file}"
             " | head -n 2")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", shell], capture_output=True, text=True,
                          timeout=120, check=False)
    assert len(done.stdout.splitlines()) == 2
    assert done.stderr == ""
    assert done.returncode == 141


def test_status_and_drops_in_every_format(config_file, tmp_path, capsys):
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        write_states(conn, {date(2026, 3, 1) + timedelta(days=i): 0.8 for i in range(9)})
        write_states(conn, {date(2026, 3, 10): 0.4})
    assert main(["drops", "--format", "json", "--config", config_file]) == 0
    (top, *_) = json.loads(capsys.readouterr().out)
    assert top["ds"] == "2026-03-10" and top["feature"] == "f_dense"
    assert main(["drops", "--format", "csv", "--config", config_file]) == 0
    assert capsys.readouterr().out.startswith("ds,feature,segment_dim")
    assert main(["status", "--format", "json", "--config", config_file]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["days"] == 0 and isinstance(status["rules_not_running"], list)
    assert main(["status", "--format", "csv", "--config", config_file]) == 0
    assert capsys.readouterr().out.startswith("warehouse,days,")


def test_status_says_when_the_decay_rule_cannot_run(tmp_path, capsys):
    reference = '[alerts.decay]\nreference = { start = 2026-03-01, end = 2026-03-07 }\n'
    config_file = str(write_config_file(tmp_path, extra=reference))
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        write_states(conn, {date(2026, 3, 6) + timedelta(days=i): 0.8 for i in range(10)})
    assert main(["status", "--config", config_file]) == 0
    out = capsys.readouterr().out
    assert "rule not running:  decay: its reference period 2026-03-01 to 2026-03-07 has 2 days" in out
    assert "it needs 4" in out

    with open_for_write(tmp_path / "feco.duckdb") as conn:
        write_states(conn, {date(2026, 3, 1) + timedelta(days=i): 0.8 for i in range(2)})
    assert main(["status", "--config", config_file]) == 0
    assert "decay: its reference period" not in capsys.readouterr().out


def test_status_says_a_config_without_reference_has_no_decay_rule(config_file, capsys):
    assert main(["status", "--config", config_file]) == 0
    assert "rule not running:  decay: no reference period" in capsys.readouterr().out


def test_a_long_query_gives_way_to_a_run(config_file, tmp_path):
    """`feco run` waits for the warehouse (locking.WRITE_WAIT_SECONDS); a query cancels itself
    before that by default, so a run started during a query is not refused."""
    warehouse = tmp_path / "feco.duckdb"
    reader = subprocess.Popen(
        [sys.executable, "-m", "feco", "query", "SELECT sum(hash(range)) FROM range(100000000000)",
         "--timeout", "10", "--config", config_file],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until_opened(warehouse, reader)
        with open_for_write(warehouse) as conn:  # waits while the query holds the file
            assert conn.sql("SELECT count(*) FROM runs").fetchall() == [(0,)]
        assert reader.wait(timeout=60) == 2
        assert "query cancelled after 10s" in reader.stderr.read()
    finally:
        reader.kill()
        reader.wait()


def _wait_until_opened(warehouse, process) -> None:
    """Return once another process holds the warehouse open."""
    while process.poll() is None:
        try:
            duckdb.connect(str(warehouse)).close()
        except duckdb.IOException:
            return
        time.sleep(0.05)
    raise AssertionError(f"the query ended first: {process.stderr.read()}")


def test_alerts_print_incidents_as_lines_or_as_a_table(config_file, tmp_path, capsys):
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, "
                     "observed, severity, status, detail) VALUES ('2026-03-10', 'a1', 'f_dense', "
                     "'region', 'DE', 'drop_vs_baseline', 0.4, 'high', 'open', 'f_dense fell')")
        conn.execute("INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, "
                     "status, severity, severity_rank, paged_rank, normal_days, rows_lost, headline_alert_id, "
                     "alert_ids, event, detail) VALUES ('2026-03-10', 'i1', 'f_dense', 'region', 'DE', "
                     "'2026-03-10', 'open', 'high', 3, 3, 0, 40, 'a1', ['a1'], 'opened', 'f_dense fell')")
    assert main(["alerts", "--since", "2026-03-01", "--config", config_file]) == 0
    headline, detail, further = capsys.readouterr().out.splitlines()
    assert headline.startswith("[HIGH] f_dense in region=DE: open, 2026-03-10") and detail.strip() == "f_dense fell"
    assert further.startswith("    look further: feco query \"SELECT ds, feature") and further.endswith(config_file)
    assert main(["alerts", "--since", "2026-03-01", "--format", "table", "--config", config_file]) == 0
    header, *_ = [row for row in capsys.readouterr().out.splitlines() if "severity" in row]
    assert {"severity", "feature", "segment_value", "status", "opened_ds"} <= set(
        header.replace("│", " ").replace("┆", " ").split())


def test_sample_windows_is_queried_without_quoting_a_keyword(config_file, tmp_path, capsys):
    with open_for_write(tmp_path / "feco.duckdb") as conn:
        conn.execute("INSERT INTO sample_windows (ds, window_index, window_start, window_end, events_available, "
                     "events_sampled) VALUES ('2026-03-01', 2, '2026-03-01 07:25Z', '2026-03-01 07:35Z', 9, 5)")
    assert query(config_file, "SELECT window_index, events_sampled FROM sample_windows", "--format", "csv") == 0
    assert capsys.readouterr().out == "window_index,events_sampled\n2,5\n"
