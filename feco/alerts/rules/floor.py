"""Floor: a per-feature minimum coverage, critical whatever the history."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import COVERAGE, STEP, coverage_line, drop_columns, fired
from feco.config import Alerts


class FloorRule:
    name = "below_floor"
    kinds = frozenset({COVERAGE, STEP})
    severity = "critical"
    measure = ("coverage", "below")
    needs_history = False
    statistics = ("observed",)

    def detect(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        if not settings.floor:
            return fired(inputs.clear(), self.name)
        floors = pl.DataFrame({"feature": list(settings.floor), "threshold": list(settings.floor.values())})
        firing = (
            inputs.join(floors, on="feature")
            .filter(pl.col("observed") < pl.col("threshold"))
            .with_columns(*drop_columns(pl.col("observed"), pl.col("threshold")))
        )
        return fired(firing, self.name)

    def budget_series(self, judged: pl.DataFrame) -> int:
        return 0  # a line the team drew, not a test of noise: no false alarms to budget for

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "coverage", "its floor")
