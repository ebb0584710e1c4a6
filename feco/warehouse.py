"""The DuckDB warehouse: versioned schema from ``sql/``, day-wise transactional publish, safe reads.

DuckDB allows one writing process per file. Writers wait a while for the lock and then fail
with a clear message; readers open the file read-only with external access switched off, so
a query can neither write nor read arbitrary files.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import duckdb
import polars as pl

from feco.errors import DataError, UsageError, WarehouseBusyError
from feco.locking import READ_MEMORY_LIMIT, WRITE_WAIT_SECONDS, check_warehouse_path
from feco.sql_files import migrations, schema_statements, sql

if TYPE_CHECKING:
    from feco.config import Config

# The schema of the first release, which stored no version; each migration
# sql/migrations/NNN_*.sql brings a warehouse to version NNN.
FIRST_VERSION = 1

# Tables that hold one day's results; publishing a day replaces its rows in all of them.
DAY_TABLES = ("sample_windows", "coverage_states", "feature_status", "runs", "alerts", "incidents", "incident_costs")

_READ_ONLY_SETTINGS = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


def quote(identifier: str) -> str:
    """Quote an identifier that comes from config, so no name is pasted into SQL raw."""
    return '"' + identifier.replace('"', '""') + '"'


@contextmanager
def open_for_write(path: Path, *, moving_average_days: int = 7,
                   wait_seconds: float = WRITE_WAIT_SECONDS) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open (creating if needed) the warehouse for writing, with its schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = _connect(path, read_only=False, wait_seconds=wait_seconds)
    try:
        create_schema(conn, moving_average_days=moving_average_days)
        yield conn
    finally:
        conn.close()


def open_configured(config: Config):
    """:func:`open_for_write` on the config's warehouse, its views over the config's
    moving-average window: how every pipeline step opens it."""
    return open_for_write(config.paths.warehouse, moving_average_days=config.moving_average_days)


@contextmanager
def open_read_only(path: Path, *, wait_seconds: float = 10.0,
                   memory_limit: str = READ_MEMORY_LIMIT) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the warehouse for queries only: no writes, no file access beyond the warehouse,
    and at most ``memory_limit`` of memory (see feco.locking)."""
    if not path.exists():
        raise DataError(f"no warehouse at {path}: run `feco run --ds DATE` first")
    settings = {**_READ_ONLY_SETTINGS, "memory_limit": memory_limit}
    conn = _connect(path, read_only=True, wait_seconds=wait_seconds, config=settings)
    try:
        yield conn
    finally:
        conn.close()


def _connect(path: Path, *, read_only: bool, wait_seconds: float, config: dict | None = None):
    check_warehouse_path(path)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=config or {})
        except duckdb.IOException as error:
            if "lock" not in str(error).lower():
                raise DataError(f"cannot open warehouse {path}: {error}") from None
            if time.monotonic() >= deadline:
                raise WarehouseBusyError(
                    f"warehouse {path} is in use by another feco process "
                    f"(waited {wait_seconds:g}s); try again when it has finished"
                ) from None
            time.sleep(0.5)
        except (duckdb.ParserException, duckdb.InvalidInputException) as error:  # a bad setting
            raise UsageError(f"cannot open warehouse {path}: {str(error).splitlines()[0]}") from None


def create_schema(conn: duckdb.DuckDBPyConnection, *, moving_average_days: int,
                  migrations_dir: Path | None = None) -> None:
    """Create the warehouse's schema, or upgrade an older one, in one transaction.

    A new warehouse gets the tables and views of ``sql/schema`` at the latest version. An
    older one first gets the tables it lacks (created as they are now), then the migrations
    of ``sql/migrations`` numbered above its version, in order, then the views (which may
    read migrated columns). A failure leaves the warehouse as it was.
    """
    available = migrations(migrations_dir)
    latest = max(available, default=FIRST_VERSION)
    statements = [(kind, text.replace("{moving_average_days}", str(int(moving_average_days))))
                  for kind, _, text in schema_statements()]
    conn.execute("BEGIN TRANSACTION")
    try:
        version = schema_version(conn)
        if version is not None and version > latest:
            raise DataError(f"the warehouse's schema is version {version}, newer than this feco "
                            f"knows ({latest}): upgrade feco")
        for kind, text in statements:
            if kind == "table":
                conn.execute(text)
        for number, path in sorted(available.items()):
            if version is not None and number > version:
                _migrate(conn, path)
        for kind, text in statements:
            if kind == "view":
                conn.execute(text)
        conn.execute("INSERT OR IGNORE INTO schema_version VALUES ($version, now())",
                     {"version": latest})
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def schema_version(conn: duckdb.DuckDBPyConnection) -> int | None:
    """The warehouse's schema version; None for a new, empty warehouse."""
    tables = {name for (name,) in conn.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    if "schema_version" in tables:
        return conn.sql("SELECT max(version) FROM schema_version").fetchall()[0][0]
    return FIRST_VERSION if "runs" in tables else None


def _migrate(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    try:
        conn.execute(path.read_text(encoding="utf-8"))
    except duckdb.Error as error:
        raise DataError(f"cannot upgrade the warehouse: migration {path.name} failed: "
                        f"{str(error).splitlines()[0]}") from None


def publish_day(conn: duckdb.DuckDBPyConnection, ds: date, tables: dict[str, pl.DataFrame]) -> None:
    """Replace ``ds``'s rows in the given day tables in one transaction.

    Running a day twice leaves identical rows; a failure part-way leaves the previous state.
    """
    unknown = set(tables) - set(DAY_TABLES)
    if unknown:
        raise ValueError(f"not day tables: {sorted(unknown)}")
    replace_rows(conn, [(table, "ds = $ds", {"ds": ds}, frame) for table, frame in tables.items()])


def replace_rows(conn: duckdb.DuckDBPyConnection,
                 replacements: list[tuple[str, str, dict, pl.DataFrame]]) -> None:
    """In one transaction, for each (table, condition, params, rows): delete the rows that
    match the condition (a fixed SQL text with bound params), then insert the new rows."""
    conn.execute("BEGIN TRANSACTION")
    try:
        for table, condition, params, frame in replacements:
            conn.execute(f"DELETE FROM {quote(table)} WHERE {condition}", params)
            if frame.height:
                conn.register("incoming", frame.to_arrow())
                conn.execute(f"INSERT INTO {quote(table)} BY NAME SELECT * FROM incoming")
                conn.unregister("incoming")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def fetch(conn: duckdb.DuckDBPyConnection, text: str, params: dict | None = None) -> pl.DataFrame:
    """Run one statement with bound parameters and return its result as a polars frame."""
    relation = conn.sql(text, params=params or None)
    return relation.pl() if relation is not None else pl.DataFrame()


def named_query(conn: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> pl.DataFrame:
    """Run ``sql/queries/<name>.sql`` with bound parameters; return a polars frame."""
    return fetch(conn, sql(f"queries/{name}"), params)
