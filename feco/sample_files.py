"""The files of a day's sample folder, named in one place.

``samples/ds=YYYY-MM-DD/`` holds:

- ``window=N/part-0.parquet``: the sampled rows of window N (the sample step, either engine);
- ``_windows.parquet``: one row per window, its ``sample_windows`` row (events available and
  sampled, rows left out of every window, hours missing); written last, so a day whose
  summary exists is sampled (``feco.sampling.is_sampled``);
- ``_feco_warehouse``: the path of the warehouse these samples belong to (``claim_samples``);
- ``_coverage_states.parquet`` and ``_feature_status.parquet``: what the coverage step stages
  for the publish step;
- ``_query_events.parquet``: the day's sampled events per query, for its query bands and those
  of the days after it: written by the sample step, or kept the first time they are counted
  (``feco.sampling.sampled_query_events``).

The leading underscore keeps the summaries out of the window files a reader lists (Spark and
Hive skip such files too). While a day is being replaced, ``samples/_ds=….tmp`` (and, for a
moment, ``_ds=….old``) sit beside it (``feco.sampling.day_folder``).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from feco import storage

ROWS_FILE = "part-0.parquet"
WINDOWS_FILE = "_windows.parquet"
STATES_FILE = "_coverage_states.parquet"
STATUS_FILE = "_feature_status.parquet"
QUERY_EVENTS_FILE = "_query_events.parquet"
OWNER_FILE = "_feco_warehouse"


def partition_dir(root: storage.Location, ds: date) -> storage.Location:
    """The day's folder under a logs or samples root: ``ds=YYYY-MM-DD``."""
    return storage.join(root, f"ds={ds.isoformat()}")


def write_rows(rows: pl.DataFrame, location: storage.Location) -> None:
    """A window's sampled rows, written to be read back fast: floating-point columns (the
    features, mostly) uncompressed, as their dictionary encoding already keeps them as small
    as a codec would (about 0.1% smaller with snappy, a quarter slower to read back), and
    the others with snappy."""
    codecs = {name: "none" if dtype.is_float() else "snappy" for name, dtype in rows.schema.items()}
    storage.write_parquet(rows, location, compression=codecs)
