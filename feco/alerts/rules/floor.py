"""Floor: a per-feature minimum coverage, critical whatever the history."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import coverage_line, drop_columns, fired
from feco.config import Alerts


class FloorRule:
    name = "below_floor"
    needs_history = False

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        if not settings.floor:
            return fired(inputs.clear(), self.name)
        floors = pl.DataFrame({"feature": list(settings.floor), "threshold": list(settings.floor.values())})
        firing = (
            inputs.join(floors, on="feature")
            .filter(pl.col("observed") < pl.col("threshold"))
            .with_columns(*drop_columns(pl.col("observed"), pl.col("threshold")))
        )
        return fired(firing, self.name)

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "coverage", "its floor")
