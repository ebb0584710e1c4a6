"""Options and output shared by the command groups."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date


def config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH",
                        help="config file (default: $FECO_CONFIG, else configs/feco.toml)")


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
        sys.stdout.write(frame.write_csv())
    elif output_format == "json":
        print(json.dumps(frame.to_dicts(), default=str, indent=1))
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=80, tbl_hide_dataframe_shape=True,
                       tbl_hide_column_data_types=True, tbl_width_chars=200):
            print(frame)
