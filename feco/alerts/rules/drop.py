"""Drop against the moving average: today's coverage well below the previous days' mean."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import drop_columns, fired
from feco.config import Alerts


class DropRule:
    """Fires when coverage is below the mean of the previous days by every margin.

    The margins are a relative share of the baseline, an absolute amount, k standard errors
    of the day's value, the error taken from the spread between the day's windows (they are
    clusters; a binomial error over all rows would be far too small), and k_days standard
    deviations of the previous normal days' values (day-to-day and weekly variation, which one
    day's windows cannot show). With ``min_windows`` set, the drop must also show in that many
    of the day's windows.
    """

    name = "drop_vs_moving_average"
    needs_history = True

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        rule = settings.drop
        baseline, std_error = pl.col("baseline"), pl.col("std_error").fill_null(0.0)
        margin = pl.max_horizontal(
            baseline * rule.relative, pl.lit(rule.absolute),
            std_error * rule.k, pl.col("baseline_sd").fill_null(0.0) * rule.k_days,
        )
        firing = (
            inputs.filter(baseline.is_not_null())
            .with_columns((baseline - margin).alias("threshold"), *drop_columns(pl.col("observed"), baseline))
            .filter(pl.col("observed") < pl.col("threshold"))
        )
        if rule.min_windows:
            firing = firing.filter(_windows_below(firing) >= rule.min_windows)
        return fired(firing, self.name)


def _windows_below(frame: pl.DataFrame) -> pl.Series:
    """How many of each row's window coverages fall below its threshold."""
    counted = (
        frame.select("window_coverages", "threshold").with_row_index("row")
        .explode("window_coverages")
        .group_by("row", maintain_order=True)
        .agg((pl.col("window_coverages") < pl.col("threshold")).sum())
    )
    return counted.get_column("window_coverages")
