"""The ranker's reads of sampled days, in memory set by a batch, not by the day.

At the paper's scale a day's sample is about 20M rows: held whole with its features it takes
gigabytes (the score step grew by ~950 MB per million sampled rows, the replay by ~650 MB).
So the score step reads a day as whole events a batch at a time (:func:`event_batches`; the
per-event NDCG sums merge like counts), and the replay and the NDCG at risk read only some row
groups of each day and keep only the events they choose (:func:`chosen_events`). Rows are
labelled with their segments exactly as coverage counts them (:func:`label_rows`), the query
bands taken from the whole day's events even when only a few of its rows are at hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from feco.config import Config
from feco.coverage import band_history, day_events, segment_rows
from feco.dimensions import source_columns
from feco.errors import DataError
from feco.sample_folder import SampleFiles, sample_files

DRAW = "feco_draw"  # each row's uniform draw, in the day's file order (seeded by the day)
BATCH_ROWS = 1 << 18
# A replay reads at least this many row groups of a day (one per window, on average), so its
# events are not all from one stretch of one window.
MIN_GROUPS = 8
LABEL_ROWS = 1 << 18


def label_rows(rows: pl.DataFrame, ds: date, config: Config) -> pl.DataFrame:
    """``rows``' segment values on ``ds`` (:func:`feco.coverage.segment_rows`), for any subset
    of the day's sampled rows.

    segment_rows takes the day's query bands from the events of the rows it is given; the
    history handed to it here is the day's kept events per query (and its band history) less
    those of ``rows``, so the bands come out those of the whole day.

    Examples
    --------
    With a sampled day (not run as a doctest)::

        label_rows(some_rows_of_the_day, date(2026, 11, 16), config)["query_band"]
    """
    logs = config.logs
    whole = [frame for frame in (band_history(ds, config), day_events(ds, config)) if frame is not None]
    if not whole or logs.query not in rows.columns:
        return segment_rows(rows, ds=ds, config=config, band_history=whole[0] if whole else None)
    own = (rows.filter(pl.col(logs.query).is_not_null())
           .group_by(pl.col(logs.query).cast(pl.String).alias("query"))
           .agg(pl.col(logs.event_id).n_unique().cast(pl.Int64).alias("n")))
    history = (pl.concat([*(f.select(pl.col("query").cast(pl.String), pl.col("n").cast(pl.Int64)) for f in whole),
                          own.with_columns(-pl.col("n"))])
               .group_by("query").agg(pl.col("n").sum()))
    return segment_rows(rows, ds=ds, config=config, band_history=history)


def event_batches(ds: date, config: Config, columns: Sequence[str], *, seed: int,
                  batch_rows: int = BATCH_ROWS) -> Iterator[pl.DataFrame]:
    """The day's sampled rows (``columns``) as frames of whole events, about ``batch_rows``
    rows each, with the column DRAW: each row's uniform draw, the same whatever the batches.

    A file whose events' rows sit together (as the sample step writes them) streams; one whose
    do not (rows of an event apart) is read whole and sorted by event, its memory then set by
    the file's size.

    Examples
    --------
    With a sampled day (not run as a doctest)::

        sum(batch.height for batch in event_batches(ds, config, ["event_id", "label"], seed=1))
    """
    event_id = config.logs.event_id
    files = sample_files(ds, config.paths.samples)
    draws = np.random.default_rng([seed, ds.toordinal()])
    for index in range(len(files.files)):
        parquet = _open(files, index)
        if _events_together(parquet, event_id):
            yield from _streamed(parquet, list(columns), event_id, draws, batch_rows)
        else:
            whole = pl.from_arrow(parquet.read(columns=list(columns)))
            whole = whole.with_columns(pl.Series(DRAW, draws.random(whole.height))).sort(event_id, maintain_order=True)
            yield from _cut(whole, event_id, batch_rows)


def _streamed(parquet: pq.ParquetFile, columns: list[str], event_id: str, draws: np.random.Generator,
              batch_rows: int) -> Iterator[pl.DataFrame]:
    """A file's rows a batch at a time, the last event of each batch held back until its rows
    are all read."""
    carry = None
    for batch in parquet.iter_batches(batch_size=batch_rows, columns=columns):
        frame = pl.from_arrow(pa.Table.from_batches([batch])).with_columns(pl.Series(DRAW, draws.random(batch.num_rows)))
        frame = frame if carry is None else pl.concat([carry, frame])
        ids = frame.get_column(event_id)
        whole = frame.height - int((ids == ids[-1]).sum())
        carry = frame.slice(whole)
        if whole:
            yield frame.slice(0, whole)
    if carry is not None and carry.height:
        yield carry


def _cut(frame: pl.DataFrame, event_id: str, batch_rows: int) -> Iterator[pl.DataFrame]:
    """A frame sorted by event in slices of about ``batch_rows`` rows, cut between events."""
    starts = frame.with_row_index("row").filter(pl.col(event_id).ne_missing(pl.col(event_id).shift()))["row"]
    start = 0
    for boundary in starts.to_list()[1:] + [frame.height]:
        if boundary - start >= batch_rows or boundary == frame.height:
            yield frame.slice(start, boundary - start)
            start = boundary


def _events_together(parquet: pq.ParquetFile, event_id: str) -> bool:
    """Whether each event's rows are one run of the file (as many runs as events)."""
    ids = parquet.read(columns=[event_id]).column(0).to_numpy()
    runs = int(len(ids) > 0) + int(np.count_nonzero(ids[1:] != ids[:-1]))
    return runs == len(np.unique(ids))


def chosen_events(days: Sequence[date], config: Config, columns: Sequence[str], *, events: int, seed: int,
                  segment: tuple[str, str] = ("all", "all"), labels: Sequence[str] = ()) -> pl.DataFrame:
    """The rows (``columns``) of at most ``events`` events of ``segment`` on ``days``, about as
    many each day, chosen by ``seed``, with ``in_segment`` (the rows in the segment: for a
    segment of products an event is in when one of its rows is), ``segment:<dim>`` for each
    dimension of ``labels`` and ``feco_day`` (the day's place in ``days``: event ids are unique
    within a day only).

    A day is read a row group at a time, in a seeded order, until its share of events is found
    and at least MIN_GROUPS groups are read: only those groups are read and only the chosen
    events' rows kept. An event cut by a group's edge inside a file is left out (its other rows
    are in the next group); a file whose events' rows are apart is read whole.

    Examples
    --------
    With sampled days (not run as a doctest)::

        chosen_events([date(2026, 11, 14)], config, ["event_id", "label"], events=500, seed=1,
                      segment=("region", "DE"))
    """
    share = -(-events // max(len(days), 1))
    frames = [_day_events(ds, config, list(columns), share=share, seed=seed, segment=segment, labels=list(labels))
              .with_columns(pl.lit(k, pl.Int64).alias("feco_day")) for k, ds in enumerate(days)]
    return pl.concat(frames, how="diagonal_relaxed")


def _day_events(ds: date, config: Config, columns: list[str], *, share: int, seed: int, segment: tuple[str, str],
                labels: list[str]) -> pl.DataFrame:
    event_id = config.logs.event_id
    files = sample_files(ds, config.paths.samples)
    keys = [c for c in dict.fromkeys([event_id, *source_columns(config.logs)]) if c in files.schema]
    read = list(dict.fromkeys([*columns, *keys]))
    groups = _groups(files, event_id)
    found, pending, ids = [], [], 0
    for visited, g in enumerate(np.random.default_rng([seed, ds.toordinal()]).permutation(len(groups)), start=1):
        pending.append(_group_rows(files, groups[g], read, event_id))
        if visited < min(MIN_GROUPS, len(groups)) and sum(p.height for p in pending) < LABEL_ROWS:
            continue  # small groups are labelled together: a labelling has a fixed cost
        rows = _labelled(pl.concat(pending, how="diagonal_relaxed"), ds, config, keys, segment=segment, labels=labels)
        found.append(rows)
        pending = []
        ids += rows.get_column(event_id).n_unique()
        if ids >= share and visited >= MIN_GROUPS:
            break
    if not found:  # a day whose windows held no rows
        return pl.DataFrame(schema={c: files.schema[c] for c in columns} | {"in_segment": pl.Boolean})
    rows = pl.concat(found, how="diagonal_relaxed")
    pool = rows.get_column(event_id).unique().sort()
    if pool.len() > share:
        pool = pool.sample(share, seed=seed)
    kept = [*columns, "in_segment", *(f"segment:{d}" for d in labels)]
    return rows.filter(pl.col(event_id).is_in(pool.implode())).select(kept)


def _labelled(rows: pl.DataFrame, ds: date, config: Config, keys: list[str], *, segment: tuple[str, str],
              labels: list[str]) -> pl.DataFrame:
    """The events of ``rows`` with a row in ``segment``, with ``in_segment`` and the ``labels``."""
    if segment[0] == "all" and not labels:
        return rows.with_columns(pl.lit(True).alias("in_segment"))
    found = label_rows(rows.select(keys), ds, config)
    inside = (pl.lit(True) if segment[0] == "all"
              else pl.concat_str(segment[0].split(" x "), separator=" x ") == segment[1])
    rows = rows.with_columns(found.select(inside.alias("in_segment"), *(pl.col(d).alias(f"segment:{d}") for d in labels)))
    wanted = rows.filter(pl.col("in_segment")).get_column(config.logs.event_id).unique()
    return rows.filter(pl.col(config.logs.event_id).is_in(wanted.implode()))


def _groups(files: SampleFiles, event_id: str) -> list[tuple[int, int | None]]:
    """The day's row groups as (file, group); (file, None) for a file read whole, its events'
    rows apart."""
    groups = []
    for index in range(len(files.files)):
        parquet = _open(files, index)
        if _events_together(parquet, event_id):
            groups += [(index, g) for g in range(parquet.num_row_groups)]
        else:
            groups.append((index, None))
    return groups


def _group_rows(files: SampleFiles, group: tuple[int, int | None], columns: list[str], event_id: str) -> pl.DataFrame:
    """One row group's rows, without the events its edges cut inside the file."""
    index, g = group
    parquet = _open(files, index)
    if g is None:
        return pl.from_arrow(parquet.read(columns=columns))
    rows = pl.from_arrow(parquet.read_row_group(g, columns=columns))
    if rows.is_empty():
        return rows
    ids = rows.get_column(event_id)
    cut = ([ids[0]] if g > 0 else []) + ([ids[-1]] if g < parquet.num_row_groups - 1 else [])
    return rows.filter(~pl.col(event_id).is_in(pl.Series(cut, dtype=ids.dtype).implode()))


def _open(files: SampleFiles, index: int) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(files.fs.open_input_file(files.files[index]))
    except (OSError, pa.ArrowException) as error:
        raise DataError(f"corrupt or unreadable sample file {files.names[index]}: {error}") from None
