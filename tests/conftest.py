import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


# What a fresh clone lacks, told apart by the skips' reasons: one summary line each says how
# many tests it kept from running and how to get it (-ra lists each reason).
NEEDS = {
    "the public datasets in ../shared/data: `make data` fetches them (docs/data.md)":
        re.compile(r"shared/data|shared datasets|mq2008|mq2007_agg|webis|movielens", re.IGNORECASE),
    "chromium: `make browser` installs it (as root)": re.compile(r"chromium", re.IGNORECASE),
}


@pytest.fixture
def repo() -> Path:
    return REPO


def pytest_terminal_summary(terminalreporter) -> None:
    reasons = [report.longrepr[2] for report in terminalreporter.stats.get("skipped", [])
               if isinstance(report.longrepr, tuple)]
    for need, pattern in NEEDS.items():
        if count := sum(1 for reason in reasons if pattern.search(reason)):
            terminalreporter.write_line(f"{count} test{'s' * (count != 1)} skipped for want of {need}")


@pytest.fixture(scope="session", autouse=True)
def _spark_closed_while_output_is_open():
    """Stop a Spark session the tests left running and close its py4j gateway at the end of
    the session. Left to the interpreter's exit, py4j's connections log their closing after
    pytest has closed the streams a test's logging handlers write to: a "Logging error ... I/O
    operation on closed file" after the summary."""
    yield
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    if SparkContext._gateway is not None:
        SparkContext._gateway.shutdown()
        SparkContext._gateway = SparkContext._jvm = None
