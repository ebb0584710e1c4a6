"""SHAP that sees a segment's drop: the day's attribution draws its own rows for every segment
that can page, so a rank-10 feature losing 90% of its covered rows in a region of ~15% of the
traffic moves its share there by at least 4 sd of the draw's noise (the uniform 250 rows of
the day saw it at ~1.8 sd, inside a clean day's spread)."""

from datetime import date
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from feco.config import Incidents, parse_config
from feco.coverage import segment_rows
from feco.generator import FEATURES, generate_logs
from feco.ranker.attribution import daily_shap, plan_draws
from feco.ranker.importance import importances, shap_values
from feco.ranker.model import train_ranker
from feco.ranker.perturb import Loss, apply_losses
from feco.ranker.rows import DRAW

DAY = date(2026, 3, 4)
pytestmark = pytest.mark.slow  # ~1 minute: two generated days, a ranker, exact SHAP of a region


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    logs = tmp_path_factory.mktemp("power") / "logs"
    generate_logs(logs, start=DAY, days=2, events_per_day=16_000, seed=9)
    config = parse_config({"paths": {"logs": str(logs), "samples": "s", "warehouse": "w.duckdb"},
                           "logs": {"features": list(FEATURES)}}, source=Path("/tmp/feco.toml"))

    def day(ds):
        rows = pl.read_parquet(logs / f"ds={ds}" / "hour=*" / "*.parquet").sort("event_id", "position")
        labels = segment_rows(rows, ds=ds, config=config)
        return rows.select(pl.col("event_id").alias("qid"), pl.col("label").cast(pl.Int64), *FEATURES).hstack(labels)

    train, today = day(DAY), day(date(2026, 3, 5))
    model = train_ranker(train, features=list(FEATURES), num_boost_round=60,
                         params={"objective": "lambdarank", "learning_rate": 0.1, "num_leaves": 31,
                                 "min_data_in_leaf": 50, "num_threads": 2, "seed": 1, "deterministic": True,
                                 "verbose": -1})
    return today, model, importances(model, train, sample_rows=3000)


def counts(frame: pl.DataFrame) -> pl.DataFrame:
    parts = [frame.group_by(pl.lit("all").alias("segment_value")).len("n_rows").with_columns(segment_dim=pl.lit("all"))]
    parts += [frame.group_by(pl.col(d).alias("segment_value")).len("n_rows").with_columns(segment_dim=pl.lit(d))
              for d in ("product_group", "region", "query_band", "product_age")]
    return pl.concat([p.select("segment_dim", "segment_value", "n_rows") for p in parts])


def explained_rows(frame, model, region: str, *, per_segment: int) -> int:
    """Rows of ``region`` the day's attribution explains, drawn as the score step draws them."""
    drawn = frame.with_columns(pl.Series(DRAW, np.random.default_rng(1).random(frame.height)))
    draws = plan_draws(counts(frame), rows=250, per_segment=per_segment, incidents=Incidents())
    shap = daily_shap(drawn.filter(pl.col(DRAW) < draws.threshold), model, ds=DAY, run_id="r",
                      segments=[(), ("region",)], draws=draws)
    return shap.filter(segment_value=region)["rows_explained"][0]


def noise_and_shift(frame, model, feature: str, region: str, rows: int) -> tuple[float, float]:
    """The sd of the feature's share in ``region`` over draws of ``rows`` of its rows, and how
    far the share moves when 90% of its covered rows there lose their value."""
    inside = (frame["region"] == region).to_numpy()
    lost = apply_losses(frame, [Loss(feature, 0.9)], seed=1, rows=inside)
    clean = np.abs(shap_values(model, frame.filter(pl.Series(inside))))
    after = np.abs(shap_values(model, lost.filter(pl.Series(inside))))
    j = model.features.index(feature)
    rng = np.random.default_rng(0)
    shares = []
    for _ in range(300):
        picked = clean[rng.choice(len(clean), rows, replace=False)]
        shares.append(picked[:, j].sum() / picked.sum())
    return float(np.std(shares)), float(clean[:, j].sum() / clean.sum() - after[:, j].sum() / after.sum())


def test_a_rank_10_features_drop_in_a_15_percent_region_moves_its_share_by_4_sd(world):
    frame, model, ranked = world
    shares = frame.group_by("region").len().with_columns(pl.col("len") / frame.height)
    region = shares.sort((pl.col("len") - 0.15).abs())["region"][0]
    feature = ranked.filter(shap_rank=10)["feature"][0]
    old, new = (explained_rows(frame, model, region, per_segment=n) for n in (0, 200))
    assert old < 60 and new == 200  # 250 rows of the day hold ~37 of a 15% region
    sd_old, shift = noise_and_shift(frame, model, feature, region, old)
    sd_new, _ = noise_and_shift(frame, model, feature, region, new)
    print(f"{feature} in {region}: shift {shift:+.4f}, {abs(shift) / sd_old:.1f} sd with {old} rows, "
          f"{abs(shift) / sd_new:.1f} sd with {new}")
    assert abs(shift) >= 4 * sd_new
    assert abs(shift) < 4 * sd_old
