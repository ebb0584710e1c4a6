"""Train a LightGBM lambdarank model, predict, and score it with :mod:`feco.evaluation`.

Every score is reported under two conventions, side by side: feco's (a query with no relevant
document is left out of the mean, and counted) and LightGBM's own (such a query scores 1), so
the numbers compare with published LightGBM results.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import lightgbm as lgb
import numpy as np
import polars as pl

from feco.errors import DataError
from feco.evaluation import DEFAULT_METRICS, Evaluation, evaluate_labelled
from feco.evaluation.letor import group_sizes

NDCG_METRICS = ("ndcg@4", "ndcg@8", "ndcg@10")


@dataclass(frozen=True)
class TrainedRanker:
    """A trained booster with the feature order it expects.

    Attributes
    ----------
    booster
        The LightGBM booster, trimmed to its best iteration when early stopping ran.
    features
        Feature columns in model order.
    best_iteration
        Boosting rounds kept.
    seconds
        Wall time of training.
    """

    booster: lgb.Booster
    features: list[str]
    best_iteration: int
    seconds: float


def train_ranker(
    train: pl.DataFrame,
    valid: pl.DataFrame | None = None,
    *,
    features: Sequence[str],
    params: Mapping[str, object],
    num_boost_round: int = 500,
    early_stopping_rounds: int = 30,
    query: str = "qid",
    label: str = "label",
) -> TrainedRanker:
    """Train a lambdarank model, early-stopping on NDCG@8 of ``valid`` when given.

    Rows of a query must be contiguous in both frames (LightGBM takes group sizes).

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"qid": [1] * 4 + [2] * 4, "label": [0, 1, 2, 0] * 2,
    ...                       "x": [0.1, 0.5, 0.9, 0.2] * 2})
    >>> model = train_ranker(frame, features=["x"], num_boost_round=3,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> model.best_iteration
    3
    """
    features = list(features)
    settings = {**params, "metric": "ndcg", "eval_at": [8]}
    data = _dataset(train, features, query, label)
    started = time.perf_counter()
    if valid is None:
        booster = lgb.train(settings, data, num_boost_round=num_boost_round)
        best = num_boost_round
    else:
        held_out = _dataset(valid, features, query, label, reference=data)
        booster = lgb.train(settings, data, num_boost_round=num_boost_round, valid_sets=[held_out],
                            callbacks=[lgb.early_stopping(early_stopping_rounds, verbose=False)])
        best = booster.best_iteration or num_boost_round
    return TrainedRanker(booster, features, int(best), time.perf_counter() - started)


def predict_scores(model: TrainedRanker, frame: pl.DataFrame) -> np.ndarray:
    """Scores of ``frame``'s rows (nulls passed to LightGBM as missing).

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"qid": [1] * 4 + [2] * 4, "label": [0, 1, 2, 0] * 2,
    ...                       "x": [0.1, 0.5, 0.9, 0.2] * 2, "y": [1.0, 0.0, 3.0, 2.0] * 2})
    >>> model = train_ranker(frame, features=["x", "y"], num_boost_round=3,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> predict_scores(model, frame).shape
    (8,)
    """
    return model.booster.predict(matrix(frame, model.features), num_iteration=model.best_iteration)


def score_ndcg(
    frame: pl.DataFrame,
    scores: np.ndarray,
    *,
    query: str = "qid",
    label: str = "label",
) -> dict[str, Evaluation]:
    """Evaluate scores under feco's conventions (full panel) and LightGBM's (NDCG@4/8/10).

    Returns
    -------
    dict
        ``{"feco": Evaluation, "lightgbm": Evaluation}``. Under ``feco`` queries with no
        relevant document are excluded (``queries.no_relevant`` counts them); under
        ``lightgbm`` they score 1.

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> frame = pl.DataFrame({"qid": [1, 1, 2, 2], "label": [0, 1, 0, 0]})
    >>> result = score_ndcg(frame, np.array([0.9, 0.1, 0.5, 0.4]))
    >>> round(result["feco"].metrics["ndcg@4"], 4), result["lightgbm"].metrics["ndcg@4"]
    (0.6309, 0.8154648767857288)
    """
    scored = frame.select(pl.col(query).alias("qid"), pl.col(label).alias("label"),
                          pl.Series("score", np.asarray(scores, dtype=np.float64)))
    panel = tuple(dict.fromkeys((*NDCG_METRICS, *DEFAULT_METRICS)))
    return {
        "feco": evaluate_labelled(scored, metrics=panel),
        "lightgbm": evaluate_labelled(scored, metrics=NDCG_METRICS, conventions="lightgbm"),
    }


def ndcg_summary(evaluations: Mapping[str, Evaluation]) -> dict[str, float | int | None]:
    """Flat NDCG@4/8 under both conventions with the query counts behind them.

    Examples
    --------
    >>> import numpy as np, polars as pl
    >>> frame = pl.DataFrame({"qid": [1, 1, 2, 2], "label": [0, 1, 0, 0]})
    >>> summary = ndcg_summary(score_ndcg(frame, np.array([0.9, 0.1, 0.5, 0.4])))
    >>> sorted(summary)
    ['ndcg4', 'ndcg4_lightgbm', 'ndcg8', 'ndcg8_lightgbm', 'queries', 'queries_no_relevant']
    >>> summary["queries"], summary["queries_no_relevant"]  # query 2 has no relevant row
    (2, 1)
    """
    feco, lightgbm = evaluations["feco"], evaluations["lightgbm"]
    return {
        "ndcg4": feco.metrics["ndcg@4"], "ndcg8": feco.metrics["ndcg@8"],
        "ndcg4_lightgbm": lightgbm.metrics["ndcg@4"], "ndcg8_lightgbm": lightgbm.metrics["ndcg@8"],
        "queries": feco.queries.judged, "queries_no_relevant": feco.queries.no_relevant,
    }


def matrix(frame: pl.DataFrame, features: Sequence[str]) -> np.ndarray:
    """The feature columns as a float64 matrix with NaN for missing values."""
    absent = [f for f in features if f not in frame.columns]
    if absent:
        raise DataError(f"frame lacks feature column(s) {', '.join(absent)}")
    return frame.select(pl.col(list(features)).cast(pl.Float64)).to_numpy()


def _dataset(frame: pl.DataFrame, features: list[str], query: str, label: str, *,
             reference: lgb.Dataset | None = None) -> lgb.Dataset:
    return lgb.Dataset(matrix(frame, features), label=frame.get_column(label).to_numpy(),
                       group=group_sizes(frame, query=query), feature_name=features,
                       reference=reference, free_raw_data=False)
