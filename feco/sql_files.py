"""The SQL files under ``sql/``: their text, and the relations the schema files define.

Standard library only, so the CLI can list the warehouse's relations in ``--help`` without
loading DuckDB.
"""

from __future__ import annotations

import re
from pathlib import Path

# sql/ beside the package in a checkout; feco/sql inside an installed wheel (setup.py ships it there).
SQL_DIR = next(folder for folder in (Path(__file__).resolve().parents[1] / "sql", Path(__file__).parent / "sql")
               if folder.is_dir())
_DEFINITION = re.compile(
    r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)",
    re.IGNORECASE | re.MULTILINE,
)


def sql(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def schema_statements() -> list[tuple[str, str, str]]:
    """``(kind, name, text)`` of every schema file in order; kind is "table" or "view"."""
    statements = []
    for path in sorted((SQL_DIR / "schema").glob("*.sql")):
        text = path.read_text(encoding="utf-8")
        match = _DEFINITION.search(text)
        if match is None:
            raise ValueError(f"{path} creates no table or view")
        statements.append((match.group(1).lower(), match.group(2), text))
    return statements


def schema_relations() -> dict[str, list[str]]:
    """The tables and views the schema files create: ``{"table": [...], "view": [...]}``."""
    relations: dict[str, list[str]] = {"table": [], "view": []}
    for kind, name, _ in schema_statements():
        relations[kind].append(name)
    return relations


def migrations(folder: Path | None = None) -> dict[str, Path]:
    """``sql/migrations/NNN_what.sql`` by name (the file's stem, its identity in a warehouse's
    ledger), in the order they apply: by number, then name."""
    found: dict[str, Path] = {}
    for path in sorted((folder or SQL_DIR / "migrations").glob("*.sql")):
        prefix = path.name.split("_", 1)[0]
        if not prefix.isdigit():
            raise ValueError(f"migration {path} is not named NNN_what.sql")
        found[path.stem] = path
    return dict(sorted(found.items(), key=lambda item: (int(item[0].split("_", 1)[0]), item[0])))
