"""Read LETOR / svmlight ranking files into polars frames.

A line is ``label qid:N i:v i:v ... # comment``: a relevance label, a query id, then feature
values by 1-based index in increasing order. Omitted features are implicit zeros (sparse
files); ``NULL`` (MQ2007-agg) and ``NaN`` mean "not available" and become null, so missing,
zero and non-zero stay apart. Sentinels such as TREC News' ``-1`` are data and are kept.
CRLF endings, tabs and blank lines are accepted. Without ``qid:`` tokens the query groups come
from a LightGBM-style ``<file>.query`` next to the file (one group size per line).

The parse is vectorised in polars and numpy (no Python loop per token); a malformed line is
one :class:`~feco.errors.DataError` naming the file and line number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from feco.errors import DataError, UsageError

FeatureNames = Sequence[str] | Mapping[int, str] | str | Path


def read_letor(
    source: str | Path | Sequence[str | Path],
    *,
    feature_names: FeatureNames | None = None,
    n_features: int | None = None,
    dtype: type[pl.Float64 | pl.Float32] = pl.Float64,
) -> pl.DataFrame:
    """Read one or more LETOR/svmlight files into one frame.

    Parameters
    ----------
    source
        A file or a sequence of files (e.g. the five MQ2008 partitions), read in order.
    feature_names
        Column names: a sequence (feature 1 first), a mapping ``{index: name}``, or the path
        of a JSON object ``{"1": "name", ...}``. By default a ``<stem>.features.json`` next
        to the first file is used when present, else ``f1 .. fN``.
    n_features
        Number of feature columns; by default the largest index in the files. Give it to
        keep the same columns across files that lack the last features.
    dtype
        ``pl.Float64`` (default) or ``pl.Float32`` for the feature columns.

    Returns
    -------
    polars.DataFrame
        ``qid`` (Int64), ``label`` (Int64 when every label is whole, else Float64), one
        column per feature, then ``docid`` (from ``docid = X`` in comments) and ``comment``
        when the lines have comments. Rows keep file order.

    Raises
    ------
    DataError
        A malformed line (naming file and line), or no query information.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.txt"
    >>> _ = path.write_text("2 qid:7 1:0.5 3:NULL # docid = d1\\r\\n0 qid:7 2:1.5 # docid = d2\\r\\n")
    >>> read_letor(path).select("qid", "label", "f1", "f2", "f3", "docid").rows()
    [(7, 2, 0.5, 0.0, None, 'd1'), (7, 0, 0.0, 1.5, 0.0, 'd2')]
    """
    paths = [Path(source)] if isinstance(source, (str, Path)) else [Path(p) for p in source]
    if not paths:
        raise UsageError("read_letor needs at least one file")
    parsed = []
    group_offset = 0
    for path in paths:
        part = _parse_file(path, group_offset)
        group_offset = int(part["qid"].max()) + 1 if part["from_query_file"] else group_offset
        parsed.append(part)
    width = max((p["max_index"] for p in parsed), default=0)
    if n_features is not None:
        too_wide = next((p for p in parsed if p["max_index"] > n_features), None)
        if too_wide is not None:
            raise DataError(
                f"{too_wide['path']}: feature index {too_wide['max_index']} exceeds "
                f"n_features={n_features}"
            )
        width = n_features
    names = _feature_names(feature_names, paths[0], width)
    has_comment = any(p["comment"] is not None for p in parsed)
    frames = [_to_frame(p, names, dtype, has_comment) for p in parsed]
    frame = pl.concat(frames, how="vertical")
    labels = frame.get_column("label")
    if (labels == labels.floor()).all():
        frame = frame.with_columns(pl.col("label").cast(pl.Int64))
    if has_comment and frame.get_column("docid").null_count() == frame.height:
        frame = frame.drop("docid")
    return frame


def read_query_file(path: str | Path) -> np.ndarray:
    """Read a LightGBM ``.query`` file: one group size per line, in row order.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "train.txt.query"
    >>> _ = path.write_text("3\\n2\\n")
    >>> read_query_file(path).tolist()
    [3, 2]
    """
    path = Path(path)
    sizes = []
    for number, line in enumerate(_read_text(path).splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        if not text.isdigit() or int(text) == 0:
            raise DataError(f"{path}: line {number}: expected a positive group size, got {text!r}")
        sizes.append(int(text))
    return np.asarray(sizes, dtype=np.int64)


def group_sizes(frame: pl.DataFrame, *, query: str = "qid") -> np.ndarray:
    """Sizes of the query groups in row order, as LightGBM's ``Dataset(group=...)`` wants.

    Raises
    ------
    DataError
        When a query's rows are not contiguous.

    Examples
    --------
    >>> import polars as pl
    >>> group_sizes(pl.DataFrame({"qid": [4, 4, 9, 9, 9]})).tolist()
    [2, 3]
    """
    runs = frame.get_column(query).rle()
    values = runs.struct.field("value")
    if values.is_duplicated().any():
        raise DataError(f"rows of a {query} are not contiguous: {values.filter(values.is_duplicated())[0]!r}")
    return runs.struct.field("len").to_numpy().astype(np.int64)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except UnicodeDecodeError as error:
        raise DataError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None


def _fail(path: Path, lines: pl.DataFrame, bad: pl.Series, problem: str) -> None:
    """Raise for the first line flagged in ``bad``, if any."""
    if bad.any():
        first = lines.filter(bad).row(0, named=True)
        raise DataError(f"{path}: line {first['lineno']}: {problem}: {first['line'][:80]!r}")


def _parse_file(path: Path, group_offset: int) -> dict:
    raw = pl.Series("line", _read_text(path).split("\n"))
    lines = (
        pl.DataFrame(raw)
        .with_row_index("lineno", offset=1)
        .with_columns(pl.col("line").str.strip_chars_end("\r"))
        .with_columns(pl.col("line").str.splitn("#", 2).alias("parts"))
        .with_columns(
            pl.col("parts").struct.field("field_0").str.replace_all(r"\s+", " ")
            .str.strip_chars().alias("body"),
            pl.col("parts").struct.field("field_1").str.strip_chars().alias("comment"),
        )
        .filter(pl.col("body") != "")
        .with_columns(pl.col("body").str.split(" ").alias("tokens"))
        .with_row_index("row")
    )
    if lines.height == 0:
        raise DataError(f"{path}: no data lines")
    tokens = lines.get_column("tokens")
    label = tokens.list.get(0).cast(pl.Float64, strict=False)
    _fail(path, lines, label.is_null() | label.is_nan(), "label is not a number")

    second = tokens.list.get(1, null_on_oob=True)
    has_qid = second.str.starts_with("qid:").fill_null(False)
    from_query_file = not has_qid.any()
    if from_query_file:
        qid = _qids_from_query_file(path, lines.height) + group_offset
        first_feature = 1
    else:
        _fail(path, lines, ~has_qid, "expected 'qid:N' after the label")
        qid_values = second.str.slice(4).cast(pl.Int64, strict=False)
        _fail(path, lines, qid_values.is_null(), "qid is not an integer")
        qid = qid_values.to_numpy()
        first_feature = 2

    features = (
        lines.select("row", pl.col("tokens").list.slice(first_feature).alias("token"))
        .explode("token")
        .drop_nulls("token")
    )
    pairs = features.get_column("token").str.split_exact(":", 1)
    index = pairs.struct.field("field_0").cast(pl.Int64, strict=False)
    text = pairs.struct.field("field_1")
    value = text.cast(pl.Float64, strict=False)
    is_null = text == "NULL"
    bad = (index.is_null() | (index < 1) | (value.is_null() & ~is_null)).fill_null(True)
    rows = features.get_column("row").to_numpy()
    if bad.any():
        row = int(rows[bad.to_numpy()][0])
        token = features.get_column("token").filter(bad)[0]
        _fail(path, lines, lines.get_column("row") == row, f"bad feature token {token!r}")
    idx = index.to_numpy()
    same_row = rows[1:] == rows[:-1]
    unordered = same_row & (idx[1:] <= idx[:-1])
    if unordered.any():
        row = int(rows[1:][unordered][0])
        _fail(path, lines, lines.get_column("row") == row,
              "feature indices must increase along a line")
    values = value.fill_null(np.nan).to_numpy()
    comments = lines.get_column("comment")
    return {
        "path": path,
        "n_rows": lines.height,
        "qid": qid,
        "from_query_file": from_query_file,
        "label": label.to_numpy(),
        "rows": rows,
        "index": idx,
        "values": values,
        "max_index": int(idx.max()) if len(idx) else 0,
        "comment": None if comments.null_count() == len(comments) else comments,
    }


def _qids_from_query_file(path: Path, n_rows: int) -> np.ndarray:
    query_path = Path(str(path) + ".query")
    if not query_path.exists():
        raise DataError(f"{path}: lines have no 'qid:' and there is no {query_path.name}")
    sizes = read_query_file(query_path)
    if sizes.sum() != n_rows:
        raise DataError(
            f"{query_path}: group sizes add up to {int(sizes.sum())}, {path.name} has {n_rows} rows"
        )
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def _to_frame(part: dict, names: list[str], dtype, has_comment: bool) -> pl.DataFrame:
    matrix = np.zeros((part["n_rows"], len(names)), dtype=np.float64)
    matrix[part["rows"], part["index"] - 1] = part["values"]
    columns = [
        pl.Series("qid", part["qid"], dtype=pl.Int64),
        pl.Series("label", part["label"]),
    ]
    columns += [
        pl.Series(name, matrix[:, j]).fill_nan(None).cast(dtype) for j, name in enumerate(names)
    ]
    frame = pl.DataFrame(columns)
    if has_comment:
        comment = part["comment"] if part["comment"] is not None else pl.Series(
            [None] * part["n_rows"], dtype=pl.String
        )
        frame = frame.with_columns(
            comment.str.extract(r"docid\s*=\s*(\S+)").alias("docid"),
            comment.alias("comment"),
        )
    return frame


def _feature_names(given: FeatureNames | None, first: Path, width: int) -> list[str]:
    names = [f"f{i}" for i in range(1, width + 1)]
    if given is None:
        beside = first.with_name(first.name.split(".")[0] + ".features.json")
        if not beside.exists():
            return names
        given = beside
    if isinstance(given, (str, Path)):
        try:
            loaded = json.loads(_read_text(Path(given)))
            given = {int(k): str(v) for k, v in loaded.items()}
        except (ValueError, AttributeError):
            raise DataError(f"{given}: expected a JSON object {{\"1\": \"name\", ...}}") from None
    mapping = dict(given) if isinstance(given, Mapping) else dict(enumerate(given, start=1))
    for index, name in mapping.items():
        if not 1 <= index <= width:
            raise UsageError(f"feature name {name!r} has index {index}, outside 1..{width}")
        names[index - 1] = name
    if len(set(names)) != len(names) or {"qid", "label", "docid", "comment"} & set(names):
        raise UsageError("feature names must be unique and differ from qid, label, docid, comment")
    return names
