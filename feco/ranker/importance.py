"""Feature importance: mean |SHAP value| (exact TreeSHAP) beside LightGBM's gain.

SHAP values come from LightGBM's own ``predict(..., pred_contrib=True)``: the same exact
TreeSHAP algorithm ``shap.TreeExplainer`` runs, in LightGBM's multithreaded C++ and without
converting the model (``bench/ranker_speed.py`` compares the two; the tests check they agree).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from feco.ranker.model import TrainedRanker, matrix

IMPORTANCE_SCHEMA = {"feature": pl.String, "gain": pl.Float64, "gain_share": pl.Float64,
                     "shap": pl.Float64, "shap_share": pl.Float64, "shap_rank": pl.Int32}


def shap_values(model: TrainedRanker, frame: pl.DataFrame) -> np.ndarray:
    """Exact TreeSHAP values, one row per row of ``frame``, one column per model feature.

    The bias column LightGBM appends is dropped: it is the same for every row.

    Examples
    --------
    >>> import polars as pl
    >>> from feco.ranker.model import predict_scores, train_ranker
    >>> frame = pl.DataFrame({"qid": [1] * 4 + [2] * 4, "label": [0, 1, 2, 0] * 2,
    ...                       "x": [0.1, 0.5, 0.9, 0.2] * 2, "y": [1.0, 0.0, 3.0, 2.0] * 2})
    >>> model = train_ranker(frame, features=["x", "y"], num_boost_round=3,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> values = shap_values(model, frame)
    >>> values.shape
    (8, 2)
    >>> bias = predict_scores(model, frame) - values.sum(axis=1)  # the same for every row
    >>> bool(np.allclose(bias, bias[0]))
    True
    """
    contributions = model.booster.predict(matrix(frame, model.features), pred_contrib=True,
                                          num_iteration=model.best_iteration)
    return contributions[:, :-1]


def importances(model: TrainedRanker, frame: pl.DataFrame, *, sample_rows: int = 5_000,
                seed: int = 0) -> pl.DataFrame:
    """Mean |SHAP| on a seeded sample of ``frame``'s rows and gain, per feature, with shares.

    Returns
    -------
    polars.DataFrame
        ``feature, gain, gain_share, shap, shap_share, shap_rank`` (rank 1 = largest mean
        |SHAP|), in model feature order. Shares sum to 1 (0 when the model has no splits).

    Examples
    --------
    >>> import polars as pl
    >>> from feco.ranker.model import train_ranker
    >>> frame = pl.DataFrame({"qid": [1] * 4 + [2] * 4, "label": [0, 1, 2, 0] * 2,
    ...                       "x": [0.1, 0.5, 0.9, 0.2] * 2, "y": [1.0, 0.0, 3.0, 2.0] * 2})
    >>> model = train_ranker(frame, features=["x", "y"], num_boost_round=3,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> table = importances(model, frame, sample_rows=1000)
    >>> table.columns
    ['feature', 'gain', 'gain_share', 'shap', 'shap_share', 'shap_rank']
    >>> round(table.get_column("shap_share").sum(), 6), sorted(table.get_column("shap_rank").to_list())
    (1.0, [1, 2])
    """
    rows = frame if frame.height <= sample_rows else frame.sample(sample_rows, seed=seed)
    shap = np.abs(shap_values(model, rows)).mean(axis=0)
    gain = model.booster.feature_importance("gain", iteration=model.best_iteration)
    out = pl.DataFrame({"feature": model.features, "gain": gain.astype(np.float64),
                        "shap": shap.astype(np.float64)})
    return out.with_columns(
        _share("gain"), _share("shap"),
        pl.col("shap").rank("ordinal", descending=True).cast(pl.Int32).alias("shap_rank"),
    ).select(list(IMPORTANCE_SCHEMA))


def _share(column: str) -> pl.Expr:
    total = pl.col(column).sum()
    return pl.when(total > 0).then(pl.col(column) / total).otherwise(0.0).alias(f"{column}_share")
