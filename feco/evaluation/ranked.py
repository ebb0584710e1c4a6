"""From a run and its judgments to the ranks of the judged items: the input of every metric.

A run is a frame ``(query, item, score)``, judgments a frame ``(query, item, relevance)``.
Neither is sorted as a whole: the run is grouped by query (a stable re-sort happens only when
a query's rows are not contiguous), the two are aligned by query, and a kernel (numba or NumPy,
:mod:`feco.evaluation._kernels`) finds, for every judged item with a positive relevance, its rank
in the query's list under the tie rule. :class:`RankedJudgments` holds the result; the metric families read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
import polars as pl

from feco.errors import DataError, UsageError
from feco.evaluation import _kernels
from feco.evaluation._kernels import STATUS_DUPLICATE

RUN_COLUMNS = ("query", "item", "score")
QRELS_COLUMNS = ("query", "item", "relevance")
TIE_MODES = {
    "item_desc": _kernels.TIE_ITEM_DESC,
    "item_asc": _kernels.TIE_ITEM_ASC,
    "input_order": _kernels.TIE_INPUT_ORDER,
    "average": _kernels.TIE_AVERAGE,
}
_HASH_SEED = 0xFEC0


@dataclass(frozen=True)
class RankedJudgments:
    """Per judged query, where its positive judged items rank in the run.

    Arrays named ``pos_*`` or ``match``/``before``/``tied`` have one entry per judged item
    with positive relevance; the query's entries are ``pos_lo[q]:pos_hi[q]``. Per-query
    arrays follow ``queries`` (sorted judged query ids).

    Attributes
    ----------
    queries
        Judged query ids, sorted.
    in_run
        Whether the run ranks the query at all.
    n_retrieved
        Length of the query's ranked list.
    pos_lo, pos_hi
        Slice of the query's positive judged items.
    relevance
        Relevance of each positive judged item.
    match
        Row of the item in the grouped run, -1 when the run does not retrieve it.
    before
        Items ranked before it (under tie averaging: with a strictly higher score).
    tied
        1, or under tie averaging the size of its tie group.
    unjudged_in_run
        Queries the run ranks that have no judgments (ignored by every metric).
    run
        The run, grouped by query (rows of one query contiguous, input order kept).
    scores
        The run's scores in the precision they are compared in.
    run_lo, run_hi
        Slice of every query of ``run`` (judged or not), used by catalogue coverage.
    tie_mode
        The kernel's tie constant.
    kernels
        The kernel module the metrics compute with (see :func:`feco.evaluation._kernels.load`).
    """

    queries: pl.Series
    in_run: np.ndarray
    n_retrieved: np.ndarray
    pos_lo: np.ndarray
    pos_hi: np.ndarray
    relevance: np.ndarray
    match: np.ndarray
    before: np.ndarray
    tied: np.ndarray
    unjudged_in_run: int
    run: pl.DataFrame
    scores: np.ndarray
    run_lo: np.ndarray
    run_hi: np.ndarray
    tie_mode: int
    kernels: ModuleType

    def ordered_run_keys(self) -> np.ndarray:
        """Int64 keys that order the run's items as their ids do (for top-k selection)."""
        return _item_keys([self.run.get_column("item")], lexical=True)[0]


def rank_judgments(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    *,
    ties: str = "item_desc",
    score_precision: str = "float64",
    check_qrels: bool = True,
    kernels: str = "numba",
) -> RankedJudgments:
    """Align ``run`` and ``qrels`` by query and rank every positive judged item.

    Parameters
    ----------
    run
        Frame with columns ``query``, ``item``, ``score`` (numeric, no NaN).
    qrels
        Frame with columns ``query``, ``item``, ``relevance`` (numeric).
    ties
        Tie rule, one of ``Conventions.ties``.
    score_precision
        ``"float64"``, or ``"float32"`` to round scores to single precision first.
    check_qrels
        Reject an item judged twice for a query (skipped when the caller built the judgments
        so that it cannot happen).
    kernels
        ``"numba"`` (compiled loops, fastest once loaded) or ``"numpy"`` (no compilation:
        quicker for a one-off call); the values are identical.

    Returns
    -------
    RankedJudgments

    Examples
    --------
    >>> import polars as pl
    >>> from feco.evaluation.ranked import rank_judgments
    >>> run = pl.DataFrame({"query": [1, 1, 1], "item": [7, 8, 9], "score": [0.2, 0.9, 0.5]})
    >>> qrels = pl.DataFrame({"query": [1, 1], "item": [7, 9], "relevance": [1, 2]})
    >>> ranked = rank_judgments(run, qrels)
    >>> ranked.before.tolist()  # item 7 has two items ahead, item 9 one
    [2, 1]
    """
    if ties not in TIE_MODES:
        raise UsageError(f"unknown tie rule {ties!r}; choose one of {', '.join(TIE_MODES)}")
    run = _checked(run, RUN_COLUMNS, "run", value="score")
    qrels = _checked(qrels, QRELS_COLUMNS, "qrels", value="relevance")
    run, qrels = _common_id_types(run, qrels)
    run, run_keys, run_lo, run_hi = _grouped(run)
    qrels, qrels_keys, q_lo, q_hi = _grouped(qrels)

    queries, qrels_group, in_run, lo, hi = _aligned(qrels_keys, run_keys, run_lo, run_hi)

    relevance_all = qrels.get_column("relevance").to_numpy()
    positive = relevance_all > 0
    cumulative = np.concatenate([[0], np.cumsum(positive)])
    pos_lo = cumulative[q_lo[qrels_group]]
    pos_hi = cumulative[q_hi[qrels_group]]

    scores = run.get_column("score").to_numpy()
    if score_precision == "float32":
        scores = scores.astype(np.float32)
    tie_mode = TIE_MODES[ties]
    kernel = _kernels.load(kernels)
    layout = _Layout(kernel, run, qrels, queries, lo, hi, q_lo, q_hi, pos_lo, pos_hi,
                     np.flatnonzero(positive), scores, tie_mode, check_qrels)
    items = [run.get_column("item"), qrels.get_column("item")]
    exact = items[0].dtype == pl.Int64
    located = _locate(layout, *_item_keys(items, lexical=False), exact=exact)
    if located is None:  # two different string ids share a 64-bit hash: use exact codes
        located = _locate(layout, *_item_keys(items, lexical=True), exact=True)
    match, before, tied = located

    return RankedJudgments(
        queries=queries,
        in_run=in_run,
        n_retrieved=hi - lo,
        pos_lo=pos_lo,
        pos_hi=pos_hi,
        relevance=relevance_all[positive],
        match=match,
        before=before,
        tied=tied,
        unjudged_in_run=len(run_keys) - int(in_run.sum()),
        run=run,
        scores=scores,
        run_lo=run_lo,
        run_hi=run_hi,
        tie_mode=tie_mode,
        kernels=kernel,
    )


@dataclass(frozen=True)
class _Layout:
    """The grouped frames and the slices the kernels read, for :func:`_locate`."""

    kernels: ModuleType
    run: pl.DataFrame
    qrels: pl.DataFrame
    queries: pl.Series
    lo: np.ndarray
    hi: np.ndarray
    q_lo: np.ndarray
    q_hi: np.ndarray
    pos_lo: np.ndarray
    pos_hi: np.ndarray
    positive_rows: np.ndarray
    scores: np.ndarray
    tie_mode: int
    check_qrels: bool


def _locate(layout: _Layout, run_keys, qrels_keys, *, exact: bool):
    """``match``, ``before`` and ``tied`` of every positive judged item, or None on a collision.

    ``exact`` keys (integer ids, lexical codes) are equal only for equal ids and ordered like
    them. Hashed keys are neither: a duplicate they report is checked on the ids, and None asks
    the caller to start again with exact codes. A match they make is not checked (reading the
    matched strings again costs as much as the rest of the string path); a judged item would
    be taken for a different retrieved item of its query only if the two shared a 64-bit
    hash, about 2^-64 per pair.
    """
    g = layout
    if g.check_qrels:
        row = int(g.kernels.first_duplicate(*read_only(g.q_lo, g.q_hi, qrels_keys)))
        if row >= 0:
            start = g.q_lo[np.searchsorted(g.q_hi, row, side="right")]
            if not exact and not _repeats_earlier(g.qrels.get_column("item"), start, row):
                return None
            query, item = g.qrels.row(row)[:2]
            raise DataError(f"qrels judge item {item!r} of query {query!r} more than once")
    match, before, tied, needs_order, status, q, row = g.kernels.rank_judged(
        *read_only(g.lo, g.hi, run_keys, g.scores, g.pos_lo, g.pos_hi,
                   qrels_keys[g.positive_rows]),
        g.tie_mode, exact,
    )
    if status == STATUS_DUPLICATE:
        run_items = g.run.get_column("item")
        if not exact and not _repeats_earlier(run_items, g.lo[q], row):
            return None
        raise DataError(
            f"run ranks item {run_items[int(row)]!r} more than once for query "
            f"{g.queries[int(q)]!r}"
        )
    if needs_order.any():
        _rank_in_item_order(g, np.flatnonzero(needs_order), (match, before, tied))
    return match, before, tied


def _repeats_earlier(items: pl.Series, start: int, row: int) -> bool:
    """Whether ``items[row]`` equals one of ``items[start:row]``."""
    return bool((items.slice(int(start), int(row - start)) == items[int(row)]).any())


def _checked(frame: pl.DataFrame, columns: tuple[str, ...], what: str, *, value: str):
    if not isinstance(frame, pl.DataFrame):
        raise UsageError(f"{what} must be a polars DataFrame, not {type(frame).__name__}")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(
            f"{what} lacks column(s) {', '.join(missing)}; it needs {', '.join(columns)}"
        )
    frame = frame.select(columns)
    if not frame.schema[value].is_numeric():
        raise DataError(f"{what} column {value!r} must be numeric, not {frame.schema[value]}")
    frame = frame.with_columns(pl.col(value).cast(pl.Float64))
    nulls = {c: n for c, n in zip(columns, frame.null_count().row(0)) if n}
    if nulls:
        col, n = next(iter(nulls.items()))
        raise DataError(f"{what} column {col!r} has {n} null value(s)")
    if value == "score" and frame.select(pl.col("score").is_nan().any()).item():
        bad = frame.filter(pl.col("score").is_nan()).row(0, named=True)
        raise DataError(
            f"run score is NaN for item {bad['item']!r} of query {bad['query']!r}"
        )
    return frame


def _common_id_types(run: pl.DataFrame, qrels: pl.DataFrame):
    """Give query and item the same dtype in both frames: integers, else strings."""
    casts_run, casts_qrels = [], []
    for col in ("query", "item"):
        a, b = run.schema[col], qrels.schema[col]
        if a.is_integer() and b.is_integer():
            target = pl.Int64
        elif a == pl.String and b == pl.String:
            continue
        else:
            target = pl.String
        casts_run.append(pl.col(col).cast(target))
        casts_qrels.append(pl.col(col).cast(target))
    try:
        return run.with_columns(casts_run), qrels.with_columns(casts_qrels)
    except pl.exceptions.PolarsError as error:
        raise DataError(f"query and item ids cannot be compared: {error}") from None


def _aligned(qrels_keys: pl.Series, run_keys: pl.Series, run_lo, run_hi):
    """Judged queries in order, their qrels group, and their slice of the run (if any)."""
    qrels_group = qrels_keys.arg_sort().to_numpy().astype(np.int64)
    if qrels_keys.equals(run_keys):
        # The usual case (run and judgments list the same queries in the same order): no
        # join, which on string ids costs more than the sort.
        run_group = qrels_group
    else:
        run_group = (
            pl.DataFrame({"query": qrels_keys.gather(qrels_group)})
            .join(pl.DataFrame({"query": run_keys, "run_group": np.arange(len(run_keys))}),
                  on="query", how="left", maintain_order="left")
            .get_column("run_group").fill_null(-1).to_numpy()
        )
    in_run = run_group >= 0
    lo = np.zeros(len(run_group), np.int64)
    hi = np.zeros(len(run_group), np.int64)
    lo[in_run] = run_lo[run_group[in_run]]
    hi[in_run] = run_hi[run_group[in_run]]
    return qrels_keys.gather(qrels_group), qrels_group, in_run, lo, hi


def _grouped(frame: pl.DataFrame):
    """Make each query's rows contiguous (stable) and return its keys and slices."""
    starts = _run_starts(frame.get_column("query"))
    if frame.get_column("query").gather(starts).n_unique() < len(starts):
        frame = frame.sort("query", maintain_order=True)
        starts = _run_starts(frame.get_column("query"))
    ends = np.append(starts, frame.height)[1:]
    return frame, frame.get_column("query").gather(starts), starts, ends


def _run_starts(ids: pl.Series) -> np.ndarray:
    """First row of every run of equal ids.

    Comparing each id with the one before is about a third cheaper than ``rle`` on string ids.
    """
    return ids.ne_missing(ids.shift(1)).arg_true().to_numpy().astype(np.int64)


def read_only(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays, marked read-only (in place, no copy).

    numba compiles one version of a kernel per argument type, and a read-only array (what
    polars hands out without copying) is a different type from a writable one; passing all
    inputs read-only keeps one compiled version per score dtype.
    """
    for array in arrays:
        array.flags.writeable = False
    return arrays


def _rank_in_item_order(layout: _Layout, queries: np.ndarray, outputs) -> None:
    """Rank again, with lexical codes, the queries whose ties need the string ids' order."""
    g = layout
    match, before, tied = outputs
    run_rows, sub_lo, sub_hi = _concatenated(g.lo[queries], g.hi[queries])
    pos_rows, sub_pos_lo, sub_pos_hi = _concatenated(g.pos_lo[queries], g.pos_hi[queries])
    run_codes, pos_codes = _item_keys(
        [g.run.get_column("item").gather(run_rows),
         g.qrels.get_column("item").gather(g.positive_rows[pos_rows])],
        lexical=True,
    )
    sub_match, sub_before, sub_tied, _, _, _, _ = g.kernels.rank_judged(
        *read_only(sub_lo, sub_hi, run_codes, g.scores[run_rows], sub_pos_lo, sub_pos_hi,
                   pos_codes),
        g.tie_mode, True,
    )
    match[pos_rows] = np.where(sub_match >= 0, run_rows[np.maximum(sub_match, 0)], -1)
    before[pos_rows] = sub_before
    tied[pos_rows] = sub_tied


def _concatenated(lo: np.ndarray, hi: np.ndarray):
    """Rows of the slices ``lo:hi`` one after another, and each slice's place in them."""
    lengths = hi - lo
    ends = np.cumsum(lengths)
    starts = ends - lengths
    rows = np.arange(ends[-1] if len(ends) else 0) - np.repeat(starts - lo, lengths)
    return rows.astype(np.int64), starts, ends


def _item_keys(items: list[pl.Series], *, lexical: bool) -> list[np.ndarray]:
    """One int64 key per item for the kernels, for several Series of the same dtype.

    Integer ids are their own (ordered) key. String ids get one 64-bit hash (the cheapest
    pass over long strings; :func:`_locate` confirms what it matches), or with ``lexical``
    their rank in the sorted union of all ids (exact and ordered, but a sort of every id).
    """
    if items[0].dtype == pl.Int64:
        return [s.to_numpy() for s in items]
    if lexical:
        vocabulary = pl.concat([s.unique() for s in items]).unique().sort()
        enum = pl.Enum(vocabulary)
        return [s.cast(enum).to_physical().cast(pl.Int64).to_numpy() for s in items]
    return [s.hash(_HASH_SEED).to_numpy().view(np.int64) for s in items]
