"""`feco logs-ready` on a day the logs do not hold says so, rather than that its marker is missing."""

from datetime import date

from feco.cli import main as feco
from logbuilder import make_events, write_config_file, write_logs

DAY = date(2026, 11, 21)


def test_a_day_without_logs_is_named_as_such_and_one_still_written_by_its_marker(tmp_path, capsys):
    write_logs(tmp_path / "logs", make_events(DAY, events=200))
    config = write_config_file(tmp_path, readiness='marker = "_SUCCESS"')
    assert feco(["logs-ready", "--ds", "2026-01-21", "--config", str(config)]) == 1
    line = capsys.readouterr().err
    assert line.count("\n") == 1 and "the day has no logs" in line and "ds=2026-01-21 does not exist" in line
    assert "_SUCCESS" not in line

    assert feco(["logs-ready", "--ds", str(DAY), "--config", str(config)]) == 1  # written, not finished
    line = capsys.readouterr().err
    assert f"no _SUCCESS in {tmp_path / 'logs' / f'ds={DAY}'}" in line and "no logs" not in line
