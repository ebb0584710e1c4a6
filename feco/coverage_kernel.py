"""The finest coverage counts in compiled loops: what ``sql/coverage/finest_counts.sql`` counts,
a batch of rows at a time.

Each row gets one small integer, its group (window and the segment values, taken from the
batch's dictionary codes, never from its strings), numbered among the groups present in the
batch. Then the features are counted a pack of up to four at a time: each value's state (0
missing, 1 present, 2 covered) is a digit of its row's joint state in base 3, added in a
loop the compiler turns into vector instructions, and one count per row of the group's
joint state (groups x 81, 32-bit, in the processor's cache) gives all four features'
counts. One count for four values, where a count a value took most of the time.

Same counts as the SQL, by construction (``tests/test_coverage.py`` compares them): NULL and
NaN are missing, a value is compared to its threshold as a double (DuckDB casts a FLOAT
column to DOUBLE against a DOUBLE parameter), NULL segment values read 'unknown', segment
values are NFC-normalised (the distinct values of a batch, then the codes of values that
become one merged), query bands come from ``sql/coverage/query_bands.sql`` itself.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date
from typing import NamedTuple

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from numba import literal_unroll, njit

from feco.dimensions import AGE_BAND, COLUMN, DIMENSIONS, PRODUCT_AGE, QUERY_BAND

UNKNOWN = "unknown"
BANDS = ["head", "torso", "tail", UNKNOWN]
AGES = ["new", "established", UNKNOWN]
KEYS = ["window", *(dimension.name for dimension in DIMENSIONS)]  # a group's labels, in finest_counts' order
NO_MASK = np.zeros(0, np.uint8)
COUNTING_THREADS = 2  # batches counted at once; each one more batch in memory
BATCH_ROWS = 1 << 19  # per batch: its rows' codes and states, about 40 bytes a row
MAX_PACK = 4  # features counted in one pass over the rows: one count for four values
JOINT_COUNTS = 1 << 17  # at most this many joint counts a pack (32-bit: 512 KB, in L2)
NULL_DAY = np.iinfo(np.int32).min  # a NULL first-seen date, in the compiled loops


@dataclass(frozen=True)
class FeatureRule:
    """One configured feature as the counts see it: its column (None: not in the logs),
    whether it is covered by ``> threshold`` (else ``!= threshold``), and the threshold."""

    column: str | None
    greater: bool
    threshold: float


@dataclass(frozen=True)
class Segments:
    """The column behind each ``[logs]`` key the dimensions come from (``feco.dimensions``;
    None: no configured segment uses it), the day's head and torso queries and their bands
    (codes into BANDS), the date after which a product is new, and the age bands: their
    labels, youngest first, and the first-seen dates that part them
    (``feco.coverage.age_band_edges``)."""

    columns: dict[str, str | None]
    queries: pa.Array
    band_codes: np.ndarray
    new_since: date
    age_edges: list[date]
    age_labels: list[str]

    @classmethod
    def of(cls, bands: pa.Table, **columns) -> Segments:
        """From ``query_bands.sql``'s rows (``query``, ``band``): every query with events has
        one, and all but a few thousand are in the tail, so only the others are kept."""
        bands = bands.filter(pc.field("band") != "tail")
        codes = np.array([BANDS.index(band) for band in bands.column("band").to_pylist()], np.int64)
        return cls(queries=bands.column("query").combine_chunks(), band_codes=codes, **columns)


def finest_counts(batches: Iterable[pa.RecordBatch], *, features: list[FeatureRule],
                  segments: Segments) -> pl.DataFrame:
    """``finest_counts.sql``'s rows ("window", the segment values, n_rows, p0, c0, …)
    for the rows of ``batches`` (each with a ``window`` column and the columns named)."""
    parts = list(_each_counted(batches, functools.partial(_batch_counts, features=features, segments=segments)))
    sums = [pl.col("n_rows").sum(), *(pl.col(f"{kind}{i}").sum() for i in range(len(features)) for kind in "pc")]
    if not parts:
        return _counts_frame({key: [] for key in KEYS}, np.zeros(0, np.int64), np.zeros((0, len(features), 2), np.int64))
    return pl.concat(parts).group_by(KEYS).agg(sums)


def _each_counted(batches: Iterable[pa.RecordBatch], count) -> Iterator[pl.DataFrame]:
    """``count(batch)`` of each batch, COUNTING_THREADS at a time while the next batch is read
    (the compiled loops and Parquet decoding free the GIL): at most COUNTING_THREADS + 1
    batches in memory."""
    pending = deque()
    with ThreadPoolExecutor(max_workers=COUNTING_THREADS) as pool:
        for batch in batches:
            pending.append(pool.submit(count, batch))
            if len(pending) > COUNTING_THREADS:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _batch_counts(batch: pa.RecordBatch, *, features: list[FeatureRule], segments: Segments) -> pl.DataFrame:
    """The batch's finest counts, one row per group present in it."""
    groups, labels = _groups(batch, segments)
    n_groups = len(labels[KEYS[0]])
    rows = np.bincount(groups, minlength=n_groups)
    counts = np.zeros((n_groups, len(features), 2), np.int64)
    read = [(index, feature) for index, feature in enumerate(features) if feature.column is not None]
    size = _pack_size(n_groups)
    for start in range(0, len(read), size):
        pack = read[start:start + size]
        states = _pack_states(batch, [feature for _, feature in pack], groups, n_groups)
        for place, (index, _) in enumerate(pack):
            counts[:, index, 0] = states[:, place, 1] + states[:, place, 2]
            counts[:, index, 1] = states[:, place, 2]
    return _counts_frame(labels, rows, counts)


def _pack_size(n_groups: int) -> int:
    """How many features to count together: their joint states (3 ** pack a group) stay
    within JOINT_COUNTS, so the counts stay in the processor's cache."""
    size = 1
    while size < MAX_PACK and n_groups * 3 ** (size + 1) <= JOINT_COUNTS:
        size += 1
    return size


def _pack_states(batch: pa.RecordBatch, pack: list[FeatureRule], groups: np.ndarray, n_groups: int) -> np.ndarray:
    """The rows of each group in each state of each of the pack's features (groups x pack x
    3), from one count per row of the features' joint state (a number in base 3)."""
    keys = groups * np.int32(3 ** len(pack))
    for place, feature in enumerate(pack):
        values, valid = _values(batch.column(feature.column))
        _add_states(values, valid, feature.greater, feature.threshold, np.int32(3 ** place), keys)
    joint = np.zeros(n_groups * 3 ** len(pack), np.int32)
    _count_keys(keys, joint)
    states = np.zeros((n_groups, len(pack), 3), np.int64)
    _split_joint(joint.reshape(n_groups, -1), states)
    return states


def _counts_frame(labels: dict[str, np.ndarray], rows: np.ndarray, counts: np.ndarray) -> pl.DataFrame:
    columns = {"window": pl.Series(labels["window"], dtype=pl.Int16),
               **{key: pl.Series(labels[key], dtype=pl.String) for key in KEYS[1:]},
               "n_rows": rows}
    for i in range(counts.shape[1]):
        columns[f"p{i}"], columns[f"c{i}"] = counts[:, i, 0], counts[:, i, 1]
    return pl.DataFrame(columns)


class _Dimension(NamedTuple):
    """A batch's rows' codes in one dimension: row i's code is ``lookup[index[i]]``, a place
    in ``labels`` (``index`` None: every row has the one label)."""

    index: np.ndarray | None
    lookup: np.ndarray | None
    labels: np.ndarray


UNKNOWN_ONLY = _Dimension(None, None, np.array([UNKNOWN], dtype=object))


def _groups(batch: pa.RecordBatch, segments: Segments) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Each row's group (0 … groups - 1, the groups present in the batch) and each group's
    window and segment values."""
    dimensions = [_window_dimension(batch.column("window")), *_segment_dimensions(batch, segments)]
    coded = tuple((d.index, d.lookup, len(d.labels)) for d in dimensions if d.index is not None)
    keys = _keys(coded, batch.num_rows) if coded else np.zeros(batch.num_rows, np.int64)
    shape = tuple(len(dimension.labels) for dimension in dimensions)
    total = int(np.prod(shape))
    if total > 4 * batch.num_rows:  # many segment values, few rows: sorting the rows' keys is cheaper
        present, groups = np.unique(keys, return_inverse=True)
    else:
        present, groups = _numbered(keys, np.full(total, -1, np.int32))
    positions = np.unravel_index(present, shape)
    labels = {key: dimension.labels[position] for key, dimension, position in zip(KEYS, dimensions, positions)}
    return groups.astype(np.int32, copy=False), labels


@njit(cache=True, nogil=True)
def _keys(dimensions, rows):  # pragma: no cover - compiled
    """Each row's key, its place in the array of all combinations of the dimensions' labels
    (``dimensions``: each one's index, lookup and number of labels), in one pass."""
    keys = np.empty(rows, np.int64)
    for i in range(rows):
        key = 0
        for dimension in literal_unroll(dimensions):  # (index, lookup, size)
            key = key * dimension[2] + dimension[1][dimension[0][i]]
        keys[i] = key
    return keys


@njit(cache=True, nogil=True)
def _numbered(keys, number):  # pragma: no cover - compiled
    """The keys present, in ascending order, and each row's index among them; ``number``
    (one slot per possible key, -1) is the scratch table."""
    for key in keys:
        number[key] = 0
    present = np.flatnonzero(number >= 0)
    for index in range(present.shape[0]):
        number[present[index]] = index
    groups = np.empty(keys.shape[0], np.int32)
    for i in range(keys.shape[0]):
        groups[i] = number[keys[i]]
    return present, groups


def _segment_dimensions(batch: pa.RecordBatch, segments: Segments) -> list[_Dimension]:
    """The rows' codes in each declared dimension, in KEYS' order."""
    coded, ages = [], {}
    for dimension in DIMENSIONS:
        column = _column(batch, segments.columns[dimension.source])
        if dimension.kind == COLUMN:
            coded.append(_value_dimension(column))
        elif dimension.kind == QUERY_BAND:
            coded.append(_band_dimension(column, segments))
        else:  # product age and age band: both from one pass over the first-seen dates
            if dimension.source not in ages:
                ages[dimension.source] = _age_dimensions(column, segments)
            coded.append(ages[dimension.source][dimension.kind])
    return coded


def _column(batch: pa.RecordBatch, name: str | None) -> pa.Array | None:
    return None if name is None else batch.column(name)


def _window_dimension(column: pa.Array) -> _Dimension:
    windows = column.to_numpy(zero_copy_only=False)
    lowest, highest = (int(windows.min()), int(windows.max())) if len(windows) else (0, 0)
    return _Dimension(windows, np.arange(highest + 1) - lowest, np.arange(lowest, highest + 1))


def _value_dimension(column: pa.Array | None) -> _Dimension:
    """The column's distinct values NFC-normalised, NULL read 'unknown': the codes of values
    that normalise alike (a composed and a decomposed 'Österreich') look up one label."""
    if column is None:
        return UNKNOWN_ONLY
    encoded = _dictionary(column)
    values = [UNKNOWN if value is None else unicodedata.normalize("NFC", value)
              for value in encoded.dictionary.to_pylist()]
    labels, lookup = np.unique(np.array([*values, UNKNOWN], dtype=object), return_inverse=True)
    return _Dimension(_indices(encoded), lookup.astype(np.int64), labels)


def _band_dimension(column: pa.Array | None, segments: Segments) -> _Dimension:
    """BANDS: each distinct query's band looked up once, then given to its rows. A query of
    the sample has events, so a band: tail unless it is a head or torso query (a NULL query
    is unknown)."""
    if column is None:
        return UNKNOWN_ONLY
    encoded = _dictionary(column)
    found = pc.index_in(encoded.dictionary, value_set=segments.queries.cast(encoded.dictionary.type))
    with_tail = np.append(segments.band_codes, BANDS.index("tail"))  # -1, not found, picks the last
    of_value = with_tail[pc.fill_null(found, -1).to_numpy()]
    return _Dimension(_indices(encoded), np.append(of_value, BANDS.index(UNKNOWN)), np.array(BANDS, dtype=object))


def _age_dimensions(column: pa.Array | None, segments: Segments) -> dict[str, _Dimension]:
    """AGES and the age bands (then 'unknown'), from the first-seen dates, by kind."""
    if column is None:
        return {PRODUCT_AGE: UNKNOWN_ONLY, AGE_BAND: UNKNOWN_ONLY}
    epoch = date(1970, 1, 1).toordinal()
    days = column.cast(pa.int32()).fill_null(NULL_DAY).to_numpy(zero_copy_only=False)
    edges = np.array([edge.toordinal() - epoch for edge in segments.age_edges], np.int32)
    age, band = _age_and_band(days, segments.new_since.toordinal() - epoch, edges, len(segments.age_labels))
    band_labels = [*segments.age_labels, UNKNOWN]
    return {PRODUCT_AGE: _Dimension(age, np.arange(len(AGES)), np.array(AGES, dtype=object)),
            AGE_BAND: _Dimension(band, np.arange(len(band_labels)), np.array(band_labels, dtype=object))}


@njit(cache=True, nogil=True)
def _age_and_band(days, new_since, edges, unknown_band):  # pragma: no cover - compiled
    """A product first seen after ``new_since`` is new (0), else established (1); its age
    band is the number of ``edges`` (falling dates) it was first seen on or before; a NULL
    date (NULL_DAY) is unknown in both (2, and ``unknown_band``)."""
    age = np.empty(days.shape[0], np.int8)
    band = np.empty(days.shape[0], np.int8)
    for i in range(days.shape[0]):
        day = days[i]
        if day == NULL_DAY:
            age[i], band[i] = 2, unknown_band
            continue
        age[i] = 0 if day > new_since else 1
        older = 0
        for edge in edges:
            older += day <= edge
        band[i] = older
    return age, band


def _dictionary(column: pa.Array) -> pa.DictionaryArray:
    """The column as dictionary codes: as read (Parquet keeps strings so), else encoded."""
    return column if pa.types.is_dictionary(column.type) else pc.dictionary_encode(column)


def _indices(encoded: pa.DictionaryArray) -> np.ndarray:
    """The rows' codes, NULL as one past the dictionary's last value."""
    return pc.fill_null(encoded.indices, len(encoded.dictionary)).to_numpy()


def _values(column: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A numeric column's values (float32 or float64, read in place) and whether each is
    valid, a byte a value (NO_MASK: no NULL): bytes, not the column's validity bits, so the
    loops over them stay vector instructions."""
    if column.type not in (pa.float32(), pa.float64()):
        column = column.cast(pa.float64())  # integers and booleans, as the SQL casts them
    validity, data = column.buffers()[:2]
    dtype = np.float32 if column.type == pa.float32() else np.float64
    values = np.frombuffer(data, dtype, count=column.offset + len(column))[column.offset:]
    if validity is None or column.null_count == 0:
        return values, NO_MASK
    bits = np.unpackbits(np.frombuffer(validity, np.uint8), count=column.offset + len(column), bitorder="little")
    return values, bits[column.offset:]


@njit(cache=True, nogil=True)
def _add_states(values, valid, greater, threshold, weight, keys):  # pragma: no cover - compiled
    """Add each value's state (0 missing: NULL or NaN, 1 present, 2 covered) times ``weight``
    to its row's key. Written without branches on the values (a state is a sum of
    comparisons; NaN == NaN is false), one loop for each kind of rule, so that the compiler
    turns each into vector instructions."""
    if valid.shape[0] > 0:
        for i in range(values.shape[0]):
            value = values[i]
            present = (value == value) & (valid[i] != 0)  # noqa: PLR0124 - NaN test, compiled for any dtype
            passes = value > threshold if greater else value != threshold
            keys[i] += weight * (np.int32(present) + np.int32(present & passes))
    elif greater:  # NaN > threshold is false: a value that passes is present
        for i in range(values.shape[0]):
            value = values[i]
            keys[i] += weight * (np.int32(value == value) + np.int32(value > threshold))  # noqa: PLR0124 - NaN test, compiled for any dtype
    else:
        for i in range(values.shape[0]):
            value = values[i]
            present = value == value  # noqa: PLR0124 - NaN test, compiled for any dtype
            keys[i] += weight * (np.int32(present) + np.int32(present & (value != threshold)))


@njit(cache=True, nogil=True)
def _count_keys(keys, counts):  # pragma: no cover - compiled
    for key in keys:
        counts[key] += 1


@njit(cache=True, nogil=True)
def _split_joint(joint, states):  # pragma: no cover - compiled
    """Each feature's counts from the joint ones: digit ``place`` (base 3) of a joint state
    is the state of the pack's feature ``place``."""
    for group in range(joint.shape[0]):
        for key in range(joint.shape[1]):
            count = joint[group, key]
            if count:
                digits = key
                for place in range(states.shape[1]):
                    states[group, place, digits % 3] += count
                    digits //= 3
