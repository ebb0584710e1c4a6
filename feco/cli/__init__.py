"""The `feco` command line.

Each module in COMMAND_MODULES owns one group of subcommands and exposes
``register(subparsers)``. Registration only builds argparse parsers; the heavy libraries
(polars, duckdb, lightgbm) are imported inside the handlers so that `feco --help` is instant.

A FecoError is printed as one line, `feco: error: ...`; so is a failure of the machine (a full
disk, a read-only folder, an object store out of reach). Any other exception is a bug in feco
and keeps its traceback.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from feco.cli.options import visible  # errors quote values from the logs
from feco.errors import FecoError

COMMAND_MODULES = (
    "feco.cli.pipeline",
    "feco.cli.generate",
    "feco.cli.evaluate",
    "feco.cli.ranker",
    "feco.cli.report",
    "feco.cli.oncall",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="feco",
        description="Feature-coverage (FeCo) monitoring for search-ranking models.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args) or 0
    except FecoError as error:
        print(visible(f"feco: error: {error}"), file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("feco: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`feco query ... | head`): stop quietly, as a killed `cat` would.
        # Python flushes stdout again at exit; pointing it at /dev/null keeps that quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:
        failure = _machine_failure(error)
        if failure is None:
            raise  # a bug in feco: its traceback is what to report
        print(visible(f"feco: error: {_describe(failure)}"), file=sys.stderr)
        return 1


# How the OS words a write it refuses; DuckDB quotes these words in its own errors.
_REFUSALS = tuple(os.strerror(code) for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES))


def _machine_failure(error: BaseException | None) -> BaseException | None:
    """The failure of the machine behind ``error`` (a full disk, a read-only folder, an object
    store out of reach, DuckDB unable to write its file), or None: anything else is a bug."""
    if isinstance(error, OSError):
        return error
    duckdb = sys.modules.get("duckdb")  # a DuckDB error means DuckDB is loaded: not imported for this
    if duckdb is None or not isinstance(error, duckdb.Error):
        return None
    if isinstance(error, (duckdb.IOException, duckdb.FatalException)) or any(text in str(error) for text in _REFUSALS):
        return error
    # A failed write makes its transaction's ROLLBACK fail in turn ("no transaction is
    # active"), which hides the write's error in its context.
    return _machine_failure(error.__context__)


def _describe(failure: BaseException) -> str:
    if isinstance(failure, OSError):
        from feco.storage import describe_failure  # pyarrow: loaded already once a file was touched

        text = describe_failure(failure)
    else:
        text = f"DuckDB: {failure}"
    return " ".join(text.split())  # one line, however the library wrapped its message


if __name__ == "__main__":
    sys.exit(main())
