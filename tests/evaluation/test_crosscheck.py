"""Each preset reproduces its tool exactly, per query, on random runs with the awkward cases:
ties, queries without a relevant item, queries judged but missing from the run, cut-offs
longer than the list, judged items never retrieved, negative grades."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from feco.evaluation import evaluate, evaluate_labelled

from .cases import as_dicts, per_query, random_case

pytrec_eval = pytest.importorskip("pytrec_eval")

SEEDS = range(5)
TREC_NAMES = {
    "ndcg": "ndcg", "ndcg@1": "ndcg_cut_1", "ndcg@5": "ndcg_cut_5", "ndcg@20": "ndcg_cut_20",
    "precision@1": "P_1", "precision@5": "P_5", "precision@20": "P_20",
    "recall@5": "recall_5", "recall@20": "recall_20", "hit_rate@5": "success_5",
    "mrr": "recip_rank", "map": "map", "map@5": "map_cut_5", "map@20": "map_cut_20",
    "r_precision": "Rprec",
}
TREC_MEASURES = {"ndcg", "ndcg_cut.1,5,20", "P.1,5,20", "recall.5,20", "success.5",
                 "recip_rank", "map", "map_cut.5,20", "Rprec"}


def _assert_matches_trec_eval(run: pl.DataFrame, qrels: pl.DataFrame, preset: str = "trec_eval9") -> None:
    """pytrec_eval is trec_eval 9's code: the trec_eval9 preset matches it everywhere, the
    trec_eval (10.0) preset wherever no two scores are equal in single precision only."""
    expected = pytrec_eval.RelevanceEvaluator(as_dicts(qrels, "relevance"), TREC_MEASURES)
    expected = expected.evaluate(as_dicts(run, "score"))
    result = evaluate(run, qrels, metrics=list(TREC_NAMES), conventions=preset)
    assert result.queries.evaluated == len(expected)
    for metric, name in TREC_NAMES.items():
        ours = per_query(result, metric)
        assert ours.keys() == expected.keys()
        for query, values in expected.items():
            assert ours[query] == pytest.approx(values[name], abs=1e-12), (metric, query)
        mean = np.mean([values[name] for values in expected.values()])
        assert result.metrics[metric] == pytest.approx(mean, abs=1e-12)


@pytest.mark.parametrize("preset", ["trec_eval9", "trec_eval"])
@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval_presets_match_pytrec_eval_with_ties(seed: int, preset: str) -> None:
    run, qrels = random_case(seed, min_grade=-1)  # scores are small integers: exact in float32
    _assert_matches_trec_eval(run, qrels, preset)


@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval_preset_matches_pytrec_eval_on_long_lists_with_many_relevant(seed: int) -> None:
    # Many judged items per query make the kernel sort the list instead of counting.
    run, qrels = random_case(seed, n_queries=20, max_list=200, n_items=260, max_judged=240,
                             score_levels=30)
    _assert_matches_trec_eval(run, qrels)


@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval9_preset_reproduces_single_precision_scores(seed: int) -> None:
    # Scores apart by less than float32 resolution tie in trec_eval 9 (it stored C floats).
    run, qrels = random_case(seed)
    noise = np.random.default_rng(seed).random(run.height) * 1e-9
    run = run.with_columns(pl.col("score") + 1.0 + pl.Series(noise))
    _assert_matches_trec_eval(run, qrels)


def test_the_trec_eval_preset_keeps_doubles_as_trec_eval_10_does_and_trec_eval9_rounds() -> None:
    """The issue's run: scores 1.0000000002 and 1.0000000001. trec_eval 10.0 keeps them apart
    (recip_rank 1.0); trec_eval 9 and pytrec_eval store C floats, where they tie and docno
    descending puts "b" first (0.5)."""
    run = pl.DataFrame({"query": ["q"] * 2, "item": ["a", "b"], "score": [1.0000000002, 1.0000000001]})
    qrels = pl.DataFrame({"query": ["q"], "item": ["a"], "relevance": [1]})
    assert evaluate(run, qrels, metrics=["mrr"], conventions="trec_eval").metrics["mrr"] == 1.0
    assert evaluate(run, qrels, metrics=["mrr"], conventions="trec_eval9").metrics["mrr"] == 0.5
    trec_eval9 = pytrec_eval.RelevanceEvaluator(as_dicts(qrels, "relevance"), {"recip_rank"})
    assert trec_eval9.evaluate(as_dicts(run, "score"))["q"]["recip_rank"] == 0.5


ranx = pytest.importorskip("ranx")
RANX_METRICS = ["ndcg@1", "ndcg@5", "ndcg@20", "ndcg", "dcg@5", "mrr@5", "mrr", "map@5",
                "map", "precision@5", "precision@20", "recall@5", "hit_rate@5", "r_precision"]


@pytest.mark.parametrize("seed", SEEDS)
def test_ranx_preset_matches_ranx_without_ties(seed: int) -> None:
    # ranx breaks ties arbitrarily, so its runs here have distinct scores.
    run, qrels = random_case(seed, score_levels=None, min_grade=-1)
    ranx_run = ranx.Run(as_dicts(run, "score"))
    ranx_qrels = ranx.Qrels(as_dicts(qrels, "relevance"))
    names = {m: m.replace("r_precision", "r-precision") for m in RANX_METRICS}
    ranx.evaluate(ranx_qrels, ranx_run, list(names.values()), make_comparable=True, threads=1)
    result = evaluate(run, qrels, metrics=RANX_METRICS, conventions="ranx")
    assert result.queries.evaluated == len(ranx_qrels.keys())
    for metric, name in names.items():
        expected = dict(ranx_run.scores[name])
        ours = per_query(result, metric)
        assert ours.keys() == expected.keys()
        for query, value in expected.items():
            assert ours[query] == pytest.approx(value, abs=1e-12), (metric, query)
        assert result.metrics[metric] == pytest.approx(ranx_run.mean_scores[name], abs=1e-12)


sklearn_metrics = pytest.importorskip("sklearn.metrics")


@pytest.mark.parametrize("seed", SEEDS)
def test_sklearn_preset_matches_ndcg_score_with_averaged_ties(seed: int) -> None:
    run, qrels = random_case(seed, missing_share=0.0)
    # sklearn scores each ranked list against the grades of its own rows (0 when unjudged).
    labelled = run.join(qrels, on=["query", "item"], how="left").with_columns(
        pl.col("relevance").fill_null(0).clip(lower_bound=0)
    ).filter(pl.len().over("query") >= 2)
    run = labelled.select("query", "item", "score")
    for k in (1, 3, 5, 20):
        result = evaluate(run, qrels, metrics=[f"ndcg@{k}", f"dcg@{k}"], conventions="sklearn")
        ndcg, dcg = per_query(result, f"ndcg@{k}"), per_query(result, f"dcg@{k}")
        expected = {}
        for (query,), group in labelled.group_by("query"):
            y_true = [group.get_column("relevance").to_list()]
            y_score = [group.get_column("score").to_list()]
            expected[query] = sklearn_metrics.ndcg_score(y_true, y_score, k=k)
            assert dcg[query] == pytest.approx(
                sklearn_metrics.dcg_score(y_true, y_score, k=k), abs=1e-12)
        assert ndcg.keys() == expected.keys()
        for query, value in expected.items():
            assert ndcg[query] == pytest.approx(value, abs=1e-12), (k, query)
        assert result.metrics[f"ndcg@{k}"] == pytest.approx(np.mean(list(expected.values())),
                                                            abs=1e-12)


lightgbm = pytest.importorskip("lightgbm")


def _lightgbm_eval(frame: pl.DataFrame, metric: str, ks: list[int]) -> dict[str, float]:
    sizes = frame.group_by("qid", maintain_order=True).len().get_column("len").to_list()
    data = lightgbm.Dataset(
        np.zeros((frame.height, 1)), label=frame.get_column("label").to_numpy(), group=sizes,
        init_score=frame.get_column("score").to_numpy(), free_raw_data=False,
    )
    booster = lightgbm.Booster(
        {"objective": "lambdarank", "metric": metric, "eval_at": ks, "verbose": -1}, data
    )
    return {result.metric_name: result.metric_value for result in booster.eval_train()}


def _labelled_case(seed: int, *, tied: bool) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 20, 40)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    label = rng.integers(0, 4, qid.size)
    label[np.isin(qid, rng.choice(len(sizes), 5, replace=False))] = 0  # no relevant row
    score = rng.integers(0, 3, qid.size).astype(float) if tied else rng.random(qid.size)
    return pl.DataFrame({"qid": qid, "label": label, "score": score})


@pytest.mark.parametrize("seed", SEEDS)
def test_lightgbm_preset_matches_lightgbm_ndcg_with_ties(seed: int) -> None:
    frame = _labelled_case(seed, tied=True)
    ks = [1, 3, 5, 30]
    expected = _lightgbm_eval(frame, "ndcg", ks)
    result = evaluate_labelled(frame, metrics=[f"ndcg@{k}" for k in ks], conventions="lightgbm")
    assert result.queries.no_relevant >= 5
    for k in ks:
        assert result.metrics[f"ndcg@{k}"] == pytest.approx(expected[f"ndcg@{k}"], abs=1e-9)


@pytest.mark.parametrize("seed", SEEDS)
def test_lightgbm_preset_matches_lightgbm_map_without_ties(seed: int) -> None:
    # LightGBM sorts for MAP with std::sort, whose order of ties is unspecified.
    frame = _labelled_case(seed, tied=False)
    ks = [1, 3, 5, 30]
    expected = _lightgbm_eval(frame, "map", ks)
    result = evaluate_labelled(frame, metrics=[f"map@{k}" for k in ks], conventions="lightgbm")
    for k in ks:
        assert result.metrics[f"map@{k}"] == pytest.approx(expected[f"map@{k}"], abs=1e-9)


def test_lightgbm_preset_matches_a_trained_rankers_validation_ndcg_on_mq2008(data_dir) -> None:
    from feco.evaluation.letor import group_sizes, read_letor

    folder = data_dir / "ltr/mq2008"
    train = read_letor([folder / f"S{i}.txt" for i in (1, 2, 3)])
    test = read_letor(folder / "S5.txt")
    features = [c for c in test.columns if c.startswith("f")]

    def dataset(frame, **kwargs):
        return lightgbm.Dataset(frame.select(features).to_numpy(),
                                label=frame.get_column("label").to_numpy(),
                                group=group_sizes(frame), **kwargs)

    train_set = dataset(train)
    history: dict = {}
    booster = lightgbm.train(
        {"objective": "lambdarank", "metric": "ndcg", "eval_at": [4, 8], "verbose": -1,
         "num_leaves": 15, "num_threads": 1},
        train_set, 20, valid_sets=[dataset(test, reference=train_set)], valid_names=["test"],
        callbacks=[lightgbm.record_evaluation(history)],
    )
    scored = test.with_columns(score=booster.predict(test.select(features).to_numpy()))
    ours = evaluate_labelled(scored, metrics=["ndcg@4", "ndcg@8"], conventions="lightgbm")
    for metric in ("ndcg@4", "ndcg@8"):
        assert ours.metrics[metric] == pytest.approx(history["test"][metric][-1], abs=1e-9)
    assert ours.queries.no_relevant > 0  # scored 1 by LightGBM, excluded by feco's default
    default = evaluate_labelled(scored, metrics=["ndcg@4"], item="docid")
    assert default.queries.evaluated == ours.queries.evaluated - ours.queries.no_relevant
