"""A user's SQL (`feco query`) run in a child process whose limits the operating system holds.

DuckDB's ``memory_limit`` bounds its buffer manager only: a string built by ``repeat`` or a
list of a hundred million numbers grows past it (3.1 GB and 7.3 GB were seen under a 200MB
and a 2GB limit), and a query is interrupted only where DuckDB checks for it (``--timeout 2``
ran 24-35 s). So the query runs in a child process:

- memory: once the child has imported its libraries and opened the warehouse, it sets its
  address-space limit (``RLIMIT_AS``) to what it holds then plus the memory limit, so the
  kernel refuses any allocation beyond; DuckDB's own limit is the same, so its buffer manager
  spills or refuses first with its clearer message. An allocation refused outside DuckDB ends
  the query with a memory error, or ends the child; either way the command says the query
  needs more than ``--memory-limit`` (exit 2).
- time: the parent kills the child at the deadline (SIGKILL, whatever the query is doing);
  the child also arms an alarm one second later, so it ends even if the parent is gone. A
  child ended by that alarm (a parent too slow under load to kill it first) timed out too.
- disk: what DuckDB spills (a sort larger than memory) goes to a temp folder the parent makes
  for the child, at most the memory limit of it, and removes however the child ends (a
  killed DuckDB cannot remove its own files).
- Ctrl-C: the child ignores SIGINT; the parent kills it and exits 130.

The child writes ``R`` to its standard output once its libraries are loaded (the deadline
counts from then), then ``T`` and the result as an Arrow IPC stream, or ``E`` and a JSON error
(``code``, ``message``), and exits. The parent reads the
result whole: at most what the child could hold.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Self

from feco.errors import FecoError, QueryTimeoutError, UsageError

MIN_MEMORY = 16_000_000  # the smallest limit a query (DuckDB, Python, the result) can run under
_UNITS = {"": None, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*", re.IGNORECASE)


def memory_bytes(text: str) -> int:
    """A size as DuckDB reads ``memory_limit`` (``512MB``, ``2GB``, ``1.5GiB``: KB, MB, GB, TB
    count 1000s, KiB, MiB, GiB, TiB 1024s), in bytes; a usage error unless it is at least
    ``MIN_MEMORY``.

    Examples
    --------
    >>> memory_bytes("2GB"), memory_bytes("64 MiB")
    (2000000000, 67108864)
    """
    match = _SIZE.fullmatch(text)
    unit = _UNITS.get(match.group(2).lower()) if match else None
    if unit is None:
        raise UsageError(f"--memory-limit {text!r} is not a size: give a number and a unit, such as 512MB or 2GB "
                         "(KB, MB, GB, TB; KiB, MiB, GiB, TiB)")
    size = int(float(match.group(1)) * unit)
    if size < MIN_MEMORY:
        raise UsageError(f"--memory-limit {text} is too small: a query needs at least {MIN_MEMORY // 1000**2}MB")
    return size


def timeout_seconds(value: float) -> float | None:
    """The ``--timeout`` as a deadline in seconds, None for 0 (no limit); a usage error for a
    negative number, NaN or infinity."""
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--timeout must be 0 (no limit) or a number of seconds, got {value:g}")
    return value or None


def run_query(warehouse: Path, text: str, *, memory_limit: str, timeout: float | None,
              moving_average_days: int | None = None):
    """Run ``text`` on the warehouse (read-only, no file access) in a child process bounded
    by ``memory_limit`` and killed after ``timeout`` seconds; return the result as a polars
    frame whose every column polars can hold and print (see ``displayable``). With
    ``moving_average_days`` the warehouse is first brought up to date (``open_read_only``).

    Examples
    --------
    >>> run_query(Path("feco.duckdb"), "-- nothing", memory_limit="1GB", timeout=None)
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: the query is empty (no statement, only comments or blanks)
    """
    with QueryProcess(text, memory_limit=memory_limit, timeout=timeout) as process:
        return process.run(warehouse, moving_average_days=moving_average_days)


class QueryProcess:
    """The child process that runs one query, started once the query's text and limits are
    checked: it loads its libraries while the caller reads its config, and :meth:`run` then
    sends it the query. Leaving the ``with`` block ends it, whatever happened, and removes its
    temp folder."""

    def __init__(self, text: str, *, memory_limit: str, timeout: float | None):
        if is_blank(text):  # said at once, not after a process has started
            raise UsageError(EMPTY_QUERY)
        self.text, self.memory_limit, self.timeout = text, memory_limit, timeout
        self.memory = memory_bytes(memory_limit)
        # -P and PYTHONPATH: the child imports this very feco, never one in the current folder
        package_root = str(Path(__file__).resolve().parents[1])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))}
        self.temp_directory = tempfile.mkdtemp(prefix="feco-query-")  # what the query spills, its own
        self.child = subprocess.Popen([sys.executable, "-P", "-m", "feco.user_query"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.child.kill()  # on Ctrl-C, or any failure; nothing when it has exited
        self.child.wait()
        shutil.rmtree(self.temp_directory, ignore_errors=True)  # the child has ended: nothing writes there now

    def run(self, warehouse: Path, *, moving_average_days: int | None = None):
        """Send the query on ``warehouse`` and return its result (see :func:`run_query`)."""
        request = json.dumps({"warehouse": str(warehouse), "sql": self.text, "memory_limit": self.memory,
                              "timeout": self.timeout, "moving_average_days": moving_average_days,
                              "temp_directory": self.temp_directory})
        child, timed_out = self.child, threading.Event()

        def kill_at_deadline() -> None:
            timed_out.set()
            child.kill()

        watchdog = threading.Timer(self.timeout, kill_at_deadline) if self.timeout else None
        try:
            child.stdin.write(request.encode())
            child.stdin.close()
            import polars as pl  # loaded while the child loads its own libraries

            # the clock starts once the child has loaded its libraries: the query's time is its own
            if child.stdout.read(1) == b"R" and watchdog:
                watchdog.start()
            answer = child.stdout.read()
        except BrokenPipeError:  # the child died before it read the request
            answer = b""
        finally:
            if watchdog:
                watchdog.cancel()
            child.kill()
            child.wait()
        # the child's own alarm is its deadline too: under load it can end the child before the parent does
        if timed_out.is_set() or child.returncode == -signal.SIGALRM:
            raise QueryTimeoutError(f"query cancelled after {self.timeout:g}s, its time limit: "
                                    "narrow it or give it more time")
        if answer[:1] == b"E":
            error = json.loads(answer[1:])
            raise ReportedError(error["message"], error["code"])
        if answer[:1] == b"T" and child.returncode == 0:
            return pl.read_ipc_stream(answer[1:])
        raise UsageError(f"query failed: its process ended with {_ending(child.returncode)} before it answered, "
                         f"most likely for want of memory under --memory-limit {self.memory_limit}")


EMPTY_QUERY = "the query is empty (no statement, only comments or blanks)"
_BLANKS = re.compile(r"(?:\s|;|--[^\n]*)*")


def is_blank(text: str) -> bool:
    r"""Whether ``text`` holds no statement: only blanks, semicolons and comments. Read from the
    start, never inside a string, so it can only err towards "not blank" (an unclosed comment),
    which the child then reports as DuckDB does.

    Examples
    --------
    >>> is_blank(" -- a note\n; /* and /* a nested */ one */ "), is_blank("/* x */ SELECT 1")
    (True, False)
    """
    at = 0
    while True:
        at = _BLANKS.match(text, at).end()
        if not text.startswith("/*", at):
            return at == len(text)
        depth = 0
        for match in re.finditer(r"/\*|\*/", text[at:]):  # block comments nest in DuckDB
            depth += 1 if match.group() == "/*" else -1
            if depth == 0:
                at += match.end()
                break
        else:
            return False


class ReportedError(FecoError):
    """An error the child reported, with its exit status."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


def _ending(returncode: int) -> str:
    if returncode < 0:
        return f"signal {-returncode} ({signal.Signals(-returncode).name})"
    return f"exit status {returncode}"


def _serve() -> None:
    """The child: say it is ready, read the request, answer it (see the module)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    import duckdb  # noqa: F401 - loaded before the parent's clock starts
    import pyarrow  # noqa: F401

    import feco.warehouse  # noqa: F401

    out = sys.stdout.buffer
    out.write(b"R")
    out.flush()
    request = json.loads(sys.stdin.buffer.read())
    if request["timeout"]:
        signal.alarm(math.ceil(request["timeout"]) + 1)  # the default action ends the process
    try:
        table = _answer(Path(request["warehouse"]), request["sql"], memory_limit=request["memory_limit"],
                        moving_average_days=request["moving_average_days"],
                        temp_directory=Path(request["temp_directory"]))
    except FecoError as error:
        out.write(b"E" + json.dumps({"code": error.exit_code, "message": str(error)}).encode())
        return
    import pyarrow as pa

    # Written as it is serialised: a copy would halve the result a limit allows. A failure
    # part-way exits non-zero, which the parent reports.
    out.write(b"T")
    with pa.ipc.new_stream(out, table.schema) as writer:
        writer.write_table(table)


def _answer(warehouse: Path, text: str, *, memory_limit: int, moving_average_days: int | None,
            temp_directory: Path):
    """The query's result as an Arrow table, or a FecoError saying why not."""
    import duckdb
    import pyarrow as pa

    from feco.warehouse import open_read_only

    try:
        with open_read_only(warehouse, memory_limit=f"{memory_limit}B", moving_average_days=moving_average_days,
                            temp_directory=temp_directory) as conn:
            if not conn.extract_statements(text):
                raise UsageError(EMPTY_QUERY)
            _limit_address_space(memory_limit)
            relation = conn.sql(text)
            if relation is None:
                return pa.table({})
            table = _with_times_python_holds(conn, displayable(relation).arrow().read_all())
            return table.rename_columns(_unique_names(table.column_names))
    except duckdb.Error as error:
        raise UsageError(_refusal(error, text)) from None
    except MemoryError:
        raise UsageError("query failed: it needs more than --memory-limit (an allocation was refused)") from None


def _unique_names(names: list[str]) -> list[str]:
    """``names`` with each repeat numbered as DuckDB numbers them, never taking a name the
    result has: a polars frame and a JSON object hold a name once (``SELECT *`` of a join).

    Examples
    --------
    >>> _unique_names(["ds", "feature", "ds", "ds_1", "ds"])
    ['ds', 'feature', 'ds_2', 'ds_1', 'ds_3']
    """
    given, taken, unique = set(names), set(), []
    for name in names:
        candidate, number = name, 0
        while candidate in taken or (number and candidate in given):
            number += 1
            candidate = f"{name}_{number}"
        taken.add(candidate)
        unique.append(candidate)
    return unique


def _limit_address_space(limit: int) -> None:
    """Let this process grow by at most ``limit`` bytes of address space from now on (Linux:
    elsewhere only DuckDB's own limit holds)."""
    import resource

    try:
        with open("/proc/self/statm") as statm:  # pages of address space in use
            in_use = int(statm.read().split()[0]) * resource.getpagesize()
    except FileNotFoundError:
        return
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (in_use + limit if hard == resource.RLIM_INFINITY
                                            else min(in_use + limit, hard), hard))


def _refusal(error: Exception, text: str) -> str:
    message = str(error).splitlines()[0]
    if "read-only mode" in message:
        return f"query refused: feco query is read-only ({message})"
    if "disabled by configuration" in message:
        return f"query refused: feco query cannot read or write files ({message})"
    if "locked" in message:
        return f"query refused: settings are locked in feco query ({message})"
    if "max_temp_directory_size" in str(error):
        return f"query failed: it needs more than --memory-limit in memory and as much again on disk ({message})"
    if "Out of Memory" in message or "failed to allocate" in message.lower():
        return f"query failed: it needs more than --memory-limit ({message})"
    if _WINDOW_COLUMN.search(text) and ("Parser Error" in message or '"window"' in message):
        return (f"query failed: {message} (window is an SQL keyword, and no table has a column of that name: "
                "the window number is window_index, in sample_windows and coverage_states)")
    return f"query failed: {message}"


# "window" as a column: a bare or quoted word, not window_index and not a WINDOW clause's "window w AS"
_WINDOW_COLUMN = re.compile(r'(?<![\w"])(?:window|"window")(?![\w"])(?!\s+\w+\s+AS\b)', re.IGNORECASE)


# Result types polars holds and prints faithfully; any other is shown as DuckDB's text. Not
# HUGEINT and UHUGEINT (Arrow gets them as 38-digit decimals, which the largest overflow), nor
# TIMESTAMP_NS (JSON prints a time as Python holds it, to the microsecond).
_DISPLAYABLE_TYPES = frozenset({
    "boolean", "tinyint", "smallint", "integer", "bigint", "utinyint", "usmallint", "uinteger", "ubigint",
    "float", "double", "varchar", "uuid", "enum",
    "date", "time", "timestamp", "timestamp_s", "timestamp_ms", "timestamp with time zone",
})
# JSON prints a decimal as a float, exact up to 15 significant digits: a wider one is text
EXACT_DECIMAL_DIGITS = 15
# Dates and times as Python holds them, from year 1 to 9999 and before 24:00; DuckDB's go
# further (its infinities, 5877642 BC, 24:00:00), on which polars panics or shows another time.
_TEMPORAL_TYPES = frozenset({"date", "time", "timestamp", "timestamp_s", "timestamp_ms", "timestamp with time zone"})
_PYTHON_SECONDS = (-62_135_596_800, 253_402_300_799)  # 0001-01-01 and 9999-12-31 23:59:59, from 1970


def displayable(relation, *, times_as_text: frozenset[int] = frozenset()):
    """The relation with every value polars cannot hold (INTERVAL, UNION, BIT, BLOB, TIME WITH
    TIME ZONE, HUGEINT, a DECIMAL wider than JSON keeps exactly), and every date and time of the
    columns at the positions ``times_as_text``, cast to DuckDB's text for it, also inside
    lists, structs and maps, which keep their shape (so CSV and JSON print them as JSON).
    Columns are taken by position, so duplicate names stay apart (see ``_unique_names``)."""
    from feco.warehouse import quote

    targets = [_display_type(type_, _DISPLAYABLE_TYPES - _TEMPORAL_TYPES if i in times_as_text else _DISPLAYABLE_TYPES)
               for i, type_ in enumerate(relation.types)]
    if all(target is None for target in targets):
        return relation
    columns = [f"#{i}" if target is None else f"CAST(#{i} AS {target})" for i, target in enumerate(targets, start=1)]
    return relation.project(", ".join(f"{column} AS {quote(name)}" for column, name in zip(columns, relation.columns)))


def _display_type(type_, held: frozenset[str]) -> str | None:
    """The type to cast a value of ``type_`` to for display, or None when it is shown as it is
    (its type, or the type of every value inside it, in ``held``)."""
    from feco.warehouse import quote

    if type_.id == "decimal":
        return None if dict(type_.children)["precision"] <= EXACT_DECIMAL_DIGITS else "VARCHAR"
    if type_.id not in ("list", "array", "struct", "map"):
        return None if type_.id in held else "VARCHAR"
    children = [(name, child) for name, child in type_.children if isinstance(child, type(type_))]
    targets = [_display_type(child, held) for _, child in children]
    if all(target is None for target in targets):
        return None
    shown = [target or str(child) for (_, child), target in zip(children, targets)]
    if type_.id == "list":
        return f"{shown[0]}[]"
    if type_.id == "array":
        return f"{shown[0]}[{dict(type_.children)['size']}]"
    if type_.id == "map":
        return f"MAP({shown[0]}, {shown[1]})"
    return "STRUCT(" + ", ".join(f"{quote(name)} {target}" for (name, _), target in zip(children, shown)) + ")"


def _with_times_python_holds(conn, table):
    """``table``, each column that holds a date or time Python cannot with its dates and
    times as DuckDB's text instead ('infinity'), read back by DuckDB from the result itself:
    the query is not run again."""
    beyond = frozenset(i for i, column in enumerate(table.columns) if any(map(_beyond_python, column.chunks)))
    if not beyond:
        return table
    shown = displayable(conn.from_arrow(table), times_as_text=beyond)
    return shown.arrow().read_all().rename_columns(table.column_names)


def _beyond_python(array) -> bool:
    """Whether an Arrow array, or any array inside it, holds a date or time Python cannot."""
    import pyarrow as pa
    import pyarrow.compute as pc

    type_ = array.type
    if pa.types.is_map(type_):
        return _beyond_python(array.keys) or _beyond_python(array.items)
    if pa.types.is_list(type_) or pa.types.is_large_list(type_) or pa.types.is_fixed_size_list(type_):
        return _beyond_python(array.flatten())
    if pa.types.is_struct(type_):
        return any(map(_beyond_python, array.flatten()))
    bounds = _python_bounds(type_)
    if bounds is None:
        return False
    extremes = pc.min_max(array)
    return extremes["min"].is_valid and not bounds[0] <= extremes["min"].value <= extremes["max"].value <= bounds[1]


def _python_bounds(type_) -> tuple[int, int] | None:
    """The least and greatest of the numbers Arrow stores for the dates or times of ``type_``
    that Python holds, or None for any other type."""
    import pyarrow as pa

    if pa.types.is_date32(type_):
        return _PYTHON_SECONDS[0] // 86_400, _PYTHON_SECONDS[1] // 86_400
    if not (pa.types.is_timestamp(type_) or pa.types.is_time(type_)):
        return None
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[type_.unit]
    if pa.types.is_time(type_):
        return 0, 86_400 * per_second - 1
    return _PYTHON_SECONDS[0] * per_second, (_PYTHON_SECONDS[1] + 1) * per_second - 1


if __name__ == "__main__":
    _serve()
