"""Drop against the moving average: today's coverage well below the previous days' mean."""

from __future__ import annotations

import polars as pl

from feco.alerts.rules import drop_columns, fired
from feco.config import Alerts
from feco.config import DropRule as DropSettings

AGAINST_REST = "what its usual ratio to the rest of traffic predicts"


class DropRule:
    """Fires when coverage is below the mean of the previous days by every margin.

    The margins are a relative share of the baseline, an absolute amount, k standard errors
    of the day's value, the error taken from the spread between the day's windows (they are
    clusters; a binomial error over all rows would be far too small), and k_days standard
    deviations of the previous normal days' values (day-to-day and weekly variation, which one
    day's windows cannot show). With ``min_windows`` set, the drop must also show in that many
    of the day's windows.

    A segment also fires against the rest of traffic: when it fell by the relative and
    absolute margins and is below its usual ratio to the rest of traffic (``rest_baseline``:
    that ratio's recent mean times the rest's coverage today) by every margin, with k_rest sd
    of that ratio in place of k_days. A day-to-day swing moves every segment alike, so the
    ratio is far steadier than the segment's own coverage, and a drop confined to one region
    or band stands out against it even when it hides in the segment's day-to-day noise.
    """

    name = "drop_vs_moving_average"
    needs_history = True

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        rule = settings.drop
        usual, against_rest = _threshold(rule, k_days=rule.k_days), _threshold(rule, "rest_", k_days=rule.k_rest)
        fell = pl.col("observed") < _threshold(rule)
        fires_usual = _below(usual, rule.min_windows)
        fires_against_rest = (pl.lit(rule.k_rest > 0) & fell & _below(against_rest, rule.min_windows)).fill_null(False)
        firing = (
            inputs.filter(pl.col("baseline").is_not_null())
            .filter(fires_usual | fires_against_rest)
            .with_columns(
                pl.when(fires_usual).then(pl.col("baseline")).otherwise(pl.col("rest_baseline")).alias("baseline"),
                pl.when(fires_usual).then(usual).otherwise(against_rest).alias("threshold"),
                pl.when(fires_usual).then(None).otherwise(pl.lit(AGAINST_REST)).alias("against"),
            )
            .with_columns(*drop_columns(pl.col("observed"), pl.col("baseline")))
        )
        return fired(firing, self.name)

    def band(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        """What the rule expects of each row (``expected``: the weekday-adjusted baseline) and
        the coverage below which it fires against that (``lower``), for charts. A segment can
        also fire against the rest of traffic, whose prediction moves with the day's traffic."""
        return inputs.select("feature", "segment_dim", "segment_value", pl.col("baseline").alias("expected"),
                             _threshold(settings.drop, k_days=settings.drop.k_days).alias("lower"))


def _threshold(rule: DropSettings, prefix: str = "", *, k_days: float | None = None) -> pl.Expr:
    """The prediction ``<prefix>baseline`` less the widest margin; the spread margins only
    with ``k_days`` (sd of the prediction) given."""
    baseline = pl.col(f"{prefix}baseline")
    margins = [baseline * rule.relative, pl.lit(rule.absolute)]
    if k_days is not None:
        margins += [pl.col("std_error").fill_null(0.0) * rule.k,
                    pl.col(f"{prefix}baseline_sd").fill_null(0.0) * k_days]
    return baseline - pl.max_horizontal(margins)


def _below(threshold: pl.Expr, min_windows: int) -> pl.Expr:
    """The day's coverage below ``threshold``, and so are at least ``min_windows`` of its
    window coverages (persistence)."""
    below = pl.col("observed") < threshold
    if not min_windows:
        return below
    windows_below = (pl.col("window_coverages") - threshold).list.eval(pl.element() < 0).list.sum()
    return below & (windows_below >= min_windows)
