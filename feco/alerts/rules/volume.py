"""Volume: a day whose sampled traffic collapses, or that misses windows, raises its own alert."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import drop_columns, fired
from feco.config import Alerts

MIN_BASELINE_DAYS = 3


class VolumeDropRule:
    """The day's sampled traffic collapsed, or windows read hours without logs: raised from the
    day's volume (``volume_collapse``), not judged on the inputs."""

    name = "volume_drop"
    kinds = frozenset()
    severity = "high"
    measure = ("value", None)

    def describe(self, alert: dict) -> str:
        usual = "" if alert["baseline"] is None else f" from a usual {alert['baseline']:,.0f}"
        if alert.get("against"):
            return f"{alert['against']} (hours missing from the logs): sampled events {alert['observed']:,.0f}{usual}"
        return f"sampled events fell to {alert['observed']:,.0f}{usual}"


def volume_collapse(events: int, baseline: float | None, baseline_days: int, settings: Alerts, *,
                    windows_missing: int = 0) -> pl.DataFrame:
    """One 'volume_drop' row when the day's sampled events fell below the configured share of
    the usual volume (``sampled_volume.sql``: the median of the previous days, or of the
    same weekday's when lower; given enough history), or whatever the history when
    ``windows_missing`` of its windows read hours without logs (a day run with
    --allow-incomplete); none otherwise."""
    frame = pl.DataFrame({
        "feature": [None], "segment_dim": ["all"], "segment_value": ["all"],
        "observed": [float(events)], "baseline": [baseline],
        "threshold": [None if baseline is None else baseline * settings.volume_drop],
        "against": [f"{windows_missing} window{'s' * (windows_missing != 1)} without logs" if windows_missing else None],
    }, schema_overrides={"feature": pl.String, "baseline": pl.Float64, "threshold": pl.Float64, "against": pl.String})
    collapsed = pl.lit(baseline_days >= MIN_BASELINE_DAYS) & (pl.col("observed") < pl.col("threshold"))
    firing = frame.filter(collapsed.fill_null(False) | pl.lit(windows_missing > 0)).with_columns(
        *drop_columns(pl.col("observed"), pl.col("baseline")))
    return fired(firing, VolumeDropRule.name)
