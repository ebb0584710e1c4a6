"""Readers of TREC files, Parquet frames, svmlight + predictions and interaction logs."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from feco.errors import DataError
from feco.evaluation import evaluate
from feco.evaluation.io import (
    read_interactions,
    read_qrels,
    read_run,
    read_svmlight_run,
    read_trec_qrels,
    read_trec_run,
)

from .cases import random_case


def _write_trec(run: pl.DataFrame, qrels: pl.DataFrame, folder: Path) -> tuple[Path, Path]:
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run_path.write_text("".join(
        f"{q}\tQ0  {i} {r} {s!r} tag\n"
        for r, (q, i, s) in enumerate(run.iter_rows(), start=1)))
    qrels_path.write_text("".join(f"{q} 0 {i} {g}\r\n" for q, i, g in qrels.iter_rows()))
    return run_path, qrels_path


def test_trec_files_round_trip_to_the_same_evaluation(tmp_path: Path) -> None:
    run, qrels = random_case(3)
    run_path, qrels_path = _write_trec(run, qrels, tmp_path)
    assert read_trec_run(run_path).equals(run)
    assert read_trec_qrels(qrels_path).equals(qrels)
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    from_text = evaluate(read_run(run_path), read_qrels(qrels_path), metrics=["ndcg@5", "map"])
    from_parquet = evaluate(read_run(tmp_path / "run.parquet"),
                            read_qrels(tmp_path / "qrels.parquet"), metrics=["ndcg@5", "map"])
    assert from_text.metrics == from_parquet.metrics


def test_single_spaced_trec_files_round_trip_too(tmp_path: Path) -> None:
    run, qrels = random_case(3)
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("".join(f"{q} Q0 {i} {r} {s!r} tag\n"
                                for r, (q, i, s) in enumerate(run.iter_rows(), start=1)))
    qrels_path.write_text("".join(f"{q} 0 {i} {g}\n" for q, i, g in qrels.iter_rows()))
    assert read_trec_run(run_path).equals(run)
    assert read_trec_qrels(qrels_path).equals(qrels)


def test_blank_lines_and_runs_of_spaces_in_a_single_spaced_file(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 0.5 t\n\n1 Q0 b 2 0.25 t\n1  Q0 c 3 0.125 t\n")
    assert read_trec_run(path).rows() == [("1", "a", 0.5), ("1", "b", 0.25), ("1", "c", 0.125)]


def test_comment_lines_are_skipped_and_trailing_fields_ignored(tmp_path: Path):
    # as trec_eval reads a run; it refuses a qrels line with a fifth field, feco ignores it
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("# run of 2026-03-01\n1 Q0 a 1 0.5 bm25 extra\n  # indented comment\n"
                        "1 Q0 b 2 0.25 bm25\t# trailing note\n")
    qrels_path.write_text("#query iter item grade\n1 0 a 2 assessor-7\n1 0 b 0\n")
    assert read_trec_run(run_path).rows() == [("1", "a", 0.5), ("1", "b", 0.25)]
    assert read_trec_qrels(qrels_path).rows() == [("1", "a", 2), ("1", "b", 0)]


@pytest.mark.parametrize(
    ("reader", "text", "message"),
    [
        (read_trec_run, "1 Q0 a 1 0.5 t\n\n1 Q0 b 2 high t\n", r"line 3: score is not a number"),
        (read_trec_run, "1 Q0 a 1 0.5 t\n1 Q0 b 2 0.4\n", r"line 2: expected 6 fields"),
        (read_trec_qrels, "1 0 a 1\n1 0 b one\n", r"line 2: relevance is not an integer"),
        (read_trec_qrels, "1 0 a\n", r"line 1: expected 4 fields"),
        (read_trec_qrels, "# c\n\n1 0 a 1\n# c\n1 0 b\n", r"line 5: expected 4 fields"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path: Path, reader, text: str, message: str):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=rf"bad\.txt: {message}"):
        reader(path)


def test_svmlight_with_predictions_uses_docids_and_checks_counts(tmp_path: Path) -> None:
    data = tmp_path / "test.txt"
    data.write_text("2 qid:1 1:0.1 # docid = a\n0 qid:1 1:0.2 # docid = b\n"
                    "1 qid:2 1:0.3 # docid = c\n")
    predictions = tmp_path / "pred.txt"
    predictions.write_text("0.1\n0.9\n0.5\n")
    run, qrels = read_svmlight_run(data, predictions)
    assert run.get_column("item").to_list() == ["a", "b", "c"]
    assert qrels.get_column("relevance").to_list() == [2, 0, 1]
    result = evaluate(run, qrels, metrics=["mrr"])
    assert result.metrics["mrr"] == pytest.approx((1 / 2 + 1) / 2)
    predictions.write_text("0.1\n0.9\n")
    with pytest.raises(DataError, match="2 predictions for 3 rows"):
        read_svmlight_run(data, predictions)
    predictions.write_text("0.1\nx\n0.3\n")
    with pytest.raises(DataError, match=r"pred\.txt: line 2: prediction is not a number"):
        read_svmlight_run(data, predictions)


def test_interactions_find_movielens_columns(data_dir: Path) -> None:
    log = read_interactions(data_dir / "interactions/movielens_latest_small/ratings.csv")
    assert log.columns == ["user", "item", "timestamp", "rating"]
    assert log.height == 100_836
    assert log.get_column("user").n_unique() == 610
    assert log.get_column("item").n_unique() == 9_724


def test_interactions_without_a_user_column_are_a_data_error(tmp_path: Path) -> None:
    path = tmp_path / "log.csv"
    path.write_text("who,item,timestamp\n1,2,3\n")
    with pytest.raises(DataError, match="no user column"):
        read_interactions(path)
    assert read_interactions(path, user="who").columns == ["user", "item", "timestamp"]
