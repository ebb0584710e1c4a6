"""A rerun of a published day that fails or is killed leaves that day as it was: nothing lost.

The control is the day as its first run published it. A rerun is then made to fail (an exception) and, apart, to be
killed (SIGKILL) at each file operation it makes in turn: every file written, removed or
renamed by the sample, coverage and publish steps. After each, the samples folder must be as it was,
byte for byte, and the warehouse must hold the same rows; a failure in the
sample step must not even open the warehouse (its file is unchanged, byte for byte). A killed
run leaves the previous day or the complete new one once the next sample step has cleaned up
after it. No staging folder is ever left behind.
"""

import io
import os
import shutil
import signal
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from feco import storage, tasks
from feco.cli import main
from feco.sample_folder import SAME_PRODUCTS_FILE, STATES_FILE, STATUS_FILE
from feco.sampling.day_folder import prepare_samples, recover_samples
from logbuilder import make_events, write_config_file, write_logs

DAY = date(2026, 3, 2)
NEXT = DAY + timedelta(days=1)
STAGED = (STATES_FILE, STATUS_FILE, SAME_PRODUCTS_FILE)  # the coverage step's output: rows in no fixed order
# Every file operation of a run, by where it is looked up.
OPERATIONS = [(storage, "write_parquet"), (storage, "remove"), (storage, "write_text"), (Path, "rename")]


def published_day(folder: Path) -> str:
    """Logs of two days, the first run once: the control state. Returns the config path."""
    for offset, day in enumerate((DAY, NEXT)):
        write_logs(folder / "logs", make_events(day, events=3000, seed=offset))
    config = str(write_config_file(folder, events_per_window=20))
    assert main(["run", "--ds", str(DAY), "--config", config]) == 0
    return config


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def tables(warehouse: Path) -> dict[str, list]:
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        names = [n for (n,) in conn.sql("SELECT table_name FROM information_schema.tables "
                                         "WHERE table_type = 'BASE TABLE'").fetchall()]
        return {n: conn.sql(f'SELECT * EXCLUDE (published_at) FROM "{n}" ORDER BY ALL' if n == "runs"
                            else f'SELECT * FROM "{n}" ORDER BY ALL').fetchall() for n in names}


def assert_same_samples(samples: Path, expected: dict[str, bytes], *, staged_may_be_missing: bool) -> None:
    """Every file byte for byte; the coverage step's staged counts, whose row order is not
    fixed, as data. They may be missing only once the rerun's new sample replaced the day."""
    found = files(samples)
    assert not [name for name in found if ".tmp" in name or ".old" in name], "a staging folder was left behind"
    for name in [n for n in expected if n.endswith(STAGED)]:
        if name in found:
            frames = [pl.read_parquet(io.BytesIO(data[name])) for data in (found, expected)]
            assert frames[0].sort(pl.all()).equals(frames[1].sort(pl.all())), name
        else:
            assert staged_may_be_missing, f"{name} was lost"
    assert {n: b for n, b in found.items() if not n.endswith(STAGED)} == \
        {n: b for n, b in expected.items() if not n.endswith(STAGED)}


class Injected(Exception):
    pass


def inject(monkeypatch, at: int, action) -> list[str]:
    """Make the ``at``-th file operation (from 1) call ``action`` instead; returns the log of
    operations seen."""
    seen = []
    for owner, name in OPERATIONS:
        original = getattr(owner, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            seen.append(f"{_name} {args[-1] if _name != 'rename' else args[0]}")
            if len(seen) == at:
                action()
            return _original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    return seen


def rerun_operations(tmp_path, monkeypatch) -> list[str]:
    folder = tmp_path / "dry"
    folder.mkdir()
    config = published_day(folder)
    with monkeypatch.context() as patch:
        seen = inject(patch, 0, lambda: None)
        tasks.run_day(DAY, config, deliver=False)
    return seen


@pytest.mark.slow  # ~14 s; a rerun killed at any file operation, above, stays in the suite
def test_a_rerun_failing_at_any_file_operation_leaves_the_published_day(tmp_path, monkeypatch):
    operations = rerun_operations(tmp_path, monkeypatch)
    first_staged = next(i for i, op in enumerate(operations, start=1) if op.endswith(STATES_FILE))
    assert len(operations) > 10  # the sample's windows, its summary, the swap, the staged counts

    def fail():
        raise Injected("injected failure")

    for at in range(1, len(operations) + 1):
        folder = tmp_path / f"fail-{at}"
        folder.mkdir()
        config = published_day(folder)
        samples, warehouse = files(folder / "samples"), (folder / "feco.duckdb").read_bytes()
        rows = tables(folder / "feco.duckdb")
        with monkeypatch.context() as patch:
            inject(patch, at, fail)
            with pytest.raises(Injected):
                tasks.run_day(DAY, config, deliver=False)
        assert_same_samples(folder / "samples", samples, staged_may_be_missing=at >= first_staged)
        if at < first_staged:  # the sample step failed: the warehouse was never opened
            assert (folder / "feco.duckdb").read_bytes() == warehouse, operations[at - 1]
        assert tables(folder / "feco.duckdb") == rows, operations[at - 1]
        shutil.rmtree(folder)


KILL_AT = """
import os, signal, sys
from pathlib import Path
from feco import storage, tasks
at, seen = int(sys.argv[1]), [0]
for owner, name in [(storage, "write_parquet"), (storage, "remove"), (storage, "write_text"), (Path, "rename")]:
    def counted(*args, _original=getattr(owner, name), **kwargs):
        seen[0] += 1
        if seen[0] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return _original(*args, **kwargs)
    setattr(owner, name, counted)
tasks.run_day(sys.argv[2], sys.argv[3], deliver=False)
"""


def test_a_rerun_killed_at_any_file_operation_leaves_the_previous_or_the_new_day(tmp_path, monkeypatch):
    operations = rerun_operations(tmp_path, monkeypatch)
    first_staged = next(i for i, op in enumerate(operations, start=1) if op.endswith(STATES_FILE))
    for at in range(1, len(operations) + 1):
        folder = tmp_path / f"kill-{at}"
        folder.mkdir()
        config = published_day(folder)
        samples, rows = files(folder / "samples"), tables(folder / "feco.duckdb")
        killed = subprocess.run([sys.executable, "-c", KILL_AT, str(at), str(DAY), config], check=False)
        assert killed.returncode == -signal.SIGKILL, operations[at - 1]
        recover_samples(tasks.as_config(config))  # what the next sample step does first
        assert_same_samples(folder / "samples", samples, staged_may_be_missing=at >= first_staged)
        assert tables(folder / "feco.duckdb") == rows, operations[at - 1]
        shutil.rmtree(folder)


KILL_AT_PUBLISH = """
import os, signal, sys
from feco import tasks
tasks.publish_day = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
tasks.run_day(sys.argv[1], sys.argv[2], deliver=False)
"""


# The rewritten logs: other events (the windows' counts change), or the same events with other
# values (only the sampled files' digest tells the two samples apart).
REWRITES = {"other events": lambda: make_events(DAY, events=3000, seed=5),
            "other values": lambda: make_events(DAY, events=3000, seed=0).with_columns(pl.col("f_dense") / 2)}


@pytest.mark.parametrize("rewrite", REWRITES)
def test_a_rerun_of_rewritten_logs_killed_at_publish_leaves_the_sample_the_warehouse_holds(tmp_path, rewrite):
    """Issue 60: the rerun's new sample stayed in place of the one the warehouse kept."""
    config = published_day(tmp_path)
    samples, rows = files(tmp_path / "samples"), tables(tmp_path / "feco.duckdb")
    shutil.rmtree(tmp_path / "logs" / f"ds={DAY}")
    write_logs(tmp_path / "logs", REWRITES[rewrite]())
    killed = subprocess.run([sys.executable, "-c", KILL_AT_PUBLISH, str(DAY), config], check=False)
    assert killed.returncode == -signal.SIGKILL
    prepare_samples(tasks.as_config(config))  # what the next sample step does first
    assert_same_samples(tmp_path / "samples", samples, staged_may_be_missing=False)
    assert tables(tmp_path / "feco.duckdb") == rows


def test_a_refused_rerun_leaves_the_day_and_the_next_days_bands_as_they_were(tmp_path, tmp_path_factory):
    """The issue's case: a copied hour file makes the rerun refuse the day (exit 1); the published
    sample must survive it whole, or the next day's query bands silently leave the day out."""
    control = tmp_path_factory.mktemp("control")
    published_day(control)
    config = published_day(tmp_path)
    hour = tmp_path / "logs" / f"ds={DAY}" / "hour=04"
    shutil.copy(hour / "part-0.parquet", hour / "part-0 (1).parquet")
    samples, warehouse = files(tmp_path / "samples"), (tmp_path / "feco.duckdb").read_bytes()
    assert main(["run", "--ds", str(DAY), "--config", config]) == 1
    assert_same_samples(tmp_path / "samples", samples, staged_may_be_missing=False)
    assert (tmp_path / "feco.duckdb").read_bytes() == warehouse

    os.remove(hour / "part-0 (1).parquet")
    for folder in (tmp_path, control):
        assert main(["run", "--ds", str(NEXT), "--config", str(folder / "feco.toml")]) == 0
    states = [tables(folder / "feco.duckdb")["coverage_states"] for folder in (tmp_path, control)]
    assert any(row[3] == "query_band" for row in states[1])
    assert states[0] == states[1]
