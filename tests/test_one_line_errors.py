"""What testers met as tracebacks (issue 34) is one line naming the cause, `feco: error: ...`.

A full disk, a read-only folder, an object store out of reach, a bad environment variable, a
bad option or config value: each is one line on stderr, with an exit code and no traceback,
and a failed rerun leaves the day it was rerunning as it was. Tests run as root, which
ignores permission bits: a full disk is made in process, a read-only folder is one under /sys.
"""

import errno
import os
import socket
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from feco import tasks
from feco.cli import main
from feco.sample_folder import STATES_FILE
from logbuilder import make_events, write_config_file, write_logs
from tests.faults.test_failed_rerun import DAY, assert_same_samples, files, published_day, tables


def feco(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feco", *args], capture_output=True, text=True,
                          timeout=120, check=False, env=os.environ | (env or {}))


def one_line(stderr: str) -> str:
    """The error line, once stderr is that line alone."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("feco: error: "), stderr
    return lines[0]


def full_disk_at(monkeypatch, name: str) -> None:
    """pyarrow's Parquet writer fails as on a full disk when it writes a file whose path holds
    ``name``: a few bytes written, then ENOSPC, with pyarrow's wording (which names no file)."""
    write_table = pq.write_table

    def write(table, where, *args, filesystem, **options):
        if name not in where:
            return write_table(table, where, *args, filesystem=filesystem, **options)
        with filesystem.open_output_stream(where) as stream:
            stream.write(b"PAR1")
        raise OSError(errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device")

    monkeypatch.setattr(pq, "write_table", write)


@pytest.mark.parametrize("name", ["window=3", STATES_FILE], ids=["sample step", "coverage step"])
def test_a_full_disk_is_one_line_and_the_published_day_is_kept(tmp_path, monkeypatch, capsys, name):
    config = published_day(tmp_path)
    samples, rows = files(tmp_path / "samples"), tables(tmp_path / "feco.duckdb")
    capsys.readouterr()
    full_disk_at(monkeypatch, name)

    assert main(["run", "--ds", str(DAY), "--config", config]) == 1

    line = one_line(capsys.readouterr().err)
    assert line.startswith(f"feco: error: {tmp_path / 'samples'}/") and name in line
    assert line.endswith(": No space left on device")
    # byte for byte, no temporary file left; the staged counts are the rerun's to write again
    assert_same_samples(tmp_path / "samples", samples, staged_may_be_missing=name == STATES_FILE)
    assert tables(tmp_path / "feco.duckdb") == rows


def test_a_full_disk_at_publish_keeps_the_sample_the_warehouse_holds(tmp_path, monkeypatch, capsys):
    """Issue 60: the rerun's sample (its logs rewritten since) was left in place of the one the
    warehouse kept, so the two disagreed about the day."""
    config = published_day(tmp_path)
    samples, rows = files(tmp_path / "samples"), tables(tmp_path / "feco.duckdb")
    write_logs(tmp_path / "logs", make_events(DAY, events=3000, seed=5))
    capsys.readouterr()

    def full_disk(*args, **kwargs):
        raise duckdb.IOException(f'IO Error: Could not write file "{tmp_path / "feco.duckdb"}": No space left on device')

    monkeypatch.setattr(tasks, "publish_day", full_disk)
    assert main(["run", "--ds", str(DAY), "--config", config]) == 1

    assert one_line(capsys.readouterr().err).endswith(": No space left on device")
    assert_same_samples(tmp_path / "samples", samples, staged_may_be_missing=False)
    assert tables(tmp_path / "feco.duckdb") == rows


def test_a_full_disk_writing_the_report_names_the_file_and_leaves_no_temporary(tmp_path, monkeypatch, capsys):
    config = published_day(tmp_path)
    out = tmp_path / "report"
    write_text = Path.write_text

    def full_disk(path, text, *args, **kwargs):
        if path.name != "index.html.tmp":
            return write_text(path, text, *args, **kwargs)
        write_text(path, text[:100], *args, **kwargs)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a write reports it: no file named

    monkeypatch.setattr(Path, "write_text", full_disk)
    capsys.readouterr()
    assert main(["report", "--out", str(out), "--config", config]) == 1
    assert one_line(capsys.readouterr().err) == f"feco: error: {out / 'index.html.tmp'}: No space left on device"
    assert sorted(p.name for p in out.iterdir()) == []


def _failed_commit():
    raise duckdb.TransactionException('TransactionContext Error: Failed to commit: Could not write file '
                                      '"/srv/feco/feco.duckdb.wal": No space left on device')


def _failed_write_then_rollback():
    try:
        raise duckdb.IOException('IO Error: Could not write file "/srv/feco/feco.duckdb": No space left on device')
    except duckdb.Error:
        raise duckdb.TransactionException("TransactionContext Error: cannot rollback - no transaction is active")


@pytest.mark.parametrize(("failure", "expected"), [
    (_failed_commit, 'feco: error: DuckDB: TransactionContext Error: Failed to commit: Could not write file '
                     '"/srv/feco/feco.duckdb.wal": No space left on device'),
    (_failed_write_then_rollback, 'feco: error: DuckDB: IO Error: Could not write file "/srv/feco/feco.duckdb": '
                                  'No space left on device'),
], ids=["failed commit", "failed write, then its rollback"])
def test_duckdb_unable_to_write_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys, failure, expected):
    monkeypatch.setattr(tasks, "run_day", lambda *args, **kwargs: failure())
    assert main(["run", "--ds", str(DAY), "--config", str(write_config_file(tmp_path))]) == 1
    assert one_line(capsys.readouterr().err) == expected


@pytest.mark.parametrize("bug", [TypeError("a bug"), KeyError("a bug"), duckdb.BinderException("a bug")])
def test_a_bug_keeps_its_traceback(tmp_path, monkeypatch, bug):
    def fail(*args, **kwargs):
        raise bug

    monkeypatch.setattr(tasks, "run_day", fail)
    with pytest.raises(type(bug)):
        main(["run", "--ds", str(DAY), "--config", str(write_config_file(tmp_path))])


def test_a_read_only_samples_folder_is_one_line(tmp_path):
    samples = "/sys/kernel/feco-samples"  # sysfs takes no new files, root's or anyone's
    write_logs(tmp_path / "logs", make_events(DAY, events=1500, seed=1))
    config = write_config_file(tmp_path)
    config.write_text(config.read_text().replace('samples = "samples"', f'samples = "{samples}"'))
    done = feco("run", "--ds", str(DAY), "--config", str(config))
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert line.startswith(f"feco: error: {samples}/")
    assert line.endswith((os.strerror(errno.EROFS), os.strerror(errno.EACCES), os.strerror(errno.EPERM)))


def test_an_object_store_refusing_connections_is_one_line_naming_the_endpoint(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"
    config = write_config_file(tmp_path)
    config.write_text(config.read_text().replace('logs = "logs"', 'logs = "s3://lake/logs"')
                      .replace('samples = "samples"', 'samples = "s3://lake/samples"'))
    secret = "wJalrXUtnFEMI-never-printed"
    done = feco("run", "--ds", str(DAY), "--config", str(config),
                env={"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "AKIATESTING",
                     "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": "us-east-1"})
    assert done.returncode == 1
    assert one_line(done.stderr) == (
        f"feco: error: cannot reach the object store at {endpoint} (could not connect to server): check that it "
        "is up and that AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL names it (scheme, host and port)")
    assert secret not in done.stderr and "AKIATESTING" not in done.stderr


@pytest.mark.parametrize("value", ["abc", "nan", "-1"])
def test_a_bad_lock_wait_is_a_usage_error_naming_the_variable(tmp_path, value):
    done = feco("run", "--ds", str(DAY), "--config", str(write_config_file(tmp_path)),
                env={"FECO_LOCK_WAIT_SECONDS": value})
    assert done.returncode == 2
    assert one_line(done.stderr) == f"feco: error: FECO_LOCK_WAIT_SECONDS={value!r} is not a number of seconds (0 or more)"


def test_report_out_naming_a_file_is_one_line(tmp_path):
    page = tmp_path / "index.html"
    page.write_text("<html></html>")
    done = feco("report", "--out", str(page), "--config", str(write_config_file(tmp_path)))
    assert done.returncode == 2
    assert one_line(done.stderr) == f"feco: error: --out {page} is a file: give the folder to write index.html in"
    assert page.read_text() == "<html></html>"


@pytest.mark.parametrize(("toml", "key"), [
    ("[coverage]\ndefault_rule = '> 1e999'\n", "coverage.default_rule"),
    ("[coverage.rules]\nf_dense = '!= -1e999'\n", "coverage.rules.f_dense"),
])
def test_an_infinite_coverage_threshold_is_a_config_error_naming_key_and_file(tmp_path, toml, key):
    config = write_config_file(tmp_path, extra=toml)
    done = feco("status", "--config", str(config))
    assert done.returncode == 2
    line = one_line(done.stderr)
    assert line.startswith(f"feco: error: {config}: key '{key}': coverage rule ")
    assert line.endswith("the threshold is not a finite number")
