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


# Parts every composed query may use (``sql/queries/shared/``), besides its own folder's.
SHARED_PARTS = "queries/shared"
_COMMENT = re.compile(r"--[^\n]*")
_STRING = re.compile(r"'[^']*'")
_PARAMETER = re.compile(r"\$\w+")
_WORD = re.compile(r"\b\w+\b")


def sql(name: str) -> str:
    """The text of ``sql/<name>.sql``; with a folder ``sql/<name>/`` beside it, composed with
    the parts it uses (:func:`composed`)."""
    text = (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")
    if not (SQL_DIR / name).is_dir():
        return text
    return composed(text, _parts(SHARED_PARTS) | _parts(name))


def composed(main: str, parts: dict[str, str]) -> str:
    """``main`` with the parts it names, and theirs, as common table expressions before it,
    each after those it names. A part is a file of one SELECT (no WITH) named for the relation
    it defines: a long query stays one statement, read a part at a time, and a part two
    queries need is written once."""
    order: list[str] = []

    def add_used_by(text: str, path: tuple[str, ...]) -> None:
        for name in _named_parts(text, parts):
            if path and name == path[-1]:
                continue  # a part's own name in it: a column named for its result
            if name in path:
                raise ValueError(f"SQL parts name each other in a cycle: {' -> '.join((*path, name))}")
            if name not in order:
                add_used_by(parts[name], (*path, name))
                order.append(name)

    add_used_by(main, ())
    if not order:
        return main
    expressions = ",\n".join(f"{name} AS (\n{parts[name].strip().rstrip(';')}\n)" for name in order)
    return f"WITH {expressions}\n{main}"


def _parts(folder: str) -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in sorted((SQL_DIR / folder).glob("*.sql"))}


def _named_parts(text: str, parts: dict[str, str]) -> list[str]:
    """The parts ``text`` names, in the order it first names them, comments, strings and
    $parameters aside."""
    code = _PARAMETER.sub(" ", _STRING.sub(" ", _COMMENT.sub(" ", text)))
    return list(dict.fromkeys(word for word in _WORD.findall(code) if word in parts))


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
