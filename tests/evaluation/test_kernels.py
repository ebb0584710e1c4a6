"""The NumPy kernels (what `feco evaluate` uses) give exactly the numba kernels' results: the
same ranks, the same per-query values to the last bit, the same errors."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from feco.errors import DataError, UsageError
from feco.evaluation import PRESETS, Conventions, evaluate
from feco.evaluation.metrics import check_supported, parse_metric
from feco.evaluation.ranked import rank_judgments

from .cases import random_case

METRICS = ("ndcg", "ndcg@3", "dcg@5", "precision@3", "recall@5", "hit_rate@2", "r_precision",
           "candidate_recall@4", "mrr", "mrr@3", "map", "map@4", "coverage@2")
SHAPES = {
    "short lists, four score levels": {},
    "long lists, many judged, many ties": {"n_queries": 30, "max_list": 60, "n_items": 80,
                                           "max_judged": 70, "score_levels": 3, "min_grade": -1},
    "long lists, distinct scores": {"n_queries": 30, "max_list": 60, "n_items": 80, "max_judged": 70,
                                    "score_levels": None},
}


def _integer_ids(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col("item").str.slice(1).cast(pl.Int64))


def _supported(conventions: Conventions) -> list[str]:
    out = []
    for metric in METRICS:
        try:
            check_supported(parse_metric(metric), conventions)
        except UsageError:
            continue
        out.append(metric)
    return out


@pytest.mark.parametrize("ids", ["string", "integer"])
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("preset", list(PRESETS))
def test_numpy_kernels_match_numba_exactly(preset: str, shape: str, ids: str) -> None:
    conventions = Conventions.preset(preset)
    for seed in range(2):
        run, qrels = random_case(seed, **SHAPES[shape])
        if ids == "integer":
            run, qrels = _integer_ids(run), _integer_ids(qrels)
        compiled, vectorised = (
            evaluate(run, qrels, metrics=_supported(conventions), conventions=conventions,
                     kernels=kernels)
            for kernels in ("numba", "numpy")
        )
        assert vectorised.metrics == compiled.metrics
        assert vectorised.per_query.equals(compiled.per_query, null_equal=True)


@pytest.mark.parametrize("ties", ["item_desc", "item_asc", "input_order", "average"])
def test_numpy_kernels_rank_every_judged_item_as_numba_does(ties: str) -> None:
    run, qrels = random_case(7, n_queries=40, max_list=40, n_items=50, max_judged=30,
                             score_levels=2)
    compiled, vectorised = (rank_judgments(run, qrels, ties=ties, kernels=k)
                            for k in ("numba", "numpy"))
    for name in ("match", "before", "tied"):
        assert getattr(vectorised, name).tolist() == getattr(compiled, name).tolist(), name


@pytest.mark.parametrize("kernels", ["numba", "numpy"])
def test_an_item_ranked_twice_is_the_same_error(kernels: str) -> None:
    run = pl.DataFrame({"query": ["a", "b", "b", "b"], "item": ["x", "y", "z", "y"],
                        "score": [1.0, 2.0, 1.0, 0.5]})
    qrels = pl.DataFrame({"query": ["a", "b"], "item": ["x", "y"], "relevance": [1, 1]})
    with pytest.raises(DataError, match="run ranks item 'y' more than once for query 'b'"):
        evaluate(run, qrels, kernels=kernels)
    with pytest.raises(DataError, match="qrels judge item 'x' of query 'a' more than once"):
        evaluate(run.filter(pl.col("query") == "a"), pl.concat([qrels, qrels.head(1)]),
                 kernels=kernels)


def test_unknown_kernels_are_a_usage_error() -> None:
    run = pl.DataFrame({"query": [1], "item": [1], "score": [1.0]})
    qrels = pl.DataFrame({"query": [1], "item": [1], "relevance": [1]})
    with pytest.raises(UsageError, match="unknown kernels 'cuda'"):
        evaluate(run, qrels, kernels="cuda")


def test_feco_evaluate_does_not_import_numba(tmp_path) -> None:
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.5 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    script = ("import sys; from feco.cli import main; "
              f"main(['evaluate', '--qrels', {str(tmp_path / 'qrels.txt')!r}, "
              f"'--run', {str(tmp_path / 'run.txt')!r}, '--format', 'json']); "
              "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True,
                         text=True).stdout.splitlines()
    assert '"mrr@10": 0.5' in out[0]  # tied: item ids descending put a second
    assert out[-1] == "False"


def _with_shuffled_duplicate(frame: pl.DataFrame, seed: int) -> tuple[pl.DataFrame, str, str]:
    """``frame`` with one row's (query, item) repeated elsewhere in its query, rows shuffled so
    the two are not next to each other; the repeated query and item."""
    rng = np.random.default_rng(seed)
    sizes = frame.group_by("query").len().filter(pl.col("len") >= 2).sort("query")
    query = sizes.get_column("query")[int(rng.integers(sizes.height))]
    row = frame.filter(pl.col("query") == query).sample(1, seed=seed)
    doubled = pl.concat([frame, row.with_columns(pl.col(row.columns[-1]) + 1)])
    for attempt in range(100):
        shuffled = doubled.sample(fraction=1.0, shuffle=True, seed=seed * 100 + attempt)
        places = shuffled.with_row_index().filter((pl.col("query") == query) & (pl.col("item") == row["item"][0]))
        if places["index"].diff().drop_nulls().item() > 1:  # not adjacent
            return shuffled, query, row["item"][0]
    raise AssertionError("no shuffle kept the duplicates apart")


@pytest.mark.parametrize("kernels", ["numba", "numpy"])
@pytest.mark.parametrize("ids", ["string", "integer"])
@pytest.mark.parametrize("side", ["qrels", "run"])
def test_a_duplicate_anywhere_in_its_query_is_refused_by_every_kernel(kernels, ids, side):
    """Judgments or a run that repeat an item of a query, in any row order, are an error on every
    path: both kernels, exact integer keys and hashed string ids."""
    for seed in range(5):
        run, qrels = random_case(seed)
        if ids == "integer":
            run, qrels = _integer_ids(run), _integer_ids(qrels)
        if side == "qrels":
            qrels, query, item = _with_shuffled_duplicate(qrels, seed)
            message = f"qrels judge item {item!r} of query {query!r} more than once"
        else:
            run, query, item = _with_shuffled_duplicate(run, seed)
            message = f"run ranks item {item!r} more than once for query {query!r}"
        with pytest.raises(DataError, match=re.escape(message)):
            evaluate(run, qrels, metrics=["map", "ndcg@5"], kernels=kernels)


def test_the_issues_unsorted_judgments_are_refused_from_the_command_line(tmp_path, capsys) -> None:
    """qrels `1 0 a 1`, `1 0 b 1`, `1 1 a 0`: item a judged twice, not on adjacent lines
    (MAP 1.0 and exit 0 before; trec_eval refuses such judgments too)."""
    from feco.cli import main

    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 1\n1 1 a 0\n")
    (tmp_path / "run.txt").write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    assert main(["evaluate", "--qrels", str(tmp_path / "qrels.txt"), "--run", str(tmp_path / "run.txt"),
                 "--metrics", "map"]) == 1
    assert capsys.readouterr().err.strip() == "feco: error: qrels judge item 'a' of query '1' more than once"
