"""Offline protocols on the MovieLens log and on small logs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from feco.errors import UsageError
from feco.evaluation import evaluate
from feco.evaluation import protocols as p
from feco.evaluation.io import read_interactions


@pytest.fixture(scope="module")
def log(data_dir: Path) -> pl.DataFrame:
    return read_interactions(data_dir / "interactions/movielens_latest_small/ratings.csv")


@pytest.fixture(scope="module")
def loo(log: pl.DataFrame) -> p.Split:
    return p.leave_one_out(log)


def test_leave_one_out_holds_out_each_users_newest_interaction(log, loo) -> None:
    newest = log.group_by("user").agg(pl.col("timestamp").max())
    held = loo.truth.rename({"query": "user"}).join(log, on=["user", "item"])
    assert held.height == loo.truth.height == 610 == loo.protocol["test_users"]
    assert held.select("user", "timestamp").sort("user").equals(newest.sort("user"))
    assert loo.train.height + loo.truth.height == log.height
    assert loo.train.join(loo.truth.rename({"query": "user"}), on=["user", "item"],
                          how="semi").height == 0
    assert loo.history.height == loo.train.height  # every user is a test user here


def test_leave_one_out_declares_and_counts_timestamp_ties(log, loo) -> None:
    tied = log.filter(pl.col("timestamp") == pl.col("timestamp").max().over("user")) \
        .group_by("user").len().filter(pl.col("len") > 1).height
    assert loo.protocol["tied_newest"] == tied == 94  # the data README's fact
    other = p.leave_one_out(log, ties="item_desc")
    changed = loo.truth.join(other.truth, on="query", suffix="_other") \
        .filter(pl.col("item") != pl.col("item_other"))
    assert changed.height == tied
    largest = log.filter(pl.col("timestamp") == pl.col("timestamp").max().over("user")) \
        .group_by("user").agg(pl.col("item").max())
    assert loo.truth.select(pl.col("query").alias("user"), "item").sort("user").equals(
        largest.sort("user"))


def test_leave_one_out_with_a_rating_threshold_keeps_negatives_in_training(log) -> None:
    split = p.leave_one_out(log, min_rating=4.5)
    positives = log.filter(pl.col("rating") >= 4.5).group_by("user").len()
    assert split.protocol["test_users"] == positives.filter(pl.col("len") >= 2).height
    assert split.protocol["skipped_users"] == 610 - split.protocol["test_users"]
    held = split.truth.rename({"query": "user"}).join(log, on=["user", "item"])
    assert (held.get_column("rating") >= 4.5).all()
    assert split.train.height + split.truth.height == log.height


def test_personalize_split_keeps_test_users_out_of_training(log) -> None:
    split = p.personalize_split(log, seed=7)
    test_users = split.truth.get_column("query").unique()
    assert split.protocol["test_users"] == test_users.len() == round(0.1 * 610)
    assert split.train.filter(pl.col("user").is_in(test_users.implode())).height == 0
    counts = log.filter(pl.col("user").is_in(test_users.implode())).group_by("user").len()
    truth = split.truth.group_by("query").len().rename({"query": "user", "len": "truth"})
    history = split.history.group_by("user").len().rename({"len": "history"})
    sizes = counts.join(truth, on="user").join(history, on="user")
    assert (sizes.get_column("truth") == (sizes.get_column("len") * 0.1).ceil()).all()
    assert (sizes.get_column("truth") + sizes.get_column("history") == sizes.get_column("len")).all()
    times = split.truth.rename({"query": "user"}).join(log, on=["user", "item"]) \
        .group_by("user").agg(pl.col("timestamp").min().alias("first_truth"))
    last_input = split.history.join(log, on=["user", "item"]).group_by("user") \
        .agg(pl.col("timestamp").max().alias("last_input"))
    assert (times.join(last_input, on="user")
            .select(pl.col("first_truth") >= pl.col("last_input")).to_series().all())
    again = p.personalize_split(log, seed=7)
    assert again.truth.equals(split.truth)
    assert not p.personalize_split(log, seed=8).truth.equals(split.truth)


@pytest.mark.parametrize("rounding", ["ceil", "floor", "round"])
def test_personalize_rounding_is_declared_and_bounded(rounding: str) -> None:
    log = pl.DataFrame({"user": [1] * 25 + [2] * 2, "item": list(range(27)),
                        "timestamp": list(range(27))})
    split = p.personalize_split(log, test_users=0.9, rounding=rounding)
    truth = dict(split.truth.group_by("query").len().iter_rows())
    expected = {"ceil": math.ceil(2.5), "floor": math.floor(2.5), "round": round(2.5)}[rounding]
    assert truth[1] == expected
    assert truth[2] == 1  # at least one truth and one input interaction
    assert split.protocol["rounding"] == rounding


def test_global_split_counts_cold_start_users(log) -> None:
    split = p.split_at(log, "2017-01-01")
    bound = 1483228800  # 2017-01-01T00:00:00Z
    assert (split.train.get_column("timestamp") < bound).all()
    truth = split.truth.rename({"query": "user"}).join(log, on=["user", "item"])
    assert (truth.get_column("timestamp") >= bound).all()
    new_users = set(truth.get_column("user")) - set(split.train.get_column("user"))
    assert split.protocol["cold_start_users"] == len(new_users) > 0
    strict = p.split_at(log, "2017-01-01", min_history=1)
    assert strict.protocol["test_users"] == split.protocol["test_users"] - len(new_users)


def test_candidates_exclude_seen_items_and_are_shared_by_the_baselines(loo) -> None:
    pool = p.candidates(loo)
    per_user = pool.frame.group_by("query").len()
    seen = loo.history.group_by("user").len()
    sizes = per_user.join(seen, left_on="query", right_on="user")
    assert (sizes.get_column("len") + sizes.get_column("len_right") == 9_724).all()
    assert pool.frame.join(loo.history.rename({"user": "query"}), on=["query", "item"],
                           how="semi").height == 0
    assert pool.qrels.height == loo.truth.height and pool.truth_seen_before == 0
    for run in (p.random_baseline(pool), p.popularity_baseline(pool, loo.train)):
        assert run.select("query", "item").equals(pool.frame)
    assert "9724" in pool.problem


def test_sampled_negatives_are_labelled_as_a_different_problem(loo) -> None:
    pool = p.candidates(loo, sampled_negatives=99, seed=1)
    assert (pool.frame.group_by("query").len().get_column("len") == 100).all()
    assert pool.frame.join(pool.qrels, on=["query", "item"], how="semi").height == 610
    assert "different, easier problem" in pool.problem
    with pytest.raises(UsageError):
        p.candidates(loo, sampled_negatives=0)


def test_random_baseline_is_at_chance_level(loo) -> None:
    pool = p.candidates(loo, sampled_negatives=99, seed=2)
    rates = [
        evaluate(p.random_baseline(pool, seed=seed), pool.qrels,
                 metrics=["hit_rate@10"]).metrics["hit_rate@10"]
        for seed in range(5)
    ]
    # One held-out item among 100 candidates: hit rate@10 is 0.1 in expectation.
    assert np.mean(rates) == pytest.approx(0.1, abs=4 * math.sqrt(0.09 / (5 * 610)))


def test_most_popular_beats_chance_on_movielens(loo) -> None:
    pool = p.candidates(loo)
    metrics = ["hit_rate@10", "ndcg@10", "coverage@10"]
    random = evaluate(p.random_baseline(pool), pool.qrels, metrics=metrics,
                      catalogue=loo.catalogue)
    popular = evaluate(p.popularity_baseline(pool, loo.train), pool.qrels, metrics=metrics,
                       catalogue=loo.catalogue)
    assert popular.metrics["hit_rate@10"] > 5 * random.metrics["hit_rate@10"]
    assert popular.metrics["coverage@10"] < random.metrics["coverage@10"]
    assert popular.queries.evaluated == random.queries.evaluated == 610


def test_history_segments_follow_the_bounds(loo) -> None:
    segments = p.history_segments(loo, bounds=(5, 20, 100))
    assert segments.height == 610
    for name, low, high in [("sparse", 5, 20), ("regular", 20, 100), ("heavy", 100, 10**9)]:
        rows = segments.filter(pl.col("segment") == name).get_column("history")
        assert rows.len() > 0 and rows.min() >= low and rows.max() < high
    with pytest.raises(UsageError):
        p.history_segments(loo, bounds=(5, 5, 100))


def test_seen_ground_truth_is_dropped_and_counted() -> None:
    log = pl.DataFrame({"user": [1, 1, 1], "item": [7, 8, 7], "timestamp": [1, 2, 3]})
    pool = p.candidates(p.leave_one_out(log), catalogue=pl.Series([7, 8, 9]))
    assert pool.truth_seen_before == 1 and pool.qrels.height == 0
