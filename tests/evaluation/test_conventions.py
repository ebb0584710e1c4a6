"""Each convention does what it declares: properties that hold for any run."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from feco.errors import DataError, UsageError
from feco.evaluation import Conventions, evaluate, evaluate_labelled

from .cases import per_query, random_case

STRICT_METRICS = ["ndcg@3", "ndcg", "dcg@5", "precision@2", "recall@4", "hit_rate@3", "mrr",
                  "map", "map@3", "r_precision", "candidate_recall@2"]
LINEAR_METRICS = ["ndcg@3", "ndcg", "dcg@5", "precision@2", "recall@4", "r_precision",
                  "candidate_recall@2"]


def _explicit_order(run: pl.DataFrame, ties: str) -> pl.DataFrame:
    """The same ranking with every tie broken by hand, so no tie rule is needed."""
    if ties == "input_order":
        tiebreak = -pl.int_range(pl.len()).cast(pl.Float64)
    else:
        tiebreak = pl.col("item").rank("dense", descending=ties == "item_asc").cast(pl.Float64)
    return run.with_columns((pl.col("score") * 1e6 + tiebreak).alias("score"))


def _same_values(a, b, metrics) -> None:
    for metric in metrics:
        left, right = per_query(a, metric), per_query(b, metric)
        assert left.keys() == right.keys()
        for query in left:
            assert left[query] == pytest.approx(right[query], abs=1e-12), (metric, query)


@pytest.mark.parametrize("ties", ["item_desc", "item_asc", "input_order"])
@pytest.mark.parametrize("seed", range(4))
def test_a_tie_rule_equals_breaking_the_ties_by_hand(ties: str, seed: int) -> None:
    run, qrels = random_case(seed, score_levels=3)
    conventions = Conventions().with_options(ties=ties)
    tied = evaluate(run, qrels, metrics=STRICT_METRICS, conventions=conventions)
    broken = evaluate(_explicit_order(run, ties), qrels, metrics=STRICT_METRICS,
                      conventions=conventions)
    _same_values(tied, broken, STRICT_METRICS)


@pytest.mark.parametrize("ties", ["item_desc", "item_asc", "average"])
def test_results_do_not_depend_on_row_order_except_for_input_order(ties: str) -> None:
    run, qrels = random_case(11, score_levels=2)
    metrics = LINEAR_METRICS if ties == "average" else STRICT_METRICS
    conventions = Conventions().with_options(ties=ties)
    shuffled = run.sample(fraction=1.0, shuffle=True, seed=3)
    _same_values(evaluate(run, qrels, metrics=metrics, conventions=conventions),
                 evaluate(shuffled, qrels, metrics=metrics, conventions=conventions), metrics)


@settings(max_examples=40, deadline=None)
@given(
    scores=st.lists(st.integers(0, 2), min_size=1, max_size=6),
    grades=st.lists(st.integers(0, 3), min_size=6, max_size=6),
)
def test_tie_averaging_is_the_mean_over_all_orders_of_the_ties(scores, grades) -> None:
    items = [f"d{i}" for i in range(len(scores))]
    run = pl.DataFrame({"query": ["q"] * len(items), "item": items,
                        "score": [float(s) for s in scores]})
    qrels = pl.DataFrame({"query": ["q"] * 6, "item": [f"d{i}" for i in range(6)],
                          "relevance": grades})
    averaged = evaluate(run, qrels, metrics=LINEAR_METRICS,
                        conventions=Conventions().with_options(ties="average", no_relevant="zero"))
    orders = [p for p in itertools.permutations(range(len(items)))
              if all(scores[p[i]] >= scores[p[i + 1]] for i in range(len(p) - 1))]
    totals = dict.fromkeys(LINEAR_METRICS, 0.0)
    for order in orders:
        explicit = run.with_columns(pl.Series("score", _positions_to_scores(order)))
        values = evaluate(explicit, qrels, metrics=LINEAR_METRICS,
                          conventions=Conventions().with_options(no_relevant="zero")).metrics
        for metric in LINEAR_METRICS:
            totals[metric] += values[metric]
    for metric in LINEAR_METRICS:
        assert averaged.metrics[metric] == pytest.approx(totals[metric] / len(orders), abs=1e-12)


def _positions_to_scores(order: tuple[int, ...]) -> list[float]:
    """Scores that rank row ``order[0]`` first, ``order[1]`` second, ..."""
    scores = [0.0] * len(order)
    for position, row in enumerate(order):
        scores[row] = float(len(order) - position)
    return scores


def test_no_relevant_policies_relate_as_declared() -> None:
    run, qrels = random_case(5, missing_share=0.0, empty_share=0.3)
    results = {
        policy: evaluate(run, qrels, metrics=STRICT_METRICS,
                         conventions=Conventions().with_options(no_relevant=policy))
        for policy in ("exclude", "zero", "one")
    }
    counts = results["exclude"].queries
    assert counts.no_relevant > 0
    assert counts.evaluated == counts.judged - counts.no_relevant
    assert results["zero"].queries.evaluated == results["one"].queries.evaluated == counts.judged
    for metric in STRICT_METRICS:
        kept = results["exclude"].metrics[metric] * counts.evaluated
        assert results["zero"].metrics[metric] * counts.judged == pytest.approx(kept)
        assert results["one"].metrics[metric] * counts.judged == pytest.approx(
            kept + counts.no_relevant)
    excluded = results["exclude"].per_query.filter(pl.col("status") == "no_relevant")
    assert excluded.height == counts.no_relevant
    assert excluded.get_column("recall@4").null_count() == excluded.height
    with pytest.raises(DataError, match="no relevant item"):
        evaluate(run, qrels, metrics=["recall@4"],
                 conventions=Conventions().with_options(no_relevant="error"))


def test_missing_queries_are_zero_or_dropped_and_counted() -> None:
    run, qrels = random_case(6, missing_share=0.3, empty_share=0.0, min_grade=1)
    zero = evaluate(run, qrels, metrics=STRICT_METRICS)
    drop = evaluate(run, qrels, metrics=STRICT_METRICS,
                    conventions=Conventions().with_options(missing_in_run="drop"))
    missing = zero.queries.missing_in_run
    assert missing == drop.queries.missing_in_run > 0
    assert zero.queries.evaluated == drop.queries.evaluated + missing
    for metric in STRICT_METRICS:
        assert zero.metrics[metric] * zero.queries.evaluated == pytest.approx(
            drop.metrics[metric] * drop.queries.evaluated)
    statuses = zero.per_query.filter(pl.col("status") == "missing_in_run")
    assert statuses.height == missing
    assert (statuses.get_column("ndcg@3") == 0).all()


def test_the_ideal_over_candidates_never_lowers_ndcg() -> None:
    run, qrels = random_case(7)
    judged = evaluate(run, qrels, metrics=["ndcg@5", "recall@5"],
                      conventions=Conventions().with_options(no_relevant="zero"))
    candidates = evaluate(run, qrels, metrics=["ndcg@5", "recall@5"],
                          conventions=Conventions().with_options(ideal="candidates",
                                                                 no_relevant="zero"))
    ours, theirs = per_query(judged, "ndcg@5"), per_query(candidates, "ndcg@5")
    assert all(theirs[q] >= ours[q] - 1e-12 for q in ours)
    assert any(theirs[q] > ours[q] for q in ours)
    assert candidates.queries.no_relevant >= judged.queries.no_relevant


def test_gains_agree_on_binary_labels_and_differ_on_grades() -> None:
    run, qrels = random_case(8, max_grade=1)
    values = {gain: evaluate(run, qrels, metrics=["ndcg@5", "dcg@5"],
                             conventions=Conventions().with_options(gain=gain)).metrics
              for gain in ("binary", "linear", "exp2")}
    assert values["linear"] == pytest.approx(values["binary"])
    assert values["exp2"] == pytest.approx(values["binary"])
    run, qrels = random_case(8, max_grade=3)
    graded = {gain: evaluate(run, qrels, metrics=["dcg@5"],
                             conventions=Conventions().with_options(gain=gain)).metrics["dcg@5"]
              for gain in ("binary", "linear", "exp2")}
    assert graded["binary"] < graded["linear"] < graded["exp2"]


def test_ap_divisor_min_relevant_k_only_differs_when_relevant_exceed_k() -> None:
    run, qrels = random_case(9)
    full = evaluate(run, qrels, metrics=["map@2"])
    capped = evaluate(run, qrels, metrics=["map@2"],
                      conventions=Conventions().with_options(ap_divisor="min_relevant_k"))
    counts = dict(zip(full.per_query.get_column("query"), full.per_query.get_column("n_relevant")))
    ours, theirs = per_query(full, "map@2"), per_query(capped, "map@2")
    for query in ours:
        if counts[query] <= 2:
            assert theirs[query] == pytest.approx(ours[query])
        else:
            assert theirs[query] == pytest.approx(ours[query] * counts[query] / 2)


def test_relevance_level_sets_what_binary_metrics_count() -> None:
    run, qrels = random_case(10, max_grade=3)
    level2 = Conventions().with_options(relevance_level=2)
    strict = evaluate(run, qrels, metrics=["recall@20"], conventions=level2)
    as_binary = evaluate(run, qrels.with_columns((pl.col("relevance") >= 2).cast(pl.Int64)),
                         metrics=["recall@20"])
    assert strict.metrics == as_binary.metrics
    assert strict.queries == as_binary.queries


@pytest.mark.parametrize("metric", ["mrr@5", "map", "hit_rate@3", "coverage@3"])
def test_metrics_without_a_tie_average_refuse_averaged_ties(metric: str) -> None:
    run, qrels = random_case(1)
    with pytest.raises(UsageError, match="tie-averaged"):
        evaluate(run, qrels, metrics=[metric], conventions="sklearn")


def test_candidate_recall_refuses_an_ideal_over_candidates() -> None:
    run, qrels = random_case(1)
    with pytest.raises(UsageError, match="candidates only"):
        evaluate(run, qrels, metrics=["candidate_recall"], conventions="lightgbm")


def test_candidate_recall_ignores_order_and_divides_by_all_judged_relevant() -> None:
    run, qrels = random_case(12, min_grade=1, empty_share=0.0)
    shuffled_scores = run.with_columns(pl.Series("score", np.random.default_rng(0).random(run.height)))
    a = evaluate(run, qrels, metrics=["candidate_recall", "recall"])
    b = evaluate(shuffled_scores, qrels, metrics=["candidate_recall"])
    assert a.metrics["candidate_recall"] == b.metrics["candidate_recall"] == a.metrics["recall"]


def test_string_ids_and_integer_ids_in_the_same_order_agree() -> None:
    run, qrels = random_case(13, score_levels=2)
    padded = [pl.col(c).str.slice(1).cast(pl.Int64) for c in ("query", "item")]
    as_int = (run.with_columns(padded), qrels.with_columns(padded))
    as_padded = tuple(f.with_columns(pl.format("x{}", pl.col("item").cast(pl.String)
                                               .str.zfill(6)).alias("item")) for f in as_int)
    for ties in ("item_desc", "item_asc", "input_order"):
        conventions = Conventions().with_options(ties=ties)
        left = evaluate(*as_int, metrics=STRICT_METRICS, conventions=conventions)
        right = evaluate(*as_padded, metrics=STRICT_METRICS, conventions=conventions)
        assert left.metrics == pytest.approx(right.metrics)


def test_a_mean_over_no_query_is_none_not_a_number() -> None:
    run = pl.DataFrame({"query": [1], "item": [1], "score": [1.0]})
    qrels = pl.DataFrame({"query": [1], "item": [1], "relevance": [0]})
    result = evaluate(run, qrels, metrics=["recall@5"])
    assert result.metrics == {"recall@5": None}
    assert result.queries.evaluated == 0 and result.queries.no_relevant == 1


def test_coverage_matches_a_sorted_top_k() -> None:
    run, qrels = random_case(14, score_levels=3, n_items=60)
    catalogue = [f"d{i}" for i in range(80)]
    result = evaluate(run, qrels, metrics=["coverage@3"], catalogue=catalogue)
    top = run.sort(["query", "score", "item"], descending=[False, True, True]) \
        .group_by("query", maintain_order=True).head(3)
    assert result.metrics["coverage@3"] == top.get_column("item").n_unique() / 80
    assert result.catalogue == {"size": 80, "queries": run.get_column("query").n_unique()}


def test_segments_report_the_same_means_as_evaluating_each_segment() -> None:
    run, qrels = random_case(15)
    segments = qrels.select("query").unique().with_columns(
        pl.when(pl.col("query").str.slice(1).cast(pl.Int64) % 2 == 0)
        .then(pl.lit("even")).otherwise(pl.lit("odd")).alias("segment"))
    whole = evaluate(run, qrels, metrics=["ndcg@3", "recall@4"])
    table = whole.by(segments)
    for segment in ("even", "odd"):
        queries = segments.filter(pl.col("segment") == segment).get_column("query").implode()
        alone = evaluate(run, qrels.filter(pl.col("query").is_in(queries)),
                         metrics=["ndcg@3", "recall@4"])
        row = table.filter(pl.col("segment") == segment).row(0, named=True)
        assert row["ndcg@3"] == pytest.approx(alone.metrics["ndcg@3"])
        assert row["evaluated"] == alone.queries.evaluated
        assert row["no_relevant"] == alone.queries.no_relevant


def test_labelled_frames_follow_row_order_for_input_order_ties() -> None:
    frame = pl.DataFrame({"qid": [1, 1, 1], "label": [1, 0, 0], "score": [0.5, 0.5, 0.5]})
    first = evaluate_labelled(frame, metrics=["mrr"], conventions="lightgbm")
    last = evaluate_labelled(frame.reverse(), metrics=["mrr"], conventions="lightgbm")
    assert first.metrics["mrr"] == 1.0
    assert last.metrics["mrr"] == pytest.approx(1 / 3)
    # Without an item column the row position is the item: item_desc puts later rows first.
    assert evaluate_labelled(frame, metrics=["mrr"]).metrics["mrr"] == pytest.approx(1 / 3)
    named = frame.with_columns(pl.Series("docid", ["c", "b", "a"]))
    assert evaluate_labelled(named, metrics=["mrr"], item="docid").metrics["mrr"] == 1.0


@pytest.mark.parametrize(
    ("run", "qrels", "message"),
    [
        (pl.DataFrame({"query": [1, 1], "item": [1, 1], "score": [0.1, 0.2]}),
         pl.DataFrame({"query": [1], "item": [1], "relevance": [1]}), "more than once"),
        (pl.DataFrame({"query": [1], "item": [1], "score": [0.1]}),
         pl.DataFrame({"query": [1, 1], "item": [1, 1], "relevance": [1, 0]}), "more than once"),
        (pl.DataFrame({"query": [1], "item": [1], "score": [float("nan")]}),
         pl.DataFrame({"query": [1], "item": [1], "relevance": [1]}), "NaN"),
        (pl.DataFrame({"query": [1], "item": [None], "score": [0.1]}),
         pl.DataFrame({"query": [1], "item": [1], "relevance": [1]}), "null"),
        (pl.DataFrame({"query": [1], "doc": [1], "score": [0.1]}),
         pl.DataFrame({"query": [1], "item": [1], "relevance": [1]}), "lacks column"),
    ],
)
def test_bad_frames_are_data_errors(run, qrels, message) -> None:
    with pytest.raises(DataError, match=message):
        evaluate(run, qrels, metrics=["ndcg@3"])


def test_duplicate_string_items_are_found() -> None:
    run = pl.DataFrame({"query": ["a", "a", "b"], "item": ["x", "x", "x"], "score": [1.0, 2, 3]})
    qrels = pl.DataFrame({"query": ["a"], "item": ["x"], "relevance": [1]})
    with pytest.raises(DataError, match="'x' more than once for query 'a'"):
        evaluate(run, qrels, metrics=["ndcg@3"])


def test_string_ids_sharing_a_hash_are_told_apart(monkeypatch) -> None:
    # A hash that maps every id to 0: each query's items all collide, the reported duplicates
    # are not duplicates of the ids, and ranking falls back to exact codes.
    run, qrels = random_case(16)
    metrics = ["ndcg@3", "map", "mrr", "recall@4"]
    expected = evaluate(run, qrels, metrics=metrics)
    monkeypatch.setattr(pl.Series, "hash", lambda s, seed=0: pl.Series(np.zeros(len(s), np.uint64)))
    collided = evaluate(run, qrels, metrics=metrics)
    assert collided.metrics == expected.metrics
    assert collided.per_query.equals(expected.per_query)
    dup_run = pl.DataFrame({"query": ["a", "a"], "item": ["x", "x"], "score": [1.0, 2]})
    with pytest.raises(DataError, match="'x' more than once for query 'a'"):
        evaluate(dup_run, qrels.head(1).with_columns(pl.lit("a").alias("query")),
                 metrics=["ndcg@3"])


def test_unknown_conventions_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown preset"):
        evaluate(pl.DataFrame(), pl.DataFrame(), conventions="nope")
    with pytest.raises(UsageError, match="not one of"):
        Conventions(gain="cubic")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown convention"):
        Conventions().with_options(colour="blue")
