"""The `feco` command line.

Each module in COMMAND_MODULES owns one group of subcommands and exposes
``register(subparsers)``. Registration only builds argparse parsers; the heavy libraries
(polars, duckdb, lightgbm) are imported inside the handlers so that `feco --help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from feco.errors import FecoError

COMMAND_MODULES = (
    "feco.cli.pipeline",
    "feco.cli.generate",
    "feco.cli.evaluate",
    "feco.cli.ranker",
    "feco.cli.report",
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
        print(f"feco: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("feco: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`feco query ... | head`): stop quietly, as a killed `cat` would.
        # Python flushes stdout again at exit; pointing it at /dev/null keeps that quiet too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
