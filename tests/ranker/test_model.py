"""Ranker core: training with early stopping, both NDCG conventions, exact SHAP, reductions."""

import numpy as np
import polars as pl
import pytest

from feco.ranker.importance import importances, shap_values
from feco.ranker.model import ndcg_summary, predict_scores, score_ndcg, train_ranker
from feco.ranker.perturb import coverage_of, reduce_coverage

PARAMS = {"objective": "lambdarank", "learning_rate": 0.2, "num_leaves": 7, "min_data_in_leaf": 5,
          "num_threads": 1, "seed": 1, "deterministic": True, "verbose": -1}


def synthetic(queries: int, *, seed: int) -> pl.DataFrame:
    """x_signal decides the label; x_noise is covered but useless; x_rare almost never covered."""
    rng = np.random.default_rng(seed)
    n = queries * 10
    signal = rng.random(n)
    return pl.DataFrame({
        "qid": np.repeat(np.arange(queries), 10), "label": np.digitize(signal + rng.normal(0, .1, n), [.6, .85]),
        "x_signal": signal, "x_noise": rng.random(n) + 0.01, "x_rare": np.where(rng.random(n) < .02, 1.0, 0.0),
    })


@pytest.fixture(scope="module")
def trained():
    train, valid = synthetic(150, seed=1), synthetic(50, seed=2)
    return train_ranker(train, valid, features=["x_signal", "x_noise", "x_rare"], params=PARAMS,
                        num_boost_round=200, early_stopping_rounds=10)


def test_early_stopping_keeps_fewer_rounds_and_the_model_ranks_well(trained):
    assert 1 <= trained.best_iteration < 200
    test = synthetic(50, seed=3)
    result = ndcg_summary(score_ndcg(test, predict_scores(trained, test)))
    assert result["ndcg8"] > 0.9
    shuffled = ndcg_summary(score_ndcg(test, np.random.default_rng(0).random(test.height)))
    assert shuffled["ndcg8"] < result["ndcg8"] - 0.2


def test_conventions_differ_only_on_queries_without_relevant_documents():
    frame = pl.DataFrame({"qid": [1, 1, 2, 2], "label": [0, 1, 0, 0]})
    result = score_ndcg(frame, np.array([0.9, 0.1, 0.5, 0.4]))
    one = 1 / np.log2(3)
    assert result["feco"].metrics["ndcg@4"] == pytest.approx(one)
    assert result["feco"].queries.no_relevant == 1 and result["feco"].queries.evaluated == 1
    assert result["lightgbm"].metrics["ndcg@4"] == pytest.approx((one + 1) / 2)


def test_shap_values_match_shap_tree_explainer_and_add_up_to_the_prediction(trained):
    shap = pytest.importorskip("shap")
    test = synthetic(20, seed=4)
    mine = shap_values(trained, test)
    theirs = shap.TreeExplainer(trained.booster).shap_values(test.select(trained.features).to_numpy())
    np.testing.assert_allclose(mine, theirs, atol=1e-9)
    bias = trained.booster.predict(test.select(trained.features).to_numpy(), pred_contrib=True,
                                   num_iteration=trained.best_iteration)[:, -1]
    np.testing.assert_allclose(mine.sum(axis=1) + bias, predict_scores(trained, test), atol=1e-9)


def test_importances_rank_the_signal_first_and_shares_sum_to_one(trained):
    imp = importances(trained, synthetic(30, seed=5), sample_rows=100, seed=0)
    assert imp.sort("shap_rank")["feature"][0] == "x_signal"
    assert imp["shap_share"].sum() == pytest.approx(1) and imp["gain_share"].sum() == pytest.approx(1)
    assert imp.filter(feature="x_signal")["shap_share"][0] > 0.8


@pytest.mark.parametrize("share", [0.0, 0.05, 0.25, 1.0])
def test_reduce_coverage_zeroes_exactly_that_share_of_covered_rows_reproducibly(share):
    frame = pl.DataFrame({"x": [0.0, None, float("nan")] + [1.0] * 200, "y": range(203)})
    reduced = reduce_coverage(frame, "x", share=share, seed=3)
    assert coverage_of(reduced, "x") == pytest.approx((200 - round(share * 200)) / 203)
    assert reduced.equals(reduce_coverage(frame, "x", share=share, seed=3))
    assert reduced["x"].null_count() == 1 and reduced["y"].equals(frame["y"])
    assert frame["x"].fill_nan(None).sum() == 200  # the input is not modified
