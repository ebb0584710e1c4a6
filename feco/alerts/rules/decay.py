"""Slow decay: the moving average has sunk below a frozen reference period's coverage.

A moving average follows a slow decline down and a drop rule against it never fires; a
frozen reference does not move.
"""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import coverage_line, drop_columns, fired
from feco.config import Alerts


class DecayRule:
    name = "decay_vs_reference"
    needs_history = True

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        rule = settings.decay
        reference, average = pl.col("reference"), pl.col("coverage_ma7")
        # both averages are of few days: the difference of a mean of n days and a mean of m
        # reference days varies by the day-to-day sd * sqrt(1/n + 1/m)
        average_error = pl.col("reference_sd").fill_null(0.0) * (
            1 / pl.col("days_in_window") + 1 / pl.col("reference_days")).sqrt()
        margin = pl.max_horizontal(reference * rule.relative, pl.lit(rule.absolute), average_error * rule.k)
        firing = (
            inputs.filter(reference.is_not_null())
            .with_columns(
                average.alias("observed"), reference.alias("baseline"), average_error.alias("std_error"),
                (reference - margin).alias("threshold"), *drop_columns(average, reference),
            )
            .filter(pl.col("observed") < pl.col("threshold"))
        )
        return fired(firing, self.name)

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "7-day average coverage", "the reference period")
