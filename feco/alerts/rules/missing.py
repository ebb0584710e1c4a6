"""Missing data: a feature turning NULL is told apart from a feature turning zero."""

from __future__ import annotations

import polars as pl

from feco.alerts.budget import critical_value
from feco.alerts.rules import ABNORMAL_DAY, LEARNT, STEP, fired, segment_name
from feco.config import Alerts


class MissingValuesRule:
    """Fires when the share of NULL/NaN values rose above what the previous days predict (their
    recent level, weekday-adjusted, a failure's days left out by their own values: a return to
    the usual share after zeros were written over NULLs is no rise) by the configured amount
    and by the false-page budget's critical value of its day-to-day sd: a segment where NULLs
    come and go (a weekly batch of products without reviews yet) does not page on its usual
    swing, and one that was never NULL pages on the amount alone. Without a spread learnt from
    at least two earlier days the rule does not judge (the first weeks' noise pages no one; a
    feature turning NULL everywhere collapses its coverage, which the collapse rule judges)."""

    name = "missing_values"
    kinds = frozenset({STEP, LEARNT, ABNORMAL_DAY})
    severity = "high"
    measure = ("NULL or NaN share", "above")
    needs_history = False  # judged from the second day that has a spread, warm-up or not
    statistics = ("missing_share", "baseline_missing", "missing_sd", "missing_df")

    def detect(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        if inputs.is_empty():
            return fired(inputs, self.name)
        rise = pl.col("missing_share") - pl.col("baseline_missing")
        spread = pl.col("missing_sd") * critical_value(alpha, pl.col("missing_df"))
        margin = pl.max_horizontal(pl.lit(settings.missing.absolute), spread)
        firing = (
            inputs.filter(pl.col("baseline_missing").is_not_null() & spread.is_not_null())
            .with_columns(
                pl.col("missing_share").alias("observed"),
                pl.col("baseline_missing").alias("baseline"),
                (pl.col("baseline_missing") + margin).alias("threshold"),
                (-rise).alias("drop_abs"),
            )
            .filter(rise >= margin)
        )
        return fired(firing, self.name)

    def budget_series(self, judged: pl.DataFrame) -> int:
        return judged.height  # every judged row's NULL/NaN share

    def describe(self, alert: dict) -> str:
        return (f"{alert['feature']} in {segment_name(alert)}: NULL/NaN share {alert['observed']:.1%} "
                f"vs {alert['baseline']:.1%} expected")


class MissingColumnRule:
    """A configured feature absent from the day's logs (``feature_status``): raised from the
    day's columns, not judged on the inputs."""

    name = "missing_column"
    kinds = frozenset()
    severity = "critical"
    measure = ("value", None)

    def describe(self, alert: dict) -> str:
        return f"{alert['feature']}: column missing from the logs"


def missing_columns(features: list[str]) -> pl.DataFrame:
    """One alert row per configured feature absent from the day's logs."""
    frame = pl.DataFrame({"feature": features, "segment_dim": "all", "segment_value": "all"},
                         schema={"feature": pl.String, "segment_dim": pl.String, "segment_value": pl.String})
    return fired(frame.with_columns(pl.lit(1.0).alias("observed")), MissingColumnRule.name)
