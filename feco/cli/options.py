"""Options and output shared by the command groups."""

from __future__ import annotations

import argparse
import json
import math
import sys
from datetime import date, datetime, time
from decimal import Decimal

FORMATS = ("table", "csv", "json")
FORMAT_HELP = ("table (aligned columns), csv (nested values as JSON text) or json (one object "
               "per row; NaN and infinity become null)")


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
    """Print a polars frame as an aligned table, CSV or JSON records."""
    import polars as pl

    if output_format == "csv":
        nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
        sys.stdout.write(frame.with_columns(
            pl.Series(name, [None if v is None else to_json(v) for v in frame[name].to_list()],
                      dtype=pl.String)
            for name in nested).write_csv())
    elif output_format == "json":
        print(to_json(frame.to_dicts(), indent=1))
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_hide_dataframe_shape=True,
                       tbl_hide_column_data_types=True, tbl_width_chars=200):
            print(frame)


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
