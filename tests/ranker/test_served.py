"""The NDCG of what was served: each event's logged positions and labels, under feco's declared
conventions, checked against `feco evaluate` on the same rows written as a TREC run and qrels;
the tie rule and the events without a relevant row; and through a day's publish."""

import contextlib
import io
import json
from datetime import date

import duckdb
import numpy as np
import polars as pl
import pytest

from feco import tasks
from feco.cli import main
from feco.ranker.daily import served_sums
from logbuilder import make_config, make_events, write_logs

DAY = date(2026, 1, 3)


def served_rows(events: int = 300, seed: int = 4) -> pl.DataFrame:
    """Events of 3-9 rows, their positions a shuffle of 1..n, graded labels 0-4 (some events
    with none relevant)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 10, events)
    qid = np.repeat(np.arange(events), sizes)
    position = np.concatenate([rng.permutation(n) + 1 for n in sizes])
    label = np.where(rng.random(len(qid)) < 0.3, rng.integers(1, 5, len(qid)), 0)
    return pl.DataFrame({"qid": qid, "label": label.astype(np.int64), "position": position,
                         "region": np.repeat(rng.choice(["DE", "US"], events), sizes)})


def evaluate_cli(tmp_path, frame: pl.DataFrame) -> dict:
    """`feco evaluate` on the rows as a TREC run (score: minus the position) and qrels."""
    rows = frame.with_row_index("doc")
    (tmp_path / "run.txt").write_text("".join(f"{q} Q0 d{d} {p} {-p} served\n" for q, d, p in
                                              rows.select("qid", "doc", "position").iter_rows()))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 d{d} {label}\n" for q, d, label in
                                                rows.select("qid", "doc", "label").iter_rows()))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                     "--metrics", "ndcg@4,ndcg@8", "--format", "json"]) == 0
    return json.loads(out.getvalue())


def test_served_ndcg_is_what_feco_evaluate_gives_the_same_rows_as_a_run(tmp_path):
    frame = served_rows()
    sums = served_sums(frame, segments=["region"]).row(by_predicate=pl.col("segment_dim") == "all", named=True)
    expected = evaluate_cli(tmp_path, frame)
    no_relevant = frame.group_by("qid").agg(pl.col("label").max()).filter(pl.col("label") == 0).height
    assert no_relevant > 0 and sums["queries_no_relevant"] == no_relevant
    assert sums["queries_evaluated"] == sums["queries"] - no_relevant
    for k in (4, 8):
        assert sums[f"ndcg{k}_sum"] / sums["queries_evaluated"] == pytest.approx(expected["metrics"][f"ndcg@{k}"],
                                                                                abs=1e-12)
    assert sums["events_tied"] == 0


def test_rows_sharing_a_position_are_tied_and_the_later_row_counts_as_shown_first():
    frame = pl.DataFrame({"qid": [1, 1, 1, 2, 2, 2], "label": [3, 0, 0, 0, 0, 3], "position": [1, 1, 2, 1, None, 2],
                          "region": ["DE"] * 6})
    sums = served_sums(frame, segments=[]).row(0, named=True)
    # event 1: the later of its two rows at position 1 (label 0) first, its relevant row second;
    # event 2: the row without a position last, after position 2 (relevant)
    assert sums["ndcg8_sum"] == pytest.approx(1 / np.log2(3) + 1 / np.log2(3))
    assert sums["events_tied"] == 2


def test_a_day_stores_its_served_ndcg_per_segment_without_a_model(tmp_path):
    config = make_config(tmp_path, ranker={"segments": ["region"]})
    write_logs(config.paths.logs, make_events(DAY, events=2000, seed=3))
    tasks.run_day(DAY, config, deliver=False)
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        served = conn.sql("SELECT segment_dim, segment_value, queries, ndcg8, model_ndcg8 FROM served_daily_ndcg "
                              "ORDER BY ALL").pl()
        events = conn.execute("SELECT events_sampled FROM runs").fetchone()[0]
    assert served["segment_value"].to_list() == ["all", "DE", "US"]
    assert served["queries"].to_list()[0] == events == sum(served["queries"].to_list()[1:])
    assert served["model_ndcg8"].is_null().all() and served["ndcg8"].is_not_null().all()
