"""Installing feco into an existing Airflow environment, as docs/airflow.md tells a team to:
Airflow first under its constraints, then feco without moving any of Airflow's pins, then the
DAGs parse there without import errors.

Airflow's official constraints file cannot be downloaded on a machine that reaches only the
package registries, so by default the test pins exactly what `pip install apache-airflow==V`
resolved in a fresh venv (V the version this project is tested with). Set
FECO_AIRFLOW_CONSTRAINTS to the official file (a path or URL) to use that instead.
"""

import os
import subprocess
import sys
from datetime import date
from importlib.metadata import version
from pathlib import Path

import pytest

from dags.conftest import DAGS
from logbuilder import make_events, write_config_file, write_logs

pytestmark = pytest.mark.slow  # a fresh venv with Airflow in it: a few minutes
REPO = Path(__file__).resolve().parents[2]
DAY = date(2026, 1, 3)


def pip(venv: Path, *args: str) -> None:
    result = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *args],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


def test_feco_installs_under_airflows_pins_and_its_dags_parse(tmp_path):
    airflow = f"apache-airflow=={version('apache-airflow')}"
    venv = tmp_path / "airflow-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    constraints = os.environ.get("FECO_AIRFLOW_CONSTRAINTS")
    pip(venv, airflow, *(["--constraint", constraints] if constraints else []))
    if not constraints:
        frozen = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "freeze"], check=True,
                                capture_output=True, text=True).stdout
        constraints = str(tmp_path / "constraints.txt")
        Path(constraints).write_text(frozen)
    pinned = Path(constraints).read_text() if Path(constraints).exists() else None

    pip(venv, str(REPO), "--constraint", constraints)

    if pinned is not None:  # nothing Airflow resolved was moved by installing feco
        after = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "freeze"], check=True,
                               capture_output=True, text=True).stdout.splitlines()
        before = {line.split("==")[0].lower() for line in pinned.splitlines() if "==" in line}
        moved = [line for line in after if "==" in line and line.split("==")[0].lower() in before
                 and line not in pinned.splitlines()]
        assert moved == []
    home = tmp_path / "airflow-home"
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS)}
    script = ("from airflow.dag_processing.dagbag import BundleDagBag\n"
              f"bag = BundleDagBag(dag_folder={str(DAGS)!r}, bundle_path={str(DAGS)!r})\n"
              "print(sorted(bag.dag_ids), bag.import_errors)\n")
    parsed = subprocess.run([str(venv / "bin" / "python"), "-c", script], env=env, capture_output=True,
                            text=True, cwd=tmp_path)
    assert parsed.returncode == 0, parsed.stderr[-3000:]
    assert parsed.stdout.strip().splitlines()[-1] == "['feco_daily', 'feco_ranker'] {}"

    # and the installed package runs a day on its own: its SQL came with it
    write_logs(tmp_path / "logs", make_events(DAY, events=500))
    config = write_config_file(tmp_path)
    run = subprocess.run([str(venv / "bin" / "feco"), "run", "--ds", str(DAY), "--config", str(config)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "feco.duckdb").exists()
