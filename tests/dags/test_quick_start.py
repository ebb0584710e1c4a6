"""docs/airflow.md's "Try it locally", run as written on a fresh AIRFLOW_HOME, and the DAGs'
import check from a folder that is not the DAGs' own."""

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from dags.conftest import DAGS, airflow_env

REPO = DAGS.parent
AIRFLOW_DOC = REPO / "docs" / "airflow.md"


def quick_start() -> str:
    """The shell block of the "Try it locally" section."""
    section = AIRFLOW_DOC.read_text().split("\n## Try it locally\n", 1)[1]
    return re.search(r"```sh\n(.*?)\n```", section, re.DOTALL).group(1)


def steps(output: str) -> dict[str, str]:
    """What each command printed, by command, from bash's trace (`set -x`: a `+ ` line before each)."""
    found, command = {}, None
    for line in output.splitlines():
        if line.startswith("+ "):
            command = line[2:]
            found[command] = ""
        elif command:
            found[command] += line + "\n"
    return found


def test_the_quick_start_runs_as_written_on_a_fresh_machine(tmp_path):
    pytest.importorskip("airflow")
    # nothing of this machine's Airflow or feco setup: only what the block exports
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "FECO_"))}
    env |= {"TMPDIR": str(tmp_path), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    done = subprocess.run(["bash", "-euxo", "pipefail", "-c", quick_start()], cwd=REPO, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:]
    printed = steps(done.stdout)
    assert "Pool feco_warehouse created" in printed['airflow pools set feco_warehouse 1 '
                                                   "'feco: one writer of the DuckDB warehouse'"]
    listed = printed["airflow dags list"]
    assert "feco_daily" in listed and "feco_ranker" in listed
    assert "No data found" in printed["airflow dags list-import-errors --local"]
    for command, day, other in [("airflow dags test feco_daily 2026-11-21", "2026-11-20", "2026-11-19"),
                                ("airflow dags test feco_daily 2026-11-21 -c '{\"ds\": \"2026-11-19\"}'",
                                 "2026-11-19", "2026-11-20")]:
        assert f"Returned value was: {{'ds': '{day}'" in printed[command]
        assert f"'ds': '{other}'" not in printed[command]
    assert "days:              2 (2026-11-19 to 2026-11-20)" in printed["feco status"]
    [folder] = tmp_path.iterdir()  # the block's mktemp -d: everything it wrote is in there
    with duckdb.connect(str(folder / "var" / "demo" / "feco.duckdb"), read_only=True) as conn:
        assert [str(day) for (day,) in conn.execute("SELECT ds FROM runs ORDER BY ds").fetchall()] == [
            "2026-11-19", "2026-11-20"]


def test_the_dags_import_their_helper_from_any_working_directory(airflow_home, tmp_path):
    """No -B: Airflow parses the folder as a plain DagBag, which does not put it on sys.path."""
    done = subprocess.run([str(Path(sys.executable).parent / "airflow"), "dags", "list-import-errors", "--local"],
                          env=airflow_env(airflow_home), cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "No data found" in done.stdout, (done.stdout + done.stderr)[-3000:]
