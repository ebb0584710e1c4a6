"""When a day's logs count as complete: the marker, the settling hours, the deadline."""

import os
from datetime import UTC, date, datetime, timedelta, timezone

from feco import tasks
from feco.sampling import day_windows
from logbuilder import make_config, make_events, write_logs

DAY = date(2026, 1, 3)
MIDNIGHT_AFTER = datetime(2026, 1, 4, tzinfo=UTC)


def config_with(tmp_path, **readiness):
    return make_config(tmp_path, readiness=readiness)


def hours_read(config) -> set[int]:
    return {hour for window in day_windows(DAY, config) for hour in window.hours()}


def age_files(root, minutes: float) -> None:
    """Set every log file's modification time to ``minutes`` before midnight after DAY."""
    moment = (MIDNIGHT_AFTER - timedelta(minutes=minutes)).timestamp()
    for path in root.rglob("*.parquet"):
        os.utime(path, (moment, moment))


def test_a_marker_file_decides_when_configured(tmp_path):
    config = config_with(tmp_path, marker="_SUCCESS")
    write_logs(tmp_path / "logs", make_events(DAY, events=200))
    assert not tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER).ready
    (tmp_path / "logs" / f"ds={DAY}" / "_SUCCESS").touch()
    readiness = tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER)
    assert readiness.ready and not readiness.overdue


def test_without_a_marker_every_hour_read_must_be_present_and_settled(tmp_path):
    config = config_with(tmp_path, settle_minutes=30)
    write_logs(tmp_path / "logs", make_events(DAY, events=2000))
    age_files(tmp_path / "logs", minutes=10)
    changed = tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER)
    assert not changed.ready and "changed at 23:50:00" in changed.reason
    assert tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER + timedelta(minutes=20)).ready


def test_a_missing_hour_that_a_window_reads_is_not_ready(tmp_path):
    config = config_with(tmp_path, settle_minutes=0)
    write_logs(tmp_path / "logs", make_events(DAY, events=2000))
    age_files(tmp_path / "logs", minutes=10)
    last = max(hours_read(config))
    for path in (tmp_path / "logs" / f"ds={DAY}" / f"hour={last:02d}").iterdir():
        path.unlink()
    readiness = tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER)
    assert not readiness.ready and f"hour partitions {last:02d} missing" in readiness.reason


def test_an_hour_no_window_reads_is_not_waited_for(tmp_path):
    config = config_with(tmp_path, settle_minutes=0)
    write_logs(tmp_path / "logs", make_events(DAY, events=2000))
    age_files(tmp_path / "logs", minutes=10)
    unread = min(set(range(24)) - hours_read(config))
    for path in (tmp_path / "logs" / f"ds={DAY}" / f"hour={unread:02d}").glob("*"):
        path.unlink()
    assert tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER).ready


def test_overdue_after_wait_hours_past_the_end_of_the_day(tmp_path):
    config = config_with(tmp_path, marker="_SUCCESS", wait_hours=6)
    before = tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER + timedelta(hours=5, minutes=59))
    after = tasks.check_logs(DAY, config, now=MIDNIGHT_AFTER + timedelta(hours=6))
    assert not before.overdue and after.overdue
    assert after.give_up_line() == (f"logs for {DAY} not ready by 2026-01-04 06:00 UTC: the day has no logs: "
                                    f"{tmp_path / 'logs' / f'ds={DAY}'} does not exist")


def test_the_finished_day_is_the_last_one_ended_when_a_run_fires():
    assert tasks.finished_day(MIDNIGHT_AFTER) == DAY  # a scheduled run, at midnight
    assert tasks.finished_day(MIDNIGHT_AFTER + timedelta(hours=13)) == DAY  # a manual run, mid-day
    assert tasks.finished_day(MIDNIGHT_AFTER - timedelta(microseconds=1)) == DAY - timedelta(days=1)
    assert tasks.finished_day(MIDNIGHT_AFTER + timedelta(hours=23, minutes=59)) == DAY
    berlin = timezone(timedelta(hours=2))
    assert tasks.finished_day(datetime(2026, 1, 4, 1, 0, tzinfo=berlin)) == DAY - timedelta(days=1)  # 23:00 UTC


def test_the_cli_exits_0_when_ready_and_1_when_not(tmp_path, capsys):
    from feco.cli import main
    from logbuilder import write_config_file

    write_logs(tmp_path / "logs", make_events(DAY, events=200))
    config = str(write_config_file(tmp_path, readiness='marker = "_SUCCESS"'))
    assert main(["logs-ready", "--ds", str(DAY), "--config", config]) == 1
    assert f"logs for {DAY} not ready by 2026-01-04 06:00 UTC: no _SUCCESS" in capsys.readouterr().err
    (tmp_path / "logs" / f"ds={DAY}" / "_SUCCESS").touch()
    assert main(["logs-ready", "--ds", str(DAY), "--config", config]) == 0
    assert capsys.readouterr().out == f"{DAY}: ready (marker present)\n"
