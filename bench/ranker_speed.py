"""Ranker timings: train, predict and SHAP on MQ2008 Fold1 and on a ~1M-row generated sample;
LightGBM's pred_contrib (exact TreeSHAP, what feco uses) against shap.TreeExplainer.

Prints times measured in this run and their ratios; asserts nothing about speed.
Run: .venv/bin/python bench/ranker_speed.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import time

import numpy as np
import polars as pl
import shap

from feco.config import Ranker
from feco.generator import FEATURES, generate_day
from feco.paper.datasets import default_root, load_split
from feco.ranker.importance import shap_values
from feco.ranker.model import predict_scores, train_ranker

SHAP_ROWS = 5_000


def timed(function, *args, **kwargs):
    started = time.perf_counter()
    out = function(*args, **kwargs)
    return out, time.perf_counter() - started


def measure(name: str, train: pl.DataFrame, valid: pl.DataFrame, test: pl.DataFrame, features: list[str]) -> None:
    settings = Ranker()
    model = train_ranker(train, valid, features=features, params=settings.params,
                         num_boost_round=settings.num_boost_round, early_stopping_rounds=settings.early_stopping_rounds)
    _, predict = timed(predict_scores, model, test)
    rows = test.head(SHAP_ROWS)
    mine, contrib = timed(shap_values, model, rows)
    explainer = shap.TreeExplainer(model.booster)
    theirs, tree_explainer = timed(explainer.shap_values, rows.select(features).to_numpy())
    print(f"{name}: {train.height:,} train rows, {len(features)} features, {model.best_iteration} rounds")
    print(f"  train {model.seconds:.2f}s | predict {test.height:,} rows {predict:.3f}s "
          f"({test.height / predict:,.0f} rows/s)")
    print(f"  SHAP on {rows.height:,} rows: pred_contrib {contrib:.3f}s, shap.TreeExplainer {tree_explainer:.3f}s "
          f"(ratio {tree_explainer / contrib:.2f}x), max |difference| {np.abs(mine - theirs).max():.2e}")


def generated(rows: int) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Generated days as LTR data (event = query), about ``rows`` training rows."""
    events = max(1, rows // 12)
    frames = []
    for offset, size in enumerate((events, events // 5, events // 5)):
        day = pl.from_arrow(generate_day(dt.date(2026, 3, 2) + dt.timedelta(days=offset), events_per_day=size,
                                         new_region_launch=dt.date(2026, 1, 1)))
        frames.append(day.sort("event_id", "position").select(
            pl.col("event_id").alias("qid"), pl.col("label").cast(pl.Int64), *(pl.col(f).cast(pl.Float64) for f in FEATURES)))
    return tuple(frames)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000, help="generated training rows")
    args = parser.parse_args()
    if (default_root() / "mq2008" / "S1.txt").exists():
        split = load_split("mq2008", 1)
        measure("MQ2008 Fold1", split.train, split.valid, split.test, split.features)
    train, valid, test = generated(args.rows)
    measure("generated", train, valid, test, list(FEATURES))


if __name__ == "__main__":
    main()
