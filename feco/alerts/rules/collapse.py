"""Collapse: an unmistakable failure, judged from a warehouse's second day.

The drop rule needs weeks of history to know a series' spread and weekly shape; until then it
cannot page. But some failures need no history to be told apart from noise: a feature whose
coverage in a segment fell below a quarter of every earlier day's level, in most of the day's
windows, where that level would have given enough covered rows that noise cannot explain the
fall. That pages at once, warm-up or not, in any segment that can page (``page_min_share`` of
the rows, not a cross), whatever its size against ``min_rows``. A day that itself collapsed
(below a quarter of the earlier days' median) is no level: an outage's second day pages as its
first did. Where the drop rule fires too, it speaks instead (``feco.alerts.detect``). Like the
other rules, it leaves all traffic and the product-age segments unjudged while their mix of
product ages is not their history's (``min_age_overlap``): a batch of new products without
reviews replacing last month's reviewed ones is other products, not a collapse.
"""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import ABNORMAL_DAY, COSTED, COVERAGE, STEP, coverage_line, drop_columns, fired, same_ages
from feco.config import Alerts

# Below this share of the lowest earlier day's coverage.
COLLAPSE_SHARE = 0.25
# Covered rows the lowest earlier level gives today's rows: with 40 expected, a day at a
# quarter of them (10 or fewer) is a Poisson tail of 3e-9, no noise.
MIN_EXPECTED_COVERED = 40


class CollapseRule:
    name = "collapse"
    kinds = frozenset({COVERAGE, STEP, COSTED, ABNORMAL_DAY})
    severity = None
    measure = ("coverage", "below")
    needs_history = False  # one earlier day is enough
    statistics = ("observed", "history_min", "history_days", "windows", "window_coverages", "history_overlap")
    pageable_only = True  # segments that can page, under min_rows too: its own guard keeps noise out

    def detect(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        if inputs.is_empty():
            return fired(inputs, self.name)
        floor = pl.col("history_min") * COLLAPSE_SHARE
        windows_below = (pl.col("window_coverages") - floor).list.eval(pl.element() < 0).list.sum()
        firing = (
            inputs.filter((pl.col("history_days") >= 1) & (pl.col("observed") < floor)
                          & (pl.col("history_min") * pl.col("n_rows") >= MIN_EXPECTED_COVERED)
                          & (windows_below * 2 > pl.col("windows"))
                          & same_ages("history_overlap", settings.min_age_overlap))
            .with_columns(pl.col("history_min").alias("baseline"), floor.alias("threshold"))
            .with_columns(*drop_columns(pl.col("observed"), pl.col("baseline")))
        )
        return fired(firing, self.name)

    def budget_series(self, judged: pl.DataFrame) -> int:
        return 0  # its own guard (MIN_EXPECTED_COVERED) keeps noise out, not the budget

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "coverage", "the lowest earlier day (a collapse: below a quarter of it)")
