"""A day's sample folder: the names of its files, and reading them back.

``samples/ds=YYYY-MM-DD/`` holds:

- ``window=N/part-0.parquet``: the sampled rows of window N (the sample step, either engine),
  read back through ``SampleFiles`` (``sample_files``, ``read_sample``);
- ``_windows.parquet``: one row per window, its ``sample_windows`` row (events available and
  sampled, rows left out of every window, hours missing); written last, so a day whose
  summary exists is sampled (``is_sampled``);
- ``_feco_warehouse``: the path of the warehouse these samples belong to (``claim_samples``);
- ``_coverage_states.parquet`` and ``_feature_status.parquet``: what the coverage step stages
  for the publish step;
- ``_query_events.parquet``: the day's sampled events per query, for its query bands and those
  of the days after it: written by the sample step, or kept the first time they are counted
  (``sampled_query_events``).

The leading underscore keeps the summaries out of the window files a reader lists (Spark and
Hive skip such files too). While a day is being replaced, ``samples/_ds=….tmp`` (and, for a
moment, ``_ds=….old``) sit beside it (``feco.sampling.day_folder``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from feco import storage
from feco.config import Config
from feco.errors import DataError
from feco.sql_files import sql
from feco.storage import Location, partition_dir
from feco.warehouse import quote

ROWS_FILE = "part-0.parquet"
WINDOWS_FILE = "_windows.parquet"
STATES_FILE = "_coverage_states.parquet"
STATUS_FILE = "_feature_status.parquet"
SAME_PRODUCTS_FILE = "_same_products.parquet"
QUERY_EVENTS_FILE = "_query_events.parquet"
OWNER_FILE = "_feco_warehouse"
DAY_FOLDER = re.compile(r"ds=\d{4}-\d{2}-\d{2}")


def write_rows(rows: pl.DataFrame, location: storage.Location) -> None:
    """A window's sampled rows, written to be read back fast: floating-point columns (the
    features, mostly) uncompressed, as their dictionary encoding already keeps them as small
    as a codec would (about 0.1% smaller with snappy, a quarter slower to read back), and
    the others with snappy."""
    codecs = {name: "none" if dtype.is_float() else "snappy" for name, dtype in rows.schema.items()}
    storage.write_parquet(rows, location, compression=codecs)


def is_sampled(ds: date, root: Location) -> bool:
    return storage.exists(storage.join(partition_dir(root, ds), WINDOWS_FILE))


def first_sampled_day(root: Location) -> date | None:
    """The earliest day sampled under ``root`` (None: none yet)."""
    fs, path = storage.filesystem_for(root)
    found = fs.get_file_info(pafs.FileSelector(path, recursive=False, allow_not_found=True))
    days = sorted(date.fromisoformat(info.base_name[3:]) for info in found
                  if info.type == pafs.FileType.Directory and DAY_FOLDER.fullmatch(info.base_name))
    return next((ds for ds in days if is_sampled(ds, root)), None)


def sample_files(ds: date, root: Location) -> SampleFiles:
    """The day's sample files, with the window of each."""
    if not is_sampled(ds, root):
        raise DataError(f"no sample for {ds} under {root} (run the sample step first)")
    day = partition_dir(root, ds)
    fs, day_path = storage.filesystem_for(day)
    found = sorted((int(f.rpartition("/window=")[2].partition("/")[0]), f)
                   for f in storage.files_under(day) if "/window=" in f)
    return SampleFiles(fs, [f for _, f in found], [w for w, _ in found],
                       [str(storage.location_of(day, day_path, f)) for _, f in found])


def read_sample(ds: date, root: Location) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read back a day's sample rows (with ``window``) and its window summary, in memory."""
    rows = sample_files(ds, root).read()
    return rows, storage.read_parquet(storage.join(partition_dir(root, ds), WINDOWS_FILE))


@dataclass(frozen=True)
class SampleFiles:
    """A day's sample files (``window=N/*.parquet`` under the day's folder), read lazily.

    The ``window`` column comes from the folder names. Readers take a batch at a time
    (``batches``), or DuckDB reads local files itself (``feco.coverage``); both stream.
    """

    fs: pafs.FileSystem
    files: list[str]  # in window order
    windows: list[int]  # each file's window
    names: list[str]  # each file as the configured samples location names it

    @property
    def is_local(self) -> bool:
        return self.fs.type_name == "local"

    @functools.cached_property
    def arrow_schema(self) -> pa.Schema:
        """The rows' columns (those of the first file) and ``window``."""
        return self._open(self.files[0]).schema_arrow.append(pa.field("window", pa.int16()))

    @property
    def schema(self) -> pl.Schema:
        return pl.from_arrow(self.arrow_schema.empty_table()).schema

    def count_rows(self) -> int:
        """From the files' footers alone."""
        return sum(self._open(f).metadata.num_rows for f in self.files)

    def batches(self, columns: list[str] | None = None, *, dictionaries: list[str] = (),
                batch_size: int = 65_536) -> pa.RecordBatchReader:
        """The rows with their ``window`` column (or only ``columns``), ``batch_size`` rows at a
        time; the string columns named in ``dictionaries`` as dictionary codes (as Parquet
        stores them, so no string is hashed to tell equal values)."""
        schema = self.arrow_schema
        if columns is not None:
            schema = pa.schema([schema.field(c) for c in columns])
        schema = pa.schema([pa.field(f.name, pa.dictionary(pa.int32(), f.type)) if f.name in dictionaries else f
                            for f in schema])

        def read():
            for file, window in zip(self.files, self.windows):
                reader = self._open(file, dictionaries=[n for n in dictionaries if n in schema.names])
                for batch in self._file_batches(file, reader, [c for c in schema.names if c != "window"],
                                                dictionaries, batch_size):
                    batch_columns = {name: batch.column(name) for name in batch.schema.names}
                    batch_columns["window"] = pa.array(np.full(batch.num_rows, window, np.int16))
                    yield pa.RecordBatch.from_arrays([batch_columns[n] for n in schema.names], schema=schema)

        return pa.RecordBatchReader.from_batches(schema, read())

    def _file_batches(self, file: str, reader: pq.ParquetFile, columns: list[str], dictionaries: list[str],
                      batch_size: int) -> Iterator[pa.RecordBatch]:
        """The file's ``columns``, ``batch_size`` rows at a time. On a local disk, a row group at
        a time, polars decodes the numbers, booleans and dates (dictionary-encoded floats in
        half pyarrow's time) and pyarrow the rest (the ``dictionaries`` columns as codes)."""
        types = {field.name: field.type for field in reader.schema_arrow}
        decoded = [c for c in columns if self.is_local and c not in dictionaries and _polars_decodes(types.get(c))]
        if not decoded:
            yield from reader.iter_batches(batch_size=batch_size, columns=columns)
            return
        others = [c for c in columns if c not in decoded]
        start = 0
        for group in range(reader.num_row_groups):
            rows = reader.metadata.row_group(group).num_rows
            found = self._polars_rows(file, decoded, start, rows)
            start += rows
            if others:
                found |= dict(zip(others, reader.read_row_group(group, columns=others).columns))
            yield from pa.table({c: found[c].cast(types[c]) for c in columns}).to_batches(max_chunksize=batch_size)

    def _polars_rows(self, file: str, columns: list[str], start: int, rows: int) -> dict[str, pa.ChunkedArray]:
        try:
            frame = pl.scan_parquet(file, hive_partitioning=False).select(columns).slice(start, rows).collect()
        except (pl.exceptions.PolarsError, OSError) as error:
            name = self.names[self.files.index(file)]
            raise DataError(f"corrupt or unreadable sample file {name}: {error}") from None
        table = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
        return dict(zip(columns, table.columns))

    def register(self, conn: duckdb.DuckDBPyConnection, *, columns: list[str] | None = None,
                 name: str = "sample_rows", scanned_twice: bool = False) -> None:
        """The rows as the relation ``name`` (``sample_rows``) of ``conn``: local files through
        DuckDB's own Parquet reader (the fastest here; it reads only the columns a query uses),
        files elsewhere a batch at a time through pyarrow (only ``columns``, if given), or read
        into memory first where the query reads the relation twice (a stream is read once)."""
        if self.is_local:
            conn.sql(sql("coverage/sample_rows"), params={"files": self.files}).create_view(name)
        elif scanned_twice:
            conn.register(name, self.read(columns).to_arrow())
        else:
            conn.register(name, self.batches(columns))

    def read(self, columns: list[str] | None = None) -> pl.DataFrame:
        """The rows (or ``columns``) in memory."""
        return pl.from_arrow(self.batches(columns).read_all())

    def _open(self, file: str, *, dictionaries: list[str] = ()) -> pq.ParquetFile:
        try:
            return pq.ParquetFile(self.fs.open_input_file(file), read_dictionary=dictionaries or None)
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"corrupt or unreadable sample file {self.names[self.files.index(file)]}: {error}") from None


def _polars_decodes(dtype: pa.DataType | None) -> bool:
    """Types polars reads from Parquet into the same Arrow type."""
    return dtype is not None and (pa.types.is_integer(dtype) or dtype in (pa.float32(), pa.float64(), pa.bool_(),
                                                                           pa.date32()))


def keep_day_query_events(pairs: list[pl.DataFrame | None], day: Location, config: Config) -> None:
    """Keep the day's sampled events per query from its sampled windows' query_event_pairs
    (none kept when the logs have no query column)."""
    if all(p is not None for p in pairs):
        keep_query_events(query_events_of(pairs), day, event_id=config.logs.event_id, query=config.logs.query)


def query_event_pairs(rows: pl.DataFrame, *, event_id: str, query: str) -> pl.DataFrame | None:
    """The distinct (query as text, event id) of sampled rows, neither NULL; None: the rows
    have no query column."""
    if query not in rows.columns:
        return None
    pairs = rows.select(pl.col(query).cast(pl.String).alias("query"), pl.col(event_id).alias("event_id"))
    # An event's rows sit together in the logs: a row like the one before it adds nothing, and
    # dropping those first leaves about a tenth of the rows to hash.
    changed = pl.any_horizontal(pl.col(c).ne_missing(pl.col(c).shift()) for c in ("query", "event_id"))
    return pairs.filter(changed).drop_nulls().unique()


def query_events_of(pairs: list[pl.DataFrame]) -> pl.DataFrame:
    """Sampled events per query (``query``, ``n``) of a day, from its windows' query_event_pairs
    (the same as query_events.sql counts from its files)."""
    return pl.concat(pairs).unique().group_by("query").len("n")


def sampled_query_events(days: list[date], root: Location, *, event_id: str, query: str) -> pl.DataFrame:
    """Sampled events per query over the days whose samples exist: ``query``, ``n``.

    A day's counts are kept beside its sample (``_query_events.parquet``, with the columns they
    were counted from): they set its own query bands and those of the ``band_days`` days after
    it, and at the paper's scale (20M sampled rows a day) counting a day from its files takes
    about a second of CPU. The sample step keeps them as it writes the rows (``write_sample``);
    a day sampled otherwise (the Spark engine) is counted the first time, by DuckDB streaming
    its sample files, and kept then.
    """
    counts = [_day_query_events(ds, root, event_id=event_id, query=query) for ds in days if is_sampled(ds, root)]
    counts = [day for day in counts if day is not None]
    if not counts:
        return pl.DataFrame(schema={"query": pl.String, "n": pl.Int64})
    return pl.concat(counts).group_by("query").agg(pl.col("n").sum().cast(pl.Int64))


def _day_query_events(ds: date, root: Location, *, event_id: str, query: str) -> pl.DataFrame | None:
    """One day's counts: kept ones if counted from the same columns, else counted (and kept).
    None for a day sampled before the query column existed: it has nothing to say about bands."""
    day = partition_dir(root, ds)
    kept = storage.join(day, QUERY_EVENTS_FILE)
    if storage.exists(kept):
        table = storage.read_table(kept)
        if (table.schema.metadata or {}) == _counted_from(event_id, query):
            return pl.from_arrow(table)
    rows = sample_files(ds, root)
    if not {event_id, query} <= set(rows.schema):
        return None
    statement = sql("coverage/query_events").format(event_id=quote(event_id), query=quote(query))
    with duckdb.connect() as conn:
        rows.register(conn, columns=[event_id, query])
        counts = conn.sql(statement).pl().with_columns(pl.col("query").cast(pl.String))
    try:
        keep_query_events(counts, day, event_id=event_id, query=query)
    except OSError:  # samples one may read but not write: counted again next time
        pass
    return counts


def keep_query_events(counts: pl.DataFrame, day: Location, *, event_id: str, query: str) -> None:
    """Write a day's sampled events per query (``query`` as text, ``n``) beside its sample,
    tagged with the columns they were counted from; in query order, so that a rerun writes
    the same bytes."""
    table = counts.select(pl.col("query").cast(pl.String), pl.col("n").cast(pl.Int64)).sort("query").to_arrow()
    storage.write_parquet(table.replace_schema_metadata(_counted_from(event_id, query)),
                          storage.join(day, QUERY_EVENTS_FILE))


def _counted_from(event_id: str, query: str) -> dict[bytes, bytes]:
    return {b"event_id": event_id.encode(), b"query": query.encode()}
