"""``[paths] logs`` picks its log source, and each kind answers the questions that differ by kind
(the reading itself is tested through sampling: test_sampling.py, test_log_tables.py)."""

import subprocess
import sys

import pytest

from feco.sources import LogSource, source_for
from feco.sources.delta import DeltaLogs
from feco.sources.folder import FolderLogs
from feco.sources.iceberg import IcebergLogs
from logbuilder import make_config


@pytest.mark.parametrize(("logs", "kind", "versioned"), [
    ("logs", FolderLogs, False),
    ("s3://lake/events", FolderLogs, False),
    ("iceberg:search/logs.events", IcebergLogs, True),
    ("delta:tables/events", DeltaLogs, True),
])
def test_the_logs_location_picks_the_source(tmp_path, logs, kind, versioned):
    config = make_config(tmp_path, paths={"logs": logs, "samples": "samples", "warehouse": "feco.duckdb"})
    source: LogSource = source_for(config)
    assert type(source) is kind
    assert source.versioned is versioned


def test_a_folder_has_no_version_and_a_table_names_itself_in_refusals(tmp_path):
    folder = source_for(make_config(tmp_path))
    table = source_for(make_config(tmp_path, paths={"logs": "iceberg:search/logs.events", "samples": "samples",
                                                     "warehouse": "feco.duckdb"}))
    assert folder.version() is None
    assert table.where(None, []) == "the log table iceberg:search/logs.events"
    assert table.stamped_elsewhere(None, []) == ""


def test_picking_a_folder_source_loads_no_pyarrow(tmp_path):
    """feco status takes the source to learn whether it has a version: quick without pyarrow."""
    script = ("import sys; from pathlib import Path; from feco.config import parse_config; "
              "from feco.sources import source_for; "
              "config = parse_config({'paths': {'logs': 'logs', 'samples': 'samples', 'warehouse': 'feco.duckdb'}, "
              "'logs': {'features': ['f']}}, source=Path(sys.argv[1]) / 'feco.toml'); "
              "print(source_for(config).versioned, 'pyarrow' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False False", done.stdout + done.stderr
