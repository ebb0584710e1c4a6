"""Drop against the moving average: today's coverage well below the previous days' mean."""

from __future__ import annotations

import polars as pl

from feco.alerts.budget import critical_value
from feco.alerts.rules import (
    ABNORMAL_DAY,
    COSTED,
    COVERAGE,
    LEARNT,
    OWN_HISTORY,
    STEP,
    coverage_line,
    drop_columns,
    fired,
    same_ages,
)
from feco.config import Alerts, DropSettings

AGAINST_REST = "what its usual ratio to the rest of traffic predicts"


class DropRule:
    """Fires when coverage is below what the previous days predict by every margin.

    The margins are a relative share of the prediction, an absolute amount, k standard errors
    of the day's value, the error taken from the spread between the day's windows (they are
    clusters; a binomial error over all rows would be far too small), and the false-page
    budget's critical value (``alpha``, a Student t quantile on the spread's degrees of
    freedom) times the prediction's day-to-day spread, learnt from the series' normal days:
    one day's windows cannot show that spread. With ``min_windows`` set, the drop must also
    show in that many of the day's windows.

    Which prediction depends on the segment. All traffic is judged against its own previous
    days. Any other segment is judged against the rest of traffic: it must have fallen by the
    relative and absolute margins against its own days, and be below its usual ratio to the
    rest (``rest_baseline``: that ratio's recent mean times the rest's coverage today, at most
    its own prediction: the rest rising, a feature launched in other regions, is no loss here)
    by every margin, the spread being that ratio's. A day's swing moves every segment alike: judged on
    its own history, each of the ~20 pageable segments of every feature is another chance for
    that swing to page someone, and the swing is already judged once, in all traffic. A drop
    confined to a segment stands out against the rest even when it hides in the segment's own
    noise. A segment without a usable rest (no ratio history yet, or ``against_rest`` off) is
    judged on its own history.
    """

    name = "drop_vs_moving_average"
    kinds = frozenset({COVERAGE, STEP, LEARNT, COSTED, ABNORMAL_DAY})
    severity = None
    measure = ("coverage", "below")
    needs_history = True
    statistics = ("observed", "std_error", "window_coverages", "baseline", "baseline_sd", "day_df", "rest_baseline",
                  "rest_baseline_sd", "ratio_df", "history_overlap")

    def detect(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        rule = settings.drop
        by_rest = _judged_against_rest(rule)
        own, against_rest = _lower(rule, alpha=alpha), _lower(rule, "rest_", alpha=alpha)
        fell = pl.col("observed") < _lower(rule)
        fires = (pl.when(by_rest).then(fell & _below(against_rest, rule.min_windows))
                 .otherwise(_below(own, rule.min_windows)))
        firing = (
            inputs.filter(pl.col("baseline").is_not_null() & fires
                          & same_ages("history_overlap", settings.min_age_overlap))
            .with_columns(
                pl.when(by_rest).then(pl.col("rest_baseline")).otherwise(pl.col("baseline")).alias("baseline"),
                pl.when(by_rest).then(against_rest).otherwise(own).alias("threshold"),
                pl.when(by_rest).then(pl.lit(AGAINST_REST)).alias("against"),
            )
            .with_columns(*drop_columns(pl.col("observed"), pl.col("baseline")))
        )
        return fired(firing, self.name)

    def budget_series(self, judged: pl.DataFrame) -> int:
        return judged.height  # every judged row's coverage

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "coverage", alert.get("against") or "what the previous days predict")

    def band(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        """What the rule expects of each row (``expected``: the weekday-adjusted baseline, or for
        a segment its usual share of the rest of traffic today) and the coverage below which
        it fires against that (``lower``), for charts."""
        rule = settings.drop
        by_rest = _judged_against_rest(rule)
        return inputs.select(
            "feature", "segment_dim", "segment_value",
            pl.when(by_rest).then(pl.col("rest_baseline")).otherwise(pl.col("baseline")).alias("expected"),
            pl.when(by_rest).then(_lower(rule, "rest_", alpha=alpha))
            .otherwise(_lower(rule, alpha=alpha)).alias("lower"))


def _judged_against_rest(rule: DropSettings) -> pl.Expr:
    """A segment judged against the rest of traffic (not ``OWN_HISTORY``), with a rest to
    compare with."""
    return (pl.lit(rule.against_rest) & ~pl.col("segment_dim").is_in(OWN_HISTORY)
            & pl.col("rest_baseline").is_not_null() & pl.col("rest_baseline_sd").is_not_null()).fill_null(False)


def _lower(rule: DropSettings, prefix: str = "", *, alpha: float | None = None) -> pl.Expr:
    """The prediction ``<prefix>baseline`` less the widest margin; the spread margins (k
    standard errors of the day's value, the critical value times the prediction's day-to-day
    sd) only with ``alpha`` given. Without a spread to judge by (too few normal days), no
    threshold: the rule does not judge the row."""
    baseline = pl.col(f"{prefix}baseline")
    margins = [baseline * rule.relative, pl.lit(rule.absolute)]
    if alpha is not None:
        df = pl.col("ratio_df" if prefix == "rest_" else "day_df")
        margins += [pl.col("std_error").fill_null(0.0) * rule.k,
                    pl.col(f"{prefix}baseline_sd") * critical_value(alpha, df)]
        return pl.when(pl.col(f"{prefix}baseline_sd").is_not_null() & (df >= 1)).then(
            baseline - pl.max_horizontal(margins))
    return baseline - pl.max_horizontal(margins)


def _below(threshold: pl.Expr, min_windows: int) -> pl.Expr:
    """The day's coverage below ``threshold``, and so are at least ``min_windows`` of its
    window coverages (persistence)."""
    below = (pl.col("observed") < threshold).fill_null(False)
    if not min_windows:
        return below
    windows_below = (pl.col("window_coverages") - threshold).list.eval(pl.element() < 0).list.sum()
    return below & (windows_below >= min_windows).fill_null(False)
