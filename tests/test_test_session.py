"""The test session's own output (tests/conftest.py): one line says how many tests skipped for
want of the public datasets or chromium, and nothing is printed after the summary."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_session(folder, tests: str) -> subprocess.CompletedProcess:
    """pytest on ``tests`` (a module's text) with this suite's conftest as a plugin."""
    (folder / "test_sample.py").write_text(textwrap.dedent(tests))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
                           "--rootdir", str(folder), str(folder / "test_sample.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=600, check=False)


def test_the_summary_counts_the_tests_that_need_the_datasets_or_chromium(tmp_path):
    done = run_session(tmp_path, """
        import pytest

        @pytest.mark.skipif(True, reason="MQ2008 not in ../shared/data/ltr")
        def test_a(): pass

        @pytest.mark.skipif(True, reason="needs mq2007_agg")
        def test_b(): pass

        @pytest.mark.skipif(True, reason="no chromium on PATH: `make browser` installs it")
        def test_c(): pass

        @pytest.mark.skipif(True, reason="something else")
        def test_d(): pass
    """)
    lines = done.stdout.splitlines()
    assert "2 tests skipped for want of the public datasets in ../shared/data: `make data` fetches them " \
           "(docs/data.md)" in lines, done.stdout
    assert "1 test skipped for want of chromium: `make browser` installs it (as root)" in lines


@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java (17+) on PATH")
@pytest.mark.slow  # a local Spark session (~9 s)
def test_a_spark_session_left_running_logs_nothing_after_the_summary(tmp_path):
    pytest.importorskip("pyspark", reason="pyspark (the spark extra) is not installed")
    # A handler on the stream pytest captures (as Airflow's logging setup adds one), then a
    # session left running: its py4j connections close at the interpreter's exit.
    done = run_session(tmp_path, """
        import logging, sys

        def test_logging_to_the_captured_stream():
            logging.getLogger().addHandler(logging.StreamHandler(sys.stderr))
            logging.getLogger().setLevel(logging.INFO)

        def test_a_spark_session():
            from pyspark.sql import SparkSession
            spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
            assert spark.range(3).count() == 3
    """)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Logging error" not in done.stderr and "closed file" not in done.stderr, done.stderr[-3000:]
