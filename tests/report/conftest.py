import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from small_warehouse import build


@pytest.fixture
def warehouse(tmp_path) -> Path:
    return build(tmp_path / "feco.duckdb")
