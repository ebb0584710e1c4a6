"""The replayed cost of a coverage loss: one path with the experiment's test-only cells, the
losses it applies, and its interval."""

import numpy as np
import polars as pl
import pytest

from feco.config import Ranker
from feco.paper.datasets import default_root, load_split
from feco.paper.experiment import Grid, Training, run_coverage_drop
from feco.ranker.model import train_ranker
from feco.ranker.perturb import Loss, apply_losses, coverage_of
from feco.ranker.replay import replay_cost

MQ2008 = (default_root() / "mq2008" / "S1.txt").exists()


@pytest.mark.skipif(not MQ2008, reason="MQ2008 not in ../shared/data/ltr")
def test_replaying_a_test_only_drop_on_mq2008_fold1_gives_the_grid_cell():
    split = load_split("mq2008", 1)
    training = Training(Ranker().params, num_boost_round=40, early_stopping_rounds=10)
    grid = Grid(top_k=2, low_k=0, reductions=(0.25,), modes=("test",), seeds=(3,), shap_sample_rows=200)
    cells = run_coverage_drop(split, grid=grid, training=training).cells
    baseline = train_ranker(split.train, split.valid, features=split.features, params=training.params,
                            num_boost_round=training.num_boost_round,
                            early_stopping_rounds=training.early_stopping_rounds)
    assert cells.height == 2
    for cell in cells.iter_rows(named=True):
        losses = [Loss(cell["feature"], cell["reduction"])]
        cost = replay_cost(split.test, baseline, losses, seed=cell["seed"])
        assert cost.d_ndcg8 == pytest.approx(cell["d_ndcg8"], abs=1e-12)
        assert cost.d_ndcg4 == pytest.approx(cell["d_ndcg4"], abs=1e-12)
        assert cost.events == cell["queries"] - cell["queries_no_relevant"]
        assert coverage_of(apply_losses(split.test, losses, seed=cell["seed"]), cell["feature"]) == \
            cell["coverage_test_after"]
        assert cost.d_ndcg8_low <= cost.d_ndcg8 <= cost.d_ndcg8_high
    assert cells["d_ndcg8"].min() < 0  # a real loss, not two zeros agreeing


def _frame(rows: int = 3000, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(rows // 10), 10)
    signal = rng.uniform(0, 1, rows)
    return pl.DataFrame({"qid": qid, "label": (signal + rng.normal(0, 0.2, rows) > 0.7).astype(np.int64),
                         "signal": signal, "other": rng.uniform(0, 1, rows), "segment": qid % 2 == 0})


PARAMS = {"objective": "lambdarank", "min_data_in_leaf": 5, "num_leaves": 7, "verbose": -1, "seed": 1,
          "deterministic": True, "num_threads": 1}


def test_a_lost_signal_costs_ndcg_with_an_interval_clear_of_zero():
    frame = _frame()
    model = train_ranker(frame, features=["signal", "other"], params=PARAMS, num_boost_round=20)
    cost = replay_cost(frame, model, [Loss("signal", 0.9)], seed=1)
    assert cost.d_ndcg8_low <= cost.d_ndcg8 <= cost.d_ndcg8_high < 0
    milder = replay_cost(frame, model, [Loss("signal", 0.3)], seed=1)
    assert cost.d_ndcg8 < milder.d_ndcg8 < 0


def test_a_source_outage_loses_all_its_features_and_a_segment_only_its_rows():
    frame = _frame()
    both = apply_losses(frame, [Loss("signal", 1.0), Loss("other", 0.5, "null")], seed=1)
    assert coverage_of(both, "signal") == 0
    assert both["other"].null_count() == round(0.5 * frame.height)
    inside = frame["segment"].to_numpy()
    segment_only = apply_losses(frame, [Loss("signal", 1.0)], seed=1, rows=inside)
    assert coverage_of(segment_only.filter(pl.col("segment")), "signal") == 0
    assert segment_only.filter(~pl.col("segment")).equals(frame.filter(~pl.col("segment")))


def test_a_feature_the_model_does_not_use_costs_exactly_nothing():
    frame = _frame().with_columns(pl.lit(None, pl.Float64).alias("unused"))  # all missing: never split on
    model = train_ranker(frame, features=["signal", "unused"], params=PARAMS, num_boost_round=20)
    assert model.booster.feature_importance("split")[1] == 0
    cost = replay_cost(frame.with_columns(pl.col("signal").alias("unused")), model, [Loss("unused", 0.9)], seed=1)
    assert (cost.d_ndcg8, cost.d_ndcg8_low, cost.d_ndcg8_high) == (0.0, 0.0, 0.0)
