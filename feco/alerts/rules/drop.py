"""Drop against the moving average: today's coverage well below the previous days' mean."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import drop_columns, fired
from feco.config import Alerts
from feco.config import DropRule as DropSettings

TWO_DAYS_NOTE = "below for the second day running"


class DropRule:
    """Fires when coverage is below the mean of the previous days by every margin.

    The margins are a relative share of the baseline, an absolute amount, k standard errors
    of the day's value, the error taken from the spread between the day's windows (they are
    clusters; a binomial error over all rows would be far too small), and k_days standard
    deviations of the previous normal days' values (day-to-day and weekly variation, which one
    day's windows cannot show). With ``min_windows`` set, the drop must also show in that many
    of the day's windows.

    With ``k_two_days`` set, the rule also fires when today and yesterday were both below by
    every margin with k_two_days in place of k_days (each judged against its own previous
    days, as yesterday's run judged it). A drop that lasts is real even when each day alone
    is within the day-to-day noise, and two independent days each 2 sd low are as rare as
    one day 3.3 sd low (control charts' "two points beyond 2 sigma"). Yesterday's values come
    in ``inputs`` as ``yesterday_*`` columns, null when yesterday cannot be judged.
    """

    name = "drop_vs_moving_average"
    needs_history = True

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        rule = settings.drop
        one_day = _threshold(rule, rule.k_days)
        two_days = _threshold(rule, rule.k_two_days)
        fires_one_day = _below(one_day, rule.min_windows)
        fires_two_days = (
            pl.lit(rule.k_two_days > 0)
            & _below(two_days, rule.min_windows)
            & _below(_threshold(rule, rule.k_two_days, "yesterday_"), rule.min_windows, "yesterday_")
        ).fill_null(False)
        firing = (
            inputs.filter(pl.col("baseline").is_not_null())
            .filter(fires_one_day | fires_two_days)
            .with_columns(
                pl.when(fires_one_day).then(one_day).otherwise(two_days).alias("threshold"),
                pl.when(fires_one_day).then(None).otherwise(pl.lit(TWO_DAYS_NOTE)).alias("note"),
                *drop_columns(pl.col("observed"), pl.col("baseline")),
            )
        )
        return fired(firing, self.name)


def _threshold(rule: DropSettings, k_days: float, prefix: str = "") -> pl.Expr:
    baseline = pl.col(f"{prefix}baseline")
    margin = pl.max_horizontal(
        baseline * rule.relative, pl.lit(rule.absolute),
        pl.col(f"{prefix}std_error").fill_null(0.0) * rule.k,
        pl.col(f"{prefix}baseline_sd").fill_null(0.0) * k_days,
    )
    return baseline - margin


def _below(threshold: pl.Expr, min_windows: int, prefix: str = "") -> pl.Expr:
    """The day's coverage below ``threshold``, and so are at least ``min_windows`` of its
    window coverages (persistence)."""
    below = pl.col(f"{prefix}observed") < threshold
    if not min_windows:
        return below
    windows_below = (pl.col(f"{prefix}window_coverages") - threshold).list.eval(pl.element() < 0).list.sum()
    return below & (windows_below >= min_windows)
