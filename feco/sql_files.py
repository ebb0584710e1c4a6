"""The SQL files under ``sql/``: their text, and the relations the schema files define.

Standard library only, so the CLI can list the warehouse's relations in ``--help`` without
loading DuckDB.
"""

from __future__ import annotations

import re
from pathlib import Path

SQL_DIR = Path(__file__).resolve().parents[1] / "sql"
_DEFINITION = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)",
    re.IGNORECASE | re.MULTILINE,
)


def sql(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def schema_files() -> list[Path]:
    """``sql/schema/*.sql`` in the order they apply (by file name)."""
    return sorted((SQL_DIR / "schema").glob("*.sql"))


def schema_relations() -> dict[str, list[str]]:
    """The tables and views the schema files create: ``{"table": [...], "view": [...]}``."""
    relations: dict[str, list[str]] = {"table": [], "view": []}
    for path in schema_files():
        for kind, name in _DEFINITION.findall(path.read_text(encoding="utf-8")):
            relations[kind.lower()].append(name)
    return relations
