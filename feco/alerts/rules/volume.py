"""Volume: a day whose sampled traffic collapses raises its own alert."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import drop_columns, fired
from feco.config import Alerts

MIN_BASELINE_DAYS = 3
VOLUME_DROP = "volume_drop"


def volume_collapse(events: int, baseline: float | None, baseline_days: int, settings: Alerts) -> pl.DataFrame:
    """One 'volume_drop' row when the day's sampled events fell below the configured share of
    the median of the previous days; none otherwise (or with too little history)."""
    frame = pl.DataFrame({
        "feature": [None], "segment_dim": ["all"], "segment_value": ["all"],
        "observed": [float(events)], "baseline": [baseline],
        "threshold": [None if baseline is None else baseline * settings.volume_drop],
    }, schema_overrides={"feature": pl.String, "baseline": pl.Float64, "threshold": pl.Float64})
    firing = frame.filter(
        pl.lit(baseline_days >= MIN_BASELINE_DAYS) & (pl.col("observed") < pl.col("threshold"))
    ).with_columns(*drop_columns(pl.col("observed"), pl.col("baseline")))
    return fired(firing, VOLUME_DROP)


def describe_volume_drop(alert: dict) -> str:
    return f"sampled events fell to {alert['observed']:,.0f} from a median of {alert['baseline']:,.0f}"
