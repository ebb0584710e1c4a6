"""The DuckDB warehouse: versioned schema from ``sql/``, day-wise transactional publish, safe reads.

DuckDB allows one writing process per file. Writers wait a while for the lock and then fail
with a clear message; readers open the file read-only with external access switched off, so
a query can neither write nor read arbitrary files.
"""

from __future__ import annotations

import hashlib
import re
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from feco.errors import DataError, UsageError, WarehouseBusyError
from feco.locking import READ_MEMORY_LIMIT, WRITE_WAIT_SECONDS, check_warehouse_path, run_lock
from feco.sql_files import migrations, schema_relations, schema_statements, sql

if TYPE_CHECKING:
    import polars as pl

    from feco.config import Config

# Written to schema_version once a warehouse keeps the migration ledger: releases before the
# ledger refuse a warehouse whose version is above every migration they know, so they refuse
# this one (which they would misread) instead of failing on it.
LEDGER_VERSION = 1000

# Tables that hold one day's results; publishing a day replaces its rows in all of them.
DAY_TABLES = ("sample_windows", "coverage_states", "feature_status", "same_products", "runs", "columns_absent", "alerts", "unjudged", "reference_moves",
              "incidents", "incident_costs")

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
        if upgrade_needed(conn, moving_average_days=moving_average_days):
            create_schema(conn, moving_average_days=moving_average_days)
        yield conn
    finally:
        conn.close()


def open_configured(config: Config):
    """:func:`open_for_write` on the config's warehouse, its views over the config's
    moving-average window: how every pipeline step opens it."""
    return open_for_write(config.paths.warehouse, moving_average_days=config.moving_average_days)


@contextmanager
def open_read_only(path: Path, *, moving_average_days: int | None = None, wait_seconds: float = 10.0,
                   memory_limit: str = READ_MEMORY_LIMIT,
                   temp_directory: Path | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the warehouse for queries only: no writes, no file access beyond the warehouse,
    and at most ``memory_limit`` of memory (see feco.locking). With ``temp_directory`` what a
    query spills goes there, at most ``memory_limit`` of it (by default: ``<warehouse>.tmp``,
    as much as the disk holds).

    With ``moving_average_days`` (what a caller holding the config passes) a warehouse this
    feco would change first (migrations it lacks, views of another release or window) is
    brought up to date, under the run lock, before it is opened for reading.
    """
    if not path.exists():
        raise DataError(f"no warehouse at {path}: run `feco run --ds DATE` first")
    settings = {**_READ_ONLY_SETTINGS, "memory_limit": memory_limit}
    if temp_directory is not None:  # after enable_external_access: DuckDB refuses it before (PermissionException)
        settings |= {"temp_directory": str(temp_directory), "max_temp_directory_size": memory_limit}
    conn = _connect(path, read_only=True, wait_seconds=wait_seconds, config=settings)
    if moving_average_days is not None and upgrade_needed(conn, moving_average_days=moving_average_days):
        conn.close()
        with run_lock(path), open_for_write(path, moving_average_days=moving_average_days):
            pass
        conn = _connect(path, read_only=True, wait_seconds=wait_seconds, config=settings)
    try:
        yield conn
    finally:
        conn.close()


def read_configured(config: Config, **options):
    """:func:`open_read_only` on the config's warehouse, up to date: how every reader holding
    the config opens it."""
    return open_read_only(config.paths.warehouse, moving_average_days=config.moving_average_days, **options)


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

    A new warehouse gets the tables and views of ``sql/schema`` and records every migration of
    ``sql/migrations`` as held. An existing one first gets the tables it lacks (created as they
    are now), then every migration its ledger (``schema_migrations``) does not hold, in order,
    each recorded as it is applied, then the views (which may read migrated columns). A
    warehouse from before the ledger holds none: its migrations are written to hold on a table
    that has them already, or state when they apply (``-- applies when: <SQL>``). A warehouse
    holding a migration this feco does not know is refused. A failure leaves it as it was.
    """
    available = migrations(migrations_dir)
    with transaction(conn):
        tables = _table_names(conn)
        held = _held_migrations(conn, tables)
        _refuse_unknown(held, available)
        for kind, _, text in _schema_statements(moving_average_days):
            if kind == "table":
                conn.execute(text)
        for name, path in available.items():
            if name not in held:
                if "runs" in tables:  # a new warehouse's tables are created as they are now
                    _migrate(conn, path)
                conn.execute("INSERT INTO schema_migrations VALUES ($name, now())", {"name": name})
        _create_views(conn, moving_average_days)
        conn.execute("INSERT OR IGNORE INTO schema_version VALUES ($version, now())", {"version": LEDGER_VERSION})


def upgrade_needed(conn: duckdb.DuckDBPyConnection, *, moving_average_days: int,
                   migrations_dir: Path | None = None) -> bool:
    """Whether :func:`create_schema` would change the warehouse: tables or migrations it lacks,
    or views of another release or moving-average window. A DataError when it holds a
    migration this feco does not know."""
    tables = _table_names(conn)
    available = migrations(migrations_dir)
    held = _held_migrations(conn, tables)
    _refuse_unknown(held, available)
    if held != available.keys() or not set(schema_relations()["table"]) <= tables:
        return True
    stored = conn.sql("SELECT digest FROM schema_views").fetchall()
    return stored != [(_views_digest(moving_average_days),)]


def held_migrations(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """The migrations the warehouse's ledger holds, in the order they were applied."""
    if "schema_migrations" not in _table_names(conn):
        return []
    return [name for (name,) in conn.sql("SELECT migration FROM schema_migrations ORDER BY applied_at, migration")
            .fetchall()]


def _table_names(conn: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in conn.sql(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}


def _held_migrations(conn: duckdb.DuckDBPyConnection, tables: set[str]) -> set[str]:
    if "schema_migrations" not in tables:
        return set()
    return {name for (name,) in conn.sql("SELECT migration FROM schema_migrations").fetchall()}


def _refuse_unknown(held: set[str], available: dict[str, Path]) -> None:
    unknown = sorted(held - available.keys())
    if unknown:
        raise DataError(f"the warehouse holds schema migration{'s' * (len(unknown) > 1)} {', '.join(unknown)}, "
                        "which this feco does not know: it was written by a newer feco; upgrade feco")


def _schema_statements(moving_average_days: int) -> list[tuple[str, str, str]]:
    days = str(int(moving_average_days))
    return [(kind, name, text.replace("{moving_average_days}", days)) for kind, name, text in schema_statements()]


def _views_digest(moving_average_days: int) -> str:
    views = [text for kind, _, text in _schema_statements(moving_average_days) if kind == "view"]
    return hashlib.sha256("\n".join(views).encode()).hexdigest()[:16]


def _create_views(conn: duckdb.DuckDBPyConnection, moving_average_days: int) -> None:
    for kind, _, text in _schema_statements(moving_average_days):
        if kind == "view":
            conn.execute(text)
    conn.execute("DELETE FROM schema_views")
    conn.execute("INSERT INTO schema_views VALUES ($digest, now())", {"digest": _views_digest(moving_average_days)})


_APPLIES_WHEN = re.compile(r"^-- applies when: (.+)$", re.MULTILINE)


def _migrate(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:
        condition = _APPLIES_WHEN.search(text)
        if condition is None or conn.sql(f"SELECT {condition.group(1)}").fetchall()[0][0]:
            conn.execute(text)
    except duckdb.Error as error:
        raise DataError(f"cannot upgrade the warehouse: migration {path.name} failed: "
                        f"{str(error).splitlines()[0]}") from None


def rollback(conn: duckdb.DuckDBPyConnection) -> None:
    """Roll back the open transaction. DuckDB has already ended one that a failed write (a
    full disk) invalidated: nothing is left to undo then, and the write's own error is what
    the caller reports."""
    try:
        conn.execute("ROLLBACK")
    except duckdb.Error:
        pass


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
    """In one transaction (or the caller's, see :func:`transaction`), for each (table,
    condition, params, rows): delete the rows that match the condition (a fixed SQL text with
    bound params), then insert the new rows."""
    with transaction(conn):
        for table, condition, params, frame in replacements:
            conn.execute(f"DELETE FROM {quote(table)} WHERE {condition}", params)
            if frame.height:
                conn.register("incoming", frame.to_arrow())
                conn.execute(f"INSERT INTO {quote(table)} BY NAME SELECT * FROM incoming")
                conn.unregister("incoming")


_in_transaction: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Run the block in one transaction: committed at its end, rolled back on any failure.

    A block inside another joins the outer one, so the writes of several steps (a day's
    coverage, scores, alerts and incidents) commit together or not at all.
    """
    if conn in _in_transaction:
        yield
        return
    conn.execute("BEGIN TRANSACTION")
    _in_transaction[conn] = True
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    finally:
        _in_transaction.pop(conn, None)


def fetch(conn: duckdb.DuckDBPyConnection, text: str, params: dict | None = None) -> pl.DataFrame:
    """Run one statement with bound parameters and return its result as a polars frame."""
    import polars as pl  # here: `feco query`'s child process opens the warehouse without it

    relation = conn.sql(text, params=params or None)
    # Through the Arrow C stream interface, not `relation.pl()`: the same frame without
    # importing pyarrow, a tenth of a second of every small CLI command.
    return pl.DataFrame(relation) if relation is not None else pl.DataFrame()


def named_query(conn: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> pl.DataFrame:
    """Run ``sql/queries/<name>.sql`` with bound parameters; return a polars frame."""
    return fetch(conn, sql(f"queries/{name}"), params)
