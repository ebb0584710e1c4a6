"""The LETOR/svmlight loader, on the real datasets and on malformed input."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from feco.errors import DataError
from feco.evaluation.letor import group_sizes, read_letor, read_query_file


def _features(frame: pl.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in ("qid", "label", "docid", "comment")]


def test_mq2008_known_facts(data_dir: Path) -> None:
    frame = read_letor([data_dir / f"ltr/mq2008/S{i}.txt" for i in range(1, 6)])
    assert frame.height == 15_211
    assert frame.get_column("qid").n_unique() == 784
    features = _features(frame)
    assert features == [f"f{i}" for i in range(1, 47)]
    always_zero = [c for c in features if (frame.get_column(c) == 0).all()]
    assert always_zero == ["f6", "f7", "f8", "f9", "f10", "f43"]
    assert not any((frame.get_column(c) > 0).all() for c in features)
    assert frame.get_column("docid").null_count() == 0
    assert set(frame.get_column("label").unique()) == {0, 1, 2}
    single_label = frame.group_by("qid").agg(pl.col("label").n_unique() == 1)
    assert single_label.get_column("label").sum() == 220
    assert group_sizes(frame).sum() == frame.height


def test_mq2007_agg_keeps_null_apart_from_zero(data_dir: Path) -> None:
    paths = [data_dir / f"ltr/mq2007_agg/S{i}.txt" for i in range(1, 6)]
    assert b"\r\n" in paths[0].read_bytes()[:2000]
    start = time.perf_counter()
    frame = read_letor(paths)
    elapsed = time.perf_counter() - start
    assert frame.height == 69_623
    assert frame.get_column("qid").n_unique() == 1_692
    shares = [frame.get_column(c).null_count() / frame.height for c in _features(frame)]
    assert len(shares) == 21
    assert 0.22 <= min(shares) and max(shares) <= 0.78
    assert round(min(shares), 2) == 0.22 and round(max(shares), 2) == 0.77
    assert frame.get_column("docid").str.ends_with("\r").sum() == 0
    print(f"MQ2007-agg: {frame.height} rows in {elapsed:.2f}s")


def test_trec_news_names_sentinel_and_implicit_zeros(data_dir: Path) -> None:
    folder = data_dir / "ltr/trec_news_2018"
    frame = read_letor([folder / "trec_news_2018.train", folder / "trec_news_2018.test"])
    assert frame.height == 823
    assert frame.get_column("qid").n_unique() == 50
    assert _features(frame) == ["caption_count", "caption_partial", "caption_position",
                                "pagerank", "para-fraction"]
    sentinel = frame.get_column("caption_count")
    assert (sentinel == -1).sum() > 0
    assert (sentinel > 0).sum() < (sentinel != 0).sum()  # -1 counts under x != 0 only
    omitted = sum(" 2:" not in line for line in (folder / "trec_news_2018.train").read_text()
                  .splitlines() + (folder / "trec_news_2018.test").read_text().splitlines())
    assert omitted > 0
    assert (frame.get_column("caption_partial") == 0).sum() >= omitted
    assert frame.get_column("caption_partial").null_count() == 0


def test_webis_clueweb09_folds(data_dir: Path) -> None:
    frame = read_letor(sorted((data_dir / "ltr/webis_clueweb09").glob("fold*.test.txt")),
                       dtype=pl.Float32)
    assert frame.height == 26_646
    assert frame.get_column("qid").n_unique() == 61
    assert len(_features(frame)) == 42
    assert all(frame.schema[c] == pl.Float32 for c in _features(frame))
    assert frame.get_column("label").max() == 4


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 qid:1 1:0.5\n1 qid:1 2:x\n", r"line 2: bad feature token '2:x'"),
        ("1 qid:1 1:0.5\n1 qid:1 0:1\n", r"line 2: bad feature token '0:1'"),
        ("1 qid:1 3:0.5 2:1\n", r"line 1: feature indices must increase"),
        ("1 qid:1 1:0.5\n1 1:0.5\n", r"line 2: expected 'qid:N' after the label"),
        ("one qid:1 1:0.5\n", r"line 1: label is not a number"),
        ("1 qid:a 1:0.5\n", r"line 1: qid is not an integer"),
        ("1 1:0.5\n", r"lines have no 'qid:' and there is no tiny\.txt\.query"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "tiny.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=rf"tiny\.txt: {message}"):
        read_letor(path)


def test_query_files_give_groups_to_files_without_qid(tmp_path: Path) -> None:
    path = tmp_path / "train.txt"
    path.write_text("1 1:0.1\n0 2:0.2\n\n2 1:0.3 3:4\n")
    (tmp_path / "train.txt.query").write_text("2\n1\n")
    frame = read_letor(path, n_features=4)
    assert frame.get_column("qid").to_list() == [0, 0, 1]
    assert frame.columns == ["qid", "label", "f1", "f2", "f3", "f4"]
    assert frame.row(2) == (1, 2, 0.3, 0.0, 4.0, 0.0)
    assert read_query_file(tmp_path / "train.txt.query").tolist() == [2, 1]
    (tmp_path / "train.txt.query").write_text("2\n2\n")
    with pytest.raises(DataError, match="add up to 4"):
        read_letor(path)


def test_feature_names_and_width_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("1 qid:3 1:1 2:NaN # a comment without id\n")
    frame = read_letor(path, feature_names={2: "bm25"}, n_features=2)
    assert frame.columns == ["qid", "label", "f1", "bm25", "comment"]
    assert frame.get_column("bm25").to_list() == [None]
    with pytest.raises(DataError, match="exceeds n_features=1"):
        read_letor(path, n_features=1)


def test_group_sizes_need_contiguous_queries() -> None:
    assert group_sizes(pl.DataFrame({"qid": [2, 2, 1]})).tolist() == [2, 1]
    with pytest.raises(DataError, match="not contiguous"):
        group_sizes(pl.DataFrame({"qid": [2, 1, 2]}))


def test_dense_parse_matches_a_line_by_line_reading(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    lines, expected = [], []
    for row in range(300):
        present = np.sort(rng.choice(12, size=int(rng.integers(0, 12)), replace=False)) + 1
        values = {int(i): round(float(rng.normal()), 4) for i in present}
        lines.append(f"{row % 3} qid:{row // 7} " + " ".join(f"{i}:{v}" for i, v in values.items()))
        expected.append([values.get(i, 0.0) for i in range(1, 13)])
    path = tmp_path / "random.txt"
    path.write_text("\n".join(lines))
    frame = read_letor(path, n_features=12)
    assert frame.select(_features(frame)).to_numpy().tolist() == expected
