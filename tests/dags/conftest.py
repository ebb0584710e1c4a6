"""Airflow under a throw-away AIRFLOW_HOME with a migrated SQLite metadata DB."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

DAGS = Path(__file__).resolve().parents[2] / "dags"


def airflow_env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
    }


@pytest.fixture(scope="session")
def airflow_home(tmp_path_factory) -> Path:
    pytest.importorskip("airflow")
    home = tmp_path_factory.mktemp("airflow_home")
    subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=airflow_env(home),
                   check=True, capture_output=True)
    return home
