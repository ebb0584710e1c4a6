"""The DuckDB warehouse: schema from ``sql/``, day-wise transactional publish, safe reads.

DuckDB allows one writing process per file. Writers wait a while for the lock and then fail
with a clear message; readers open the file read-only with external access switched off, so
a query can neither write nor read arbitrary files.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl

from feco.errors import DataError, WarehouseBusyError

SQL_DIR = Path(__file__).resolve().parents[1] / "sql"
# Tables that hold one day's results; publishing a day replaces its rows in all of them.
DAY_TABLES = ("sample_windows", "coverage_states", "feature_status", "runs", "alerts", "incidents")

_READ_ONLY_SETTINGS = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


def sql(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")


def quote(identifier: str) -> str:
    """Quote an identifier that comes from config, so no name is pasted into SQL raw."""
    return '"' + identifier.replace('"', '""') + '"'


@contextmanager
def open_for_write(path: Path, *, moving_average_days: int = 7,
                   wait_seconds: float = 60.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open (creating if needed) the warehouse for writing, with its schema up to date."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = _connect(path, read_only=False, wait_seconds=wait_seconds)
    try:
        create_schema(conn, moving_average_days=moving_average_days)
        yield conn
    finally:
        conn.close()


@contextmanager
def open_read_only(path: Path, *, wait_seconds: float = 10.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the warehouse for queries only: no writes, no file access beyond the warehouse."""
    if not path.exists():
        raise DataError(f"no warehouse at {path}: run `feco run --ds DATE` first")
    conn = _connect(path, read_only=True, wait_seconds=wait_seconds, config=_READ_ONLY_SETTINGS)
    try:
        yield conn
    finally:
        conn.close()


def _connect(path: Path, *, read_only: bool, wait_seconds: float, config: dict | None = None):
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


def create_schema(conn: duckdb.DuckDBPyConnection, *, moving_average_days: int) -> None:
    """Create every table and view from ``sql/schema`` (idempotent), in file-name order."""
    for path in sorted((SQL_DIR / "schema").glob("*.sql")):
        text = path.read_text(encoding="utf-8")
        conn.execute(text.replace("{moving_average_days}", str(int(moving_average_days))))


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


def fetch_interruptibly(conn: duckdb.DuckDBPyConnection, text: str) -> pl.DataFrame:
    """``fetch`` that Ctrl-C cancels at once: the query runs on a cursor in a worker thread and
    SIGINT interrupts that cursor, then surfaces as KeyboardInterrupt. (Call it from the main
    thread: only that one may set signal handlers.)"""
    cursor = conn.cursor()
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["frame"] = fetch(cursor, text)
        except BaseException as error:  # noqa: BLE001 - handed back to the caller below
            outcome["error"] = error

    def interrupt(signum, frame) -> None:
        outcome["interrupted"] = True
        cursor.interrupt()

    previous = signal.signal(signal.SIGINT, interrupt)
    worker = threading.Thread(target=work, daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
    finally:
        signal.signal(signal.SIGINT, previous)
        cursor.close()
    if outcome.get("interrupted"):
        raise KeyboardInterrupt
    if "error" in outcome:
        raise outcome["error"]
    return outcome["frame"]


def named_query(conn: duckdb.DuckDBPyConnection, name: str, params: dict | None = None) -> pl.DataFrame:
    """Run ``sql/queries/<name>.sql`` with bound parameters; return a polars frame."""
    return fetch(conn, sql(f"queries/{name}"), params)
