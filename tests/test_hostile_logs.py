"""Logs as a careless writer leaves them: each ends in one clear line or a counted warning,
never in a traceback, a silent drop or a count taken twice, with either engine: both run the
same input checks (``feco.sampling.window_files``, ``check_one_file_per_event`` and
``check_one_window_per_event``). The Spark cases start a local JVM and are marked slow."""

import json
import shutil
from datetime import UTC, date, datetime, time, timedelta

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from feco import tasks
from feco.cli import main
from feco.errors import ConfigError, DataError, UsageError
from feco.sample_folder import read_sample
from logbuilder import (
    FEATURES,
    blank_event_keys,
    engine_sections,
    make_config,
    make_events,
    write_config_file,
    write_local_logs,
    write_logs,
)

DAY = date(2026, 3, 2)


@pytest.fixture(params=["duckdb", pytest.param("spark", marks=pytest.mark.slow)])
def engine(request):
    if request.param == "spark":
        pytest.importorskip("pyspark", reason="pyspark (the spark extra) is not installed")
        if shutil.which("java") is None:
            pytest.skip("the Spark engine needs Java (17+) on PATH")
    return request.param


@pytest.fixture
def config(tmp_path, engine):
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=1))
    return make_config(tmp_path, **engine_sections(engine))


def sample_day(ds, config, **options):
    """The day sampled by the config's engine: its rows (in a fixed order) and windows."""
    tasks.sample(ds, config, **options)
    rows, windows = read_sample(ds, config.paths.samples)
    return rows.sort("window", "event_id", "position"), windows


def hour_file(config, hour: int, name: str = "part-0.parquet"):
    return config.paths.logs / f"ds={DAY}" / f"hour={hour:02d}" / name


def rewrite(path, change) -> None:
    change(pl.read_parquet(path)).write_parquet(path)


def test_reordered_columns_between_hour_files_are_read_by_name(config):
    expected, _ = sample_day(DAY, config)
    rewrite(hour_file(config, 4), lambda frame: frame.select(reversed(frame.columns)))
    # strings written as Parquet's string rather than polars' large_string read the same
    table = pl.read_parquet(hour_file(config, 7)).to_arrow()
    pq.write_table(table.cast(pa.schema([pa.field(f.name, pa.string() if f.type == pa.large_string() else f.type)
                                         for f in table.schema])), hour_file(config, 7))
    rows, _ = sample_day(DAY, config)
    assert rows.equals(expected)


@pytest.mark.parametrize(("change", "message"), [
    (lambda frame: frame.with_columns(pl.lit(1.0).alias("f_new")), "hour=04/part-0.parquet has column 'f_new'"),
    (lambda frame: frame.drop("f_sparse"), "has column 'f_sparse', .*hour=04/part-0.parquet does not"),
    (lambda frame: frame.with_columns(pl.col("f_dense").cast(pl.Float32)),
     "column 'f_dense' is Float64 in .*, Float32 in .*hour=04/part-0.parquet"),
])
def test_added_dropped_or_retyped_columns_name_the_file_and_the_column(config, change, message):
    rewrite(hour_file(config, 4), change)
    with pytest.raises(DataError, match=message):
        sample_day(DAY, config)


def test_backfill_lists_a_failed_day_and_goes_on(tmp_path, capsys, monkeypatch, engine):
    for i in range(3):
        write_logs(tmp_path / "logs", make_events(DAY + timedelta(days=i), events=1500, seed=i))
    drifted = tmp_path / "logs" / f"ds={DAY}" / "hour=04" / "part-0.parquet"
    rewrite(drifted, lambda frame: frame.drop("f_sparse"))
    config_file = str(write_config_file(tmp_path, engine=engine))
    run_day = tasks.run_day

    def crash_on_the_third_day(ds, config, **options):
        if ds == DAY + timedelta(days=2):
            raise ValueError("something feco did not expect")
        return run_day(ds, config, **options)

    monkeypatch.setattr(tasks, "run_day", crash_on_the_third_day)
    code = main(["backfill", "--start", str(DAY), "--end", str(DAY + timedelta(days=2)), "--config", config_file])
    err = capsys.readouterr().err
    assert code == 1
    assert f"[1/3] {DAY} FAILED: the logs' columns differ" in err
    assert f"[2/3] {DAY + timedelta(days=1)} ok" in err
    assert f"[3/3] {DAY + timedelta(days=2)} FAILED: ValueError: something feco did not expect" in err
    assert f"2 of 3 days failed: {DAY}, {DAY + timedelta(days=2)}" in err
    assert "Traceback" not in err


def test_a_bad_config_stops_a_backfill_at_once(tmp_path, capsys, monkeypatch):
    def refuse(ds, config, **options):
        raise UsageError("the same for every day")

    monkeypatch.setattr(tasks, "run_day", refuse)
    code = main(["backfill", "--start", str(DAY), "--end", str(DAY + timedelta(days=2)),
                 "--config", str(write_config_file(tmp_path))])
    assert code == 2
    assert capsys.readouterr().err.strip() == "feco: error: the same for every day"


@pytest.mark.parametrize("column", ["window", "^f_dense$", "*"])
def test_a_column_name_feco_cannot_read_as_a_name_is_refused(tmp_path, column):
    with pytest.raises(ConfigError, match=r"key 'logs.features': .*rename"):
        make_config(tmp_path, logs={"features": [column]})
    with pytest.raises(ConfigError, match=r"key 'logs.region': .*rename"):
        make_config(tmp_path, logs={"features": ["f_dense"], "region": column})


def test_logs_with_a_window_column_are_refused(config):
    for hour in range(24):
        if hour_file(config, hour).exists():
            rewrite(hour_file(config, hour), lambda frame: frame.with_columns(pl.lit(3).alias("window")))
    with pytest.raises(DataError, match="the logs have a column 'window', a name feco's sample adds"):
        sample_day(DAY, config)


def test_regex_like_column_names_are_read_literally(tmp_path, engine):
    names = {"f_dense": "a.b", "f_sparse": "f[1]", "f_signed": "x+y", "event_id": "id (1)", "event_ts": "ts$"}
    logs = make_events(DAY, events=2000, seed=1)
    write_logs(tmp_path / "plain" / "logs", logs)
    plain = make_config(tmp_path / "plain", **engine_sections(engine))
    odd_logs = tmp_path / "odd" / "logs"
    for path in (tmp_path / "plain" / "logs").rglob("*.parquet"):
        target = odd_logs / path.relative_to(tmp_path / "plain" / "logs")
        target.parent.mkdir(parents=True, exist_ok=True)
        pl.read_parquet(path).rename(names).write_parquet(target)
    odd = make_config(tmp_path / "odd", logs={"features": [names[f] for f in FEATURES], "event_id": "id (1)",
                                              "timestamp": "ts$"}, coverage={"rules": {"x+y": "!= 0"}},
                      **engine_sections(engine))
    plain_rows, plain_windows = sample_day(DAY, plain)
    tasks.sample(DAY, odd)
    odd_rows, odd_windows = read_sample(DAY, odd.paths.samples)
    assert odd_rows.rename({v: k for k, v in names.items()}).sort("window", "event_id", "position").equals(plain_rows)
    # the same windows; their files' digests differ, the files naming other columns
    assert odd_windows.drop("sample_digest").equals(plain_windows.drop("sample_digest"))
    (plain_states, _), (odd_states, status) = (staged_states(config) for config in (plain, odd))
    assert status["status"].to_list() == ["ok"] * 3
    renamed = odd_states.with_columns(pl.col("feature").replace({v: k for k, v in names.items()}))
    assert renamed.sort(renamed.columns).equals(plain_states.sort(plain_states.columns))


def staged_states(config):
    """The coverage step's staged states and feature status, counted by the config's engine."""
    tasks.compute_coverage(DAY, config)
    day = config.paths.samples / f"ds={DAY}"
    return pl.read_parquet(day / "_coverage_states.parquet"), pl.read_parquet(day / "_feature_status.parquet")


@pytest.mark.parametrize("copy_name", ["part-0 (1).parquet", "part-9.parquet"])
def test_a_copied_hour_file_is_refused_not_counted_twice(config, copy_name):
    shutil.copy(hour_file(config, 4), hour_file(config, 4, copy_name))
    with pytest.raises(DataError, match="have rows in two files.*Remove the duplicate") as refused:
        sample_day(DAY, config)
    for path in (hour_file(config, 4), hour_file(config, 4, copy_name)):
        assert str(path) in str(refused.value)


def test_events_split_over_two_files_are_refused(config, engine):
    """The same event ids in another file, with other values (logged twice)."""
    original = pl.read_parquet(hour_file(config, 4))
    original.with_columns(pl.col("f_dense") * 2).write_parquet(hour_file(config, 4, "part-1.parquet"))
    for events in (5, 10_000):  # sampled by step, and a short window taken whole
        sampling = {"windows": 1, "window_minutes": 60, "window_starts": ["04:00"], "events_per_window": events}
        with pytest.raises(DataError, match="have rows in two files"):
            sample_day(DAY, make_config(config.source.parent, sampling=sampling, **engine_sections(engine)))


def test_event_ids_of_one_hour_reused_in_another_are_counted_and_refused(config):
    """Hour 4's events again in hour 7, three hours later: each window sees every event once,
    so only comparing the windows finds them."""
    shifted = pl.read_parquet(hour_file(config, 4)).with_columns(pl.col("event_ts") + timedelta(hours=3))
    shifted.write_parquet(hour_file(config, 7, "part-1.parquet"))
    in_window = pl.col("event_ts").dt.time().is_between(time(7, 25), time(7, 35), closed="left")  # the third one
    reused = shifted.filter(in_window).get_column("event_id").n_unique()
    with pytest.raises(DataError, match=f"^{reused} event ids of {DAY} are in two sampling windows") as refused:
        sample_day(DAY, config)
    for path in (hour_file(config, 4), hour_file(config, 7, "part-1.parquet")):
        assert str(path) in str(refused.value)
    assert not (config.paths.samples / f"ds={DAY}").exists()


def test_null_event_ids_and_timestamps_are_counted_not_dropped_silently(tmp_path, capsys, engine):
    logs = make_events(DAY, events=2000, seed=1)
    write_logs(tmp_path / "logs", logs)
    path = tmp_path / "logs" / f"ds={DAY}" / "hour=04" / "part-0.parquet"
    height = pl.read_parquet(path).height
    blank_event_keys(path, event_ids=6, timestamps=4)  # in the CLI config's window 04:25-04:35
    config_file = write_config_file(tmp_path, engine=engine)
    config = make_config(tmp_path / "whole_hour", sampling={"window_starts": ["04:00"], "windows": 1,
                                                            "window_minutes": 60, "events_per_window": 10_000},
                         paths={"logs": str(tmp_path / "logs"), "samples": "samples", "warehouse": "feco.duckdb"},
                         **engine_sections(engine))
    rows, windows = sample_day(DAY, config)
    assert windows.select("rows_null_event_id", "rows_null_timestamp").row(0) == (6, 4)
    assert rows["event_id"].null_count() == 0
    assert rows.height == height - 6 - 4
    assert main(["run", "--ds", str(DAY), "--config", str(config_file)]) == 0
    assert main(["status", "--config", str(config_file)]) == 0
    out = capsys.readouterr().out
    assert f"rows left out:     4 with a NULL timestamp, 6 with a NULL event id, in the hours sampled ({DAY}" in out


@pytest.mark.parametrize("folder", ["hour=10 ", "hour=24", "hour=ten", "10", "hour=10/extra"])
def test_a_malformed_hour_folder_is_one_clear_line(config, folder):
    misplaced = config.paths.logs / f"ds={DAY}" / folder / "part-0.parquet"
    misplaced.parent.mkdir(parents=True)
    shutil.copy(hour_file(config, 4), misplaced)
    with pytest.raises(DataError, match=f"log file 'part-0.parquet' is in folder '{folder}' .*not in an hour folder"):
        sample_day(DAY, config)
    ready = tasks.check_logs(DAY, config, now=datetime(2026, 3, 4, tzinfo=UTC))
    assert not ready.ready and f"'{folder}'" in ready.reason


def test_hidden_and_underscore_files_and_folders_are_ignored(config):
    expected, _ = sample_day(DAY, config)
    junk = b"not parquet"
    hour = hour_file(config, 4).parent
    (hour / ".part-0.parquet.crc").write_bytes(junk)
    (hour / "_part-1.parquet").write_bytes(junk)
    for folder in ("_temporary/0", ".spark-staging", "hour=04/_temporary"):
        (hour.parent / folder).mkdir(parents=True, exist_ok=True)
        (hour.parent / folder / "part-0.parquet").write_bytes(junk)
    (hour.parent / "_SUCCESS").write_bytes(b"")
    rows, _ = sample_day(DAY, config)
    assert rows.equals(expected)


def test_a_file_corrupt_past_its_footer_is_named(config, engine):
    path = hour_file(config, 4)
    data = bytearray(path.read_bytes())
    data[4:len(data) // 2] = bytes(len(data) // 2 - 4)  # data pages zeroed, footer intact
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="corrupt or unreadable Parquet file .*hour=04/part-0.parquet"):
        sample_day(DAY, make_config(config.source.parent, sampling={
            "windows": 1, "window_minutes": 60, "window_starts": ["04:00"], "events_per_window": 5},
            **engine_sections(engine)))


def test_two_configs_cannot_share_a_samples_folder(config, tmp_path, engine):
    tasks.sample(DAY, config)
    tasks.sample(DAY, config)  # the same warehouse again: its own folder
    other = make_config(tmp_path, paths={"logs": "logs", "samples": "samples", "warehouse": "other.duckdb"},
                        **engine_sections(engine))
    with pytest.raises(UsageError, match=r"the samples folder .*samples belongs to the warehouse ../feco.duckdb, "
                                         r"not to this config's ../other.duckdb.*give each config its own"):
        tasks.sample(DAY, other)
    moved = tmp_path / "moved"  # samples and warehouse moved together still belong together
    shutil.copytree(tmp_path / "samples", moved / "samples")
    tasks.sample(DAY, make_config(moved, paths={"logs": str(config.paths.logs), "samples": "samples",
                                                "warehouse": "feco.duckdb"}, **engine_sections(engine)))


def test_a_missing_window_hour_is_refused_unless_allowed_then_recorded_as_missing(config):
    """Window 1 (04:25-04:35) reads hour=04 alone; without it the day is refused, naming it."""
    shutil.rmtree(hour_file(config, 4).parent)
    with pytest.raises(DataError, match=r"no files for hour=04 under .*ds=2026-03-02, which sampling windows "
                                        r"1 \(04:25-04:35\) read: .*--allow-incomplete"):
        sample_day(DAY, config)
    assert not (config.paths.samples / f"ds={DAY}").exists()
    _, windows = sample_day(DAY, config, allow_incomplete=True)
    assert windows.filter(window=1).select("events_available", "hours_missing").row(0) == (0, [4])
    assert windows.filter(pl.col("window") != 1)["hours_missing"].to_list() == [[]] * 7


def test_run_and_backfill_refuse_a_day_missing_a_window_hour_in_one_line(tmp_path, capsys):
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=1))
    shutil.rmtree(tmp_path / "logs" / f"ds={DAY}" / "hour=04")  # window 1, 04:25-04:35
    config_file = str(write_config_file(tmp_path))
    for command in (["run", "--ds", str(DAY)], ["backfill", "--start", str(DAY), "--end", str(DAY)]):
        assert main([*command, "--config", config_file]) == 1
        err = capsys.readouterr().err
        assert "no files for hour=04" in err and "windows 1 (04:25-04:35)" in err and "Traceback" not in err
    assert main(["run", "--ds", str(DAY), "--config", config_file]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert not (tmp_path / "samples" / f"ds={DAY}").exists()

    assert main(["backfill", "--start", str(DAY), "--end", str(DAY), "--allow-incomplete", "--config", config_file]) == 0
    capsys.readouterr()
    assert main(["status", "--config", config_file]) == 0
    out = capsys.readouterr().out
    assert "short windows:     0 " in out  # the missing window is not counted as short
    assert f"missing windows:   1 (hours without logs, sampled with --allow-incomplete: {DAY}" in out
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        alert = conn.sql("SELECT observed, detail FROM alerts WHERE rule = 'volume_drop'").fetchall()
    assert alert == [(7 * 5, "1 window without logs (hours missing from the logs): sampled events 35")]


def test_rows_stamped_on_another_day_are_counted_not_dropped_silently(tmp_path, capsys, engine):
    """An event of the next day in the hour file window 1 (04:25-04:35) reads, one of the day
    before in window 2's (07:25-07:35): counted there, the sample as it was."""
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=1))
    config = make_config(tmp_path, **engine_sections(engine))
    expected, expected_windows = sample_day(DAY, config)
    for hour, day, rows in ((4, DAY + timedelta(days=1), 7), (7, DAY - timedelta(days=1), 3)):
        stray = make_events(day, events=1, rows_per_event=rows, minutes=[hour * 60 + 30])
        pl.concat([pl.read_parquet(hour_file(config, hour)), stray]).write_parquet(hour_file(config, hour))
    rows, windows = sample_day(DAY, config)
    assert rows.equals(expected)
    assert windows["rows_outside_day"].to_list() == [0, 7, 3, 0, 0, 0, 0, 0]
    assert windows.drop("rows_outside_day").equals(expected_windows.drop("rows_outside_day"))
    config_file = str(write_config_file(tmp_path, engine=engine))
    assert main(["run", "--ds", str(DAY), "--config", config_file]) == 0
    capsys.readouterr()
    assert main(["status", "--format", "json", "--config", config_file]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["rows_outside_day"], status["outside_days"]) == (10, [str(DAY)])


def test_a_window_whose_files_hold_no_rows_in_it_is_refused_unless_allowed_then_recorded_as_missing(config):
    """Window 1 (04:25-04:35) reads hour=04, whose file holds the hour's other minutes only:
    the hour is missing from the window as if it had no file. One event there is a short
    window, not a missing one."""
    in_window = pl.col("event_ts").dt.minute().is_between(25, 34)
    one_event = pl.read_parquet(hour_file(config, 4)).filter(in_window).head(1)
    rewrite(hour_file(config, 4), lambda frame: frame.filter(~in_window))
    with pytest.raises(DataError, match=r"the logs of 2026-03-02 have files but no rows in the time of sampling "
                                        r"windows 1 \(04:25-04:35\) \(hour=04 under .*ds=2026-03-02\): "
                                        r"complete the logs, or run with --allow-incomplete") as refused:
        sample_day(DAY, config)
    assert "disagree" not in str(refused.value)  # the other hours' rows sit in their folders
    assert not (config.paths.samples / f"ds={DAY}").exists()
    _, windows = sample_day(DAY, config, allow_incomplete=True)
    assert windows.filter(window=1).select("events_available", "step", "hours_missing").row(0) == (0, None, [4])
    assert windows.filter(pl.col("window") != 1)["hours_missing"].to_list() == [[]] * 7
    rewrite(hour_file(config, 4), lambda frame: pl.concat([frame, one_event]))
    _, windows = sample_day(DAY, config)
    assert windows.filter(window=1).select("events_available", "hours_missing").row(0) == (1, [])


def test_run_refuses_a_window_whose_files_hold_no_rows_in_it_in_one_line(tmp_path, capsys):
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=1))
    rewrite(tmp_path / "logs" / f"ds={DAY}" / "hour=04" / "part-0.parquet",
            lambda frame: frame.filter(~pl.col("event_ts").dt.minute().is_between(25, 34)))
    config_file = str(write_config_file(tmp_path))
    assert main(["run", "--ds", str(DAY), "--config", config_file]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"feco: error: the logs of {DAY} have files but no rows in the time of sampling windows "
                          "1 (04:25-04:35) (hour=04 under ")
    assert err.count("\n") == 1 and "--allow-incomplete" in err
    assert main(["run", "--ds", str(DAY), "--allow-incomplete", "--config", config_file]) == 0
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        missing = conn.sql("SELECT window_index, events_available, hours_missing FROM sample_windows "
                           "WHERE len(hours_missing) > 0").fetchall()
    assert missing == [(1, 0, [4])]


@pytest.mark.parametrize(("local", "told"), [
    ("folders", "stamped 2 hours earlier than their folder (UTC; hour=04 holds rows stamped 02:xx)"),
    ("timestamps", "stamped 2 hours later than their folder (UTC; hour=01 holds rows stamped 03:xx)"),
])
def test_logs_in_local_time_are_refused_naming_how_timestamps_and_hour_folders_disagree(tmp_path, capsys, local,
                                                                                       told):
    """A log job on a clock two hours ahead of UTC: its folders by that clock's hours (the
    timestamps, in that zone, the right instants), or its naive timestamps read off it."""
    events = pl.concat([make_events(DAY + timedelta(days=d), events=2000, seed=5 + d) for d in (-1, 0, 1)])
    if local == "folders":
        write_local_logs(tmp_path / "logs", events.with_columns(pl.col("event_ts").dt.convert_time_zone("Etc/GMT-2")),
                         "Etc/GMT-2")
    else:
        write_logs(tmp_path / "logs", events)
        for path in (tmp_path / "logs").rglob("*.parquet"):
            rewrite(path, lambda frame: frame.with_columns(
                pl.col("event_ts").dt.convert_time_zone("Etc/GMT-2").dt.replace_time_zone(None)))
    assert main(["run", "--ds", str(DAY), "--config", str(write_config_file(tmp_path))]) == 1
    assert capsys.readouterr().err == (
        f"feco: error: no search events in any sampling window of {DAY}: the rows in the hour folders are {told}: "
        "timestamps and hour folders disagree, and feco reads hour folders and naive timestamps as UTC: are the "
        "timestamps or the folders in local time?\n")
