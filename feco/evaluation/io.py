"""Read runs and judgments: TREC files, Parquet frames, svmlight data with predictions, logs.

All readers return frames in the shapes :func:`feco.evaluation.evaluate` takes: runs
``(query, item, score)`` and judgments ``(query, item, relevance)``. TREC ids stay strings,
as trec_eval compares them. Judgments are read more leniently than trec_eval reads them:
fields after the relevance are ignored, where trec_eval refuses the line. A malformed line is one :class:`~feco.errors.DataError` naming
the file and line number.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from feco.errors import DataError
from feco.evaluation.letor import read_letor

_INTERACTION_NAMES = {
    "user": ("user", "user_id", "userId", "userid"),
    "item": ("item", "item_id", "itemId", "movieId", "movie_id"),
    "timestamp": ("timestamp", "ts", "time", "event_time"),
    "rating": ("rating", "score", "value"),
}


def read_trec_qrels(path: str | Path) -> pl.DataFrame:
    """Read a TREC qrels file: ``query iteration item relevance`` per line.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
    >>> _ = path.write_text("301 0 doc-a 2\\n301 0 doc-b 0\\n")
    >>> read_trec_qrels(path).rows()
    [('301', 'doc-a', 2), ('301', 'doc-b', 0)]
    """
    path = Path(path)
    data, fields = _fields(path, 4, "query iteration item relevance")
    relevance = fields[3].cast(pl.Int64, strict=False)
    _fail_at(path, data, relevance.is_null(), "relevance is not an integer")
    return pl.DataFrame({"query": fields[0], "item": fields[2], "relevance": relevance})


def read_trec_run(path: str | Path) -> pl.DataFrame:
    """Read a TREC run file: ``query Q0 item rank score tag`` per line.

    The rank column is ignored, as trec_eval does: order comes from the score and the tie rule.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("301 Q0 doc-a 1 2.5 bm25\\n301 Q0 doc-b 2 -1e-3 bm25\\n")
    >>> read_trec_run(path).rows()
    [('301', 'doc-a', 2.5), ('301', 'doc-b', -0.001)]
    """
    path = Path(path)
    data, fields = _fields(path, 6, "query Q0 item rank score tag")
    score = fields[4].cast(pl.Float64, strict=False)
    _fail_at(path, data, score.is_null() | score.is_nan(), "score is not a number")
    return pl.DataFrame({"query": fields[0], "item": fields[2], "score": score})


def read_qrels(path: str | Path) -> pl.DataFrame:
    """Read judgments from Parquet (columns ``query, item, relevance``) or a TREC qrels file.

    Examples
    --------
    >>> import tempfile, pathlib, polars as pl
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.parquet"
    >>> pl.DataFrame({"query": [1], "item": [9], "relevance": [2], "note": ["x"]}).write_parquet(path)
    >>> read_qrels(path).columns
    ['query', 'item', 'relevance']
    """
    path = Path(path)
    if path.suffix == ".parquet":
        return _read_parquet(path, ("query", "item", "relevance"))
    return read_trec_qrels(path)


def read_run(path: str | Path) -> pl.DataFrame:
    """Read a run from Parquet (columns ``query, item, score``) or a TREC run file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
    >>> _ = path.write_text("q1 Q0 d1 1 0.5 tag\\n")
    >>> read_run(path).rows()
    [('q1', 'd1', 0.5)]
    """
    path = Path(path)
    if path.suffix == ".parquet":
        return _read_parquet(path, ("query", "item", "score"))
    return read_trec_run(path)


def read_svmlight_run(
    data: str | Path, predictions: str | Path
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Turn a LETOR/svmlight file and a model's predictions into a run and its judgments.

    Parameters
    ----------
    data
        LETOR/svmlight file (see :func:`feco.evaluation.letor.read_letor`); its labels are the judgments.
    predictions
        One score per line for the rows of ``data`` in order (LightGBM's ``predict`` output).

    Returns
    -------
    run, qrels : polars.DataFrame
        Items are the ``docid`` of the comments when every row has one, else the row number
        in the file (so ``ties="input_order"`` follows the file).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "test.txt").write_text("1 qid:1 1:0.2\\n0 qid:1 1:0.9\\n")
    >>> _ = (folder / "pred.txt").write_text("0.7\\n0.1\\n")
    >>> run, qrels = read_svmlight_run(folder / "test.txt", folder / "pred.txt")
    >>> run.rows(), qrels.rows()
    ([(1, 0, 0.7), (1, 1, 0.1)], [(1, 0, 1), (1, 1, 0)])
    """
    frame = read_letor(data)
    scores = _read_predictions(Path(predictions))
    if len(scores) != frame.height:
        raise DataError(
            f"{predictions}: {len(scores)} predictions for {frame.height} rows of {data}"
        )
    if "docid" in frame.columns and frame.get_column("docid").null_count() == 0:
        item = pl.col("docid")
    else:
        item = pl.int_range(pl.len(), dtype=pl.Int64)
    frame = frame.with_columns(pl.Series("score", scores), item.alias("item"))
    run = frame.select(pl.col("qid").alias("query"), "item", "score")
    qrels = frame.select(pl.col("qid").alias("query"), "item", pl.col("label").alias("relevance"))
    return run, qrels


def read_interactions(
    path: str | Path,
    *,
    user: str | None = None,
    item: str | None = None,
    timestamp: str | None = None,
    rating: str | None = None,
) -> pl.DataFrame:
    """Read an interaction log (CSV or Parquet) into ``user, item, timestamp[, rating]``.

    Column names are found among common spellings (MovieLens' ``userId``, ``movieId``,
    ``timestamp``, ``rating``) unless given.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ratings.csv"
    >>> _ = path.write_text("userId,movieId,rating,timestamp\\n1,31,2.5,1260759144\\n")
    >>> read_interactions(path).columns
    ['user', 'item', 'timestamp', 'rating']
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    try:
        if path.suffix == ".parquet":
            frame = pl.read_parquet(path)
        else:
            frame = pl.read_csv(path, infer_schema_length=10_000)
    except pl.exceptions.PolarsError as error:
        raise DataError(f"{path}: cannot read interactions: {error}") from None
    given = {"user": user, "item": item, "timestamp": timestamp, "rating": rating}
    chosen = {}
    for role, name in given.items():
        if name is None:
            name = next((n for n in _INTERACTION_NAMES[role] if n in frame.columns), None)
        if name is None or name not in frame.columns:
            if role == "rating" and given[role] is None:
                continue
            raise DataError(
                f"{path}: no {role} column (looked for {name or ', '.join(_INTERACTION_NAMES[role])})"
            )
        chosen[role] = name
    frame = frame.select(pl.col(name).alias(role) for role, name in chosen.items())
    nulls = [c for c, n in zip(frame.columns, frame.null_count().row(0)) if n]
    if nulls:
        raise DataError(f"{path}: column {chosen[nulls[0]]!r} has null values")
    return frame


def _read_parquet(path: Path, columns: tuple[str, ...]) -> pl.DataFrame:
    try:
        frame = pl.read_parquet(path)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise DataError(f"{path}: cannot read Parquet: {error}") from None
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: lacks column(s) {', '.join(missing)}")
    return frame.select(columns)


def _read_predictions(path: Path) -> np.ndarray:
    data, (values,) = _fields(path, 1, "one score")
    values = values.cast(pl.Float64, strict=False)
    _fail_at(path, data, values.is_null() | values.is_nan(), "prediction is not a number")
    return values.to_numpy()


def _fields(path: Path, count: int, layout: str) -> tuple[bytes, list[pl.Series]]:
    """The first ``count`` whitespace-separated fields of each line: blank lines and lines
    starting with ``#`` are skipped, as trec_eval skips them, and fields after ``count`` are
    ignored (trec_eval ignores them in a run, but calls a qrels line with one malformed).

    Returns the file's text as read (for :func:`_fail_at` to name a line) and one string
    Series per field. Parsed by polars' CSV reader on single spaces: a line-by-line split takes
    seconds on a run of a few hundred thousand lines. A file spaced otherwise (tabs, runs of
    spaces, blank or short lines: a field comes out empty) is normalised first, which costs
    more than the parse itself, so single-spaced files skip it.
    """
    data = _read_bytes(path)
    frame = None if _has_other_whitespace(data) else _split(data, count)
    if frame is None or any(frame.null_count().row(0)):
        data = _single_spaced(data)
        frame = _split(data, count).filter(pl.col("field0").is_not_null())  # blank lines
    short = frame.select(pl.any_horizontal(pl.all().is_null())).to_series()
    _fail_at(path, data, short, f"expected {count} fields ({layout})")
    return data, frame.get_columns()


def _split(data: bytes, count: int) -> pl.DataFrame:
    """Columns ``field0`` ... of the single-spaced text; a missing field is null."""
    return pl.read_csv(
        data, has_header=False, separator=" ", quote_char=None, comment_prefix="#",
        schema={f"field{i}": pl.String for i in range(count)}, truncate_ragged_lines=True,
        extra_columns="ignore", missing_columns="insert", raise_if_empty=False,
    )


_OTHER_WHITESPACE = bytes.maketrans(b"\t\r\f\v", b"    ")


def _has_other_whitespace(data: bytes) -> bool:
    """Whether the text holds whitespace other than spaces and line breaks (a fast byte scan)."""
    return any(byte in data for byte in (b"\t", b"\r", b"\f", b"\v"))


def _single_spaced(data: bytes) -> bytes:
    """The text with fields separated by one space and no space at either end of a line;
    line breaks stay where they were, so line numbers hold."""
    data = data.translate(_OTHER_WHITESPACE)
    while b"  " in data:
        data = data.replace(b"  ", b" ")
    return data.replace(b"\n ", b"\n").replace(b" \n", b"\n").strip(b" ")


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except OSError as error:
        raise DataError(f"{path}: cannot read: {error.strerror}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    return data


def _fail_at(path: Path, data: bytes, bad: pl.Series, problem: str) -> None:
    """One error naming the line of the first bad row of ``_fields``' result."""
    if bad.any():
        lineno, line = _data_line(data, bad.arg_true()[0])
        raise DataError(f"{path}: line {lineno}: {problem}: {line[:80]!r}")


def _data_line(data: bytes, row: int) -> tuple[int, str]:
    """Number and text of the ``row``-th (0-based) line that is neither blank nor a comment."""
    rows = (item for item in enumerate(data.split(b"\n"), start=1)
            if item[1] and not item[1].startswith(b"#"))
    lineno, line = next(item for index, item in enumerate(rows) if index == row)
    return lineno, line.decode("utf-8")
