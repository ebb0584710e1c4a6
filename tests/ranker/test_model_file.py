"""The team's model file, as the red team broke it (issue 60): a file cut inside a tree, empty,
garbage or random bytes is one line naming the file and what it is, exit 2, with nothing lost;
a file replaced in place by another model is a new version from the day it is first published,
and the days scored before keep theirs. `feco run` runs as a child process: LightGBM's loader
can abort or segfault the process that reads such a file."""

import subprocess
import sys
from datetime import date, timedelta

import duckdb
import lightgbm as lgb
import numpy as np
import pytest

from feco.ranker.model_file import text_problem
from logbuilder import FEATURES, make_events, write_config_file, write_logs
from tests.faults.test_failed_rerun import assert_same_samples, files, tables

DAY = date(2026, 3, 2)
NEXT = DAY + timedelta(days=1)


def feco(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "feco", *args], capture_output=True, text=True, timeout=300,
                          check=False)


def save_model(path, *, seed: int, rounds: int) -> None:
    """A small lambdarank model on the logs' features, under their names, as text."""
    rows = make_events(DAY - timedelta(days=1), events=400, seed=seed)
    data = lgb.Dataset(rows.select(FEATURES).to_numpy(), label=rows["label"].to_numpy(), group=np.full(400, 3),
                       feature_name=list(FEATURES))
    lgb.train({"objective": "lambdarank", "min_data_in_leaf": 5, "verbose": -1, "seed": seed}, data,
              num_boost_round=rounds).save_model(str(path))


def served_day(folder) -> str:
    """Two days of logs, the first published with the team's model A; the config's path."""
    for offset, day in enumerate((DAY, NEXT)):
        write_logs(folder / "logs", make_events(day, events=3000, seed=offset))
    save_model(folder / "model.txt", seed=1, rounds=5)
    config = str(write_config_file(folder, events_per_window=20, extra=f"""
        [ranker.model]
        file = "model.txt"
        valid_from = {DAY}
    """))
    run = feco("run", "--ds", str(DAY), "--config", config)
    assert run.returncode == 0, run.stderr
    return config


def cut_inside_tree(folder) -> bytes:
    content = (folder / "model.txt").read_bytes()
    return content[:content.index(b"Tree=1\n") + 200]


def no_tree_per_iteration(folder) -> bytes:
    """Whole as text, but LightGBM's loader divides by this count: SIGFPE, in the child."""
    return (folder / "model.txt").read_bytes().replace(b"num_tree_per_iteration=1", b"num_tree_per_iteration=0")


@pytest.mark.parametrize("bad, said", [
    (cut_inside_tree, "cut inside tree 1 (of 5)"),
    (no_tree_per_iteration, "LightGBM cannot load it: it gave no reason (its loader ended with signal 8 (SIGFPE))"),
    (lambda _: b"", "an empty file, not a LightGBM model"),
    (lambda _: b"model = gbdt\nTree=0\n", "not a LightGBM text model: its first line is 'model = gbdt', not 'tree'"),
    (lambda _: bytes(np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8)),
     "binary, not a LightGBM text model (byte 0 is"),
], ids=["cut inside a tree", "loader crash", "empty", "garbage", "random bytes"])
def test_a_bad_model_file_replaced_in_place_is_one_line_and_nothing_is_lost(tmp_path, bad, said):
    config = served_day(tmp_path)
    samples, rows = files(tmp_path / "samples"), tables(tmp_path / "feco.duckdb")
    (tmp_path / "model.txt").write_bytes(bad(tmp_path))

    run = feco("run", "--ds", str(NEXT), "--config", config)

    lines = run.stderr.splitlines()
    assert run.returncode == 2 and len(lines) == 1 and run.stdout == "", run.stderr
    assert lines[0].startswith(f"feco: error: {config}: [ranker.model] file {tmp_path / 'model.txt'}: ")
    assert said in lines[0]
    assert_same_samples(tmp_path / "samples", samples, staged_may_be_missing=False)
    assert tables(tmp_path / "feco.duckdb") == rows


def test_a_model_file_cut_anywhere_is_refused_before_lightgbm_reads_it(tmp_path):
    save_model(tmp_path / "model.txt", seed=1, rounds=5)
    content = (tmp_path / "model.txt").read_bytes()
    assert text_problem(content) is None
    end = content.index(b"end of trees")
    read = [at for at in range(1, end + len(b"end of trees"), 7) if text_problem(content[:at]) is None]
    assert read == []


def test_a_model_replaced_in_place_is_a_new_version_and_the_days_before_keep_theirs(tmp_path):
    config = served_day(tmp_path)
    warehouse = tmp_path / "feco.duckdb"

    def daily(ds):
        with duckdb.connect(str(warehouse), read_only=True) as conn:
            return conn.execute("SELECT * FROM ranker_daily WHERE ds = ? ORDER BY ALL", [ds]).fetchall()

    first = daily(DAY)
    save_model(tmp_path / "model.txt", seed=2, rounds=8)  # model B over A's file
    assert feco("run", "--ds", str(NEXT), "--config", config).returncode == 0
    rerun = feco("run", "--ds", str(DAY), "--config", config)
    assert rerun.returncode == 0, rerun.stderr

    with duckdb.connect(str(warehouse), read_only=True) as conn:
        versions = conn.execute("SELECT run_id, valid_from FROM model_runs ORDER BY valid_from").fetchall()
        named = conn.execute("SELECT DISTINCT ds, run_id FROM ranker_daily ORDER BY ds").fetchall()
        orphans = conn.execute("SELECT count(*) FROM ranker_daily WHERE run_id NOT IN "
                               "(SELECT run_id FROM model_runs)").fetchone()[0]
    assert [valid_from for _, valid_from in versions] == [DAY, NEXT]
    assert named == [(DAY, versions[0][0]), (NEXT, versions[1][0])] and orphans == 0
    assert daily(DAY) == first  # the rerun scored it with A again, from A's saved copy
    status = feco("status", "--config", config)
    new, old = versions[1][0].removeprefix("external-"), versions[0][0].removeprefix("external-")
    assert (f"model changed:     the [ranker.model] file held new bytes on {NEXT}: version {new} serves from then "
            f"on (1 day scored, {NEXT}); {old} keeps the days it scored (1 day scored, {DAY})") in status.stdout

    # asked otherwise: the day is scored by the file as it is now, a version of B from that day
    assert feco("run", "--ds", str(DAY), "--rescore", "--config", config).returncode == 0
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        named = conn.execute("SELECT DISTINCT ds, run_id FROM ranker_daily ORDER BY ds").fetchall()
        kept = conn.execute("SELECT count(*) FROM model_runs WHERE run_id = ?", [versions[0][0]]).fetchone()[0]
    assert named == [(DAY, f"external-{DAY}-{new.split('-')[-1]}"), (NEXT, versions[1][0])] and kept == 1
