"""Options and output shared by the command groups.

Values printed come from the logs (segment values, feature names): their control characters
are printed as escapes (``visible``), so a value cannot clear the terminal, retitle its
window or hide what follows it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import date, datetime, time
from decimal import Decimal
from pathlib import Path

FORMATS = ("table", "csv", "json")
FORMAT_HELP = ("table (aligned columns), csv (nested values as JSON text) or json (one object "
               "per row; NaN and infinity become null)")
# C0 and C1 controls, DEL, and the bidirectional embeddings, overrides and isolates (they
# reorder what a terminal shows), each printed as the escape Python would write for it.
INVISIBLE = [(0x00, 0x1F), (0x7F, 0x9F), (0x202A, 0x202E), (0x2066, 0x2069)]  # first and last of each range
ESCAPES = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
           for first, last in INVISIBLE for code in range(first, last + 1)} | {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"}
INVISIBLE_PATTERN = "[" + "".join(f"\\x{{{first:x}}}-\\x{{{last:x}}}" for first, last in INVISIBLE) + "]"


class HelpFormatter(argparse.HelpFormatter):
    """argparse's own, wrapping a paragraph to the terminal, except that text laid out in
    lines (an epilog's lists and examples) is kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH",
                        help="config file (default: $FECO_CONFIG, else configs/feco.toml)")


def format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help=f"output: {FORMAT_HELP} (default table)")


def date_argument(text: str) -> date:
    """An argparse type for YYYY-MM-DD dates with a readable error."""
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a date (YYYY-MM-DD)") from None


def print_frame(frame, output_format: str) -> None:
    """Print a polars frame as an aligned table (with a "0 rows" line under an empty one), CSV
    or JSON records; control characters in its text are printed as escapes (JSON's own, in JSON)."""
    import polars as pl

    if output_format == "json":
        write_out(to_json(frame.to_dicts(), indent=1) + "\n")
        return
    shown = _as_text(frame)
    if output_format == "csv":
        write_out(shown.write_csv())
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_hide_dataframe_shape=True,
                       tbl_hide_column_data_types=True, tbl_width_chars=200):
            # an empty table is only its header: the line says nothing matched, not that output was lost
            write_out(f"{shown}\n" + ("0 rows\n" if frame.is_empty() else ""))


def write_out(text: str) -> None:
    """Write ``text`` to standard output, all of it. Under ``PYTHONUNBUFFERED`` (or ``-u``)
    ``sys.stdout`` writes straight to the file and silently drops what a write leaves over, so
    a reader that leaves part-way (``| head -1``) would have feco exit 0 with its output cut;
    written here until every byte is taken, a reader gone raises BrokenPipeError (exit 141)."""
    binary = getattr(sys.stdout, "buffer", None)
    if binary is None:  # a text stream put in its place (a test's, a notebook's)
        sys.stdout.write(text)
        return
    sys.stdout.flush()
    data = memoryview(text.encode(sys.stdout.encoding or "utf-8", sys.stdout.errors or "strict"))
    while data:
        data = data[binary.write(data) or 0:]
    binary.flush()


def visible(text: str) -> str:
    r"""``text`` with its control characters written as escapes: safe to print to a terminal.

    Examples
    --------
    >>> visible("DE\x1b[2J\x1b]0;pwned\x07 tab\there")
    'DE\\x1b[2J\\x1b]0;pwned\\x07 tab\\there'
    >>> visible("Zürich 東京")
    'Zürich 東京'
    """
    return text.translate(ESCAPES)


def _as_text(frame):
    """The frame as table and CSV print it: nested values as JSON text, and every text (the
    column names too: a PIVOT names columns after values) made ``visible``."""
    import polars as pl

    columns = []
    for name, dtype in frame.schema.items():
        if dtype.is_nested():
            columns.append(pl.Series(name, [None if v is None else to_json(v) for v in frame[name].to_list()],
                                     dtype=pl.String))
        elif dtype in (pl.String, pl.Categorical) or isinstance(dtype, pl.Enum):
            text = frame[name].cast(pl.String)
            if text.str.contains(INVISIBLE_PATTERN).any():  # most columns have none: left to polars
                text = pl.Series(name, [None if v is None else visible(v) for v in text.to_list()], dtype=pl.String)
            columns.append(text)
    return frame.with_columns(columns).rename(visible)


def to_json(value, *, indent: int | None = None) -> str:
    """JSON text of a value from a frame: NaN and infinity become null (JSON has neither),
    exact decimals stay numbers, dates and times ISO 8601 strings."""
    return json.dumps(_jsonable(value), indent=indent, allow_nan=False, default=str)


def _jsonable(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (date, datetime, time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return value


def with_warehouse(config, warehouse):
    """The config with ``--warehouse`` in place of its warehouse, when given: the command's
    run lock and writes then follow it."""
    if warehouse is None:
        return config
    return config.model_copy(update={"paths": config.paths.model_copy(update={"warehouse": Path(warehouse)})})
