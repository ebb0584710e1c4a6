"""Missing data: a feature turning NULL is told apart from a feature turning zero."""

from __future__ import annotations

import polars as pl

from feco.alerts.budget import critical_value
from feco.alerts.rules import fired, segment_name
from feco.config import Alerts

MISSING_COLUMN = "missing_column"


class MissingValuesRule:
    """Fires when the share of NULL/NaN values rose above the previous days' share by the
    configured amount and by the false-page budget's critical value of its day-to-day sd: a
    segment where NULLs come and go (a weekly batch of products without reviews yet) does not
    page on its usual swing; one that was never NULL pages on the amount alone."""

    name = "missing_values"
    needs_history = False  # runs in warm-up too, from the first day that has a previous day

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        rise = pl.col("missing_share") - pl.col("baseline_missing")
        alpha = inputs["alpha"][0] if inputs.height and "alpha" in inputs.columns else None
        margin = pl.lit(settings.missing.absolute)
        if alpha is not None:  # no spread yet (a day or two of history): the amount alone
            spread = (pl.col("missing_sd") * critical_value(alpha, pl.col("missing_df"))).fill_null(0.0)
            margin = pl.max_horizontal(margin, spread)
        firing = (
            inputs.filter(pl.col("baseline_missing").is_not_null())
            .with_columns(
                pl.col("missing_share").alias("observed"),
                pl.col("baseline_missing").alias("baseline"),
                (pl.col("baseline_missing") + margin).alias("threshold"),
                (-rise).alias("drop_abs"),
            )
            .filter(rise >= margin)
        )
        return fired(firing, self.name)

    def describe(self, alert: dict) -> str:
        return (f"{alert['feature']} in {segment_name(alert)}: NULL/NaN share {alert['observed']:.1%} "
                f"vs {alert['baseline']:.1%} before")


def missing_columns(features: list[str]) -> pl.DataFrame:
    """One alert row per configured feature absent from the day's logs."""
    frame = pl.DataFrame({"feature": features, "segment_dim": "all", "segment_value": "all"},
                         schema={"feature": pl.String, "segment_dim": pl.String, "segment_value": pl.String})
    return fired(frame.with_columns(pl.lit(1.0).alias("observed")), MISSING_COLUMN)


def describe_missing_column(alert: dict) -> str:
    return f"{alert['feature']}: column missing from the logs"
