"""Slow decay: the moving average has sunk below a frozen reference period's coverage.

A moving average follows a slow decline down and a drop rule against it never fires; a
frozen reference does not move. But a series' level does wander from week to week (the
catalogue turns over, a segment's membership changes, campaigns come and go), so the
difference between a 7-day average and a reference weeks earlier varies by more than the
days' own noise. The rule's null spread has both parts:

    var = day_sd^2 * (1/n + 1/m) + tau^2 * (1 + 7/m)

for a 7-day average of n days against a reference of m days, day_sd being the days' own noise
(from the changes between consecutive days, ``alert_inputs``: a decline under way does not
widen it) and tau^2 the variance of the weekly level (whole weeks' means less the days' noise
in them, ``decay_wander.sql``). Wander is a property of the segment (its membership churns,
its traffic mix moves), so tau^2 / day_sd^2 is taken as the median of that ratio over the
segment's features, or over those of the feature's upstream source there (three or more)
when they wander more (one source's documents can drift in and out of a segment): one
feature's own decline does not move a median, where it would widen its own estimate and
hide itself. While no feature of the segment has
two whole weeks, tau = day_sd is assumed. The critical value is the false-page budget's t
quantile on the degrees of freedom of day_sd (tau^2, a median over many series, is taken as
known; Welch-Satterthwaite weighs the two parts).

All traffic is judged on its own level. Any other segment is judged on its ratio to the rest of
traffic, as the drop rule does: a decline of all traffic is judged once, in all traffic, and
a segment pages for what is its own; and its own 7-day average must have fallen below its own
reference by the relative and absolute margins too, so a segment a launch has not reached yet
is not paged for the rest of traffic having risen.

A rise is not a failure: where a series held above its reference by both margins for
``follow_days`` days in a row (a launch, a rollout filling in, a region's data arriving), its
reference follows it up to the latest such run's level (``risen_reference``; ``feco status``
names the series whose reference moved, and when).

A product-age segment's products turn over: today's new products are not last month's, and a
cohort of them with fewer values lowers its coverage with no product's data changing. Where
the same products' coverage a week apart is counted (``feco.same_products``, with ``[logs]
product_id``), a decay there must also show on its own products: the coverage they lost since
the reference beyond their usual change (new products gain engagement as they age) must be at
least ``SAME_PRODUCTS_SHARE`` of the segment's loss and twice its own sd. A failure hitting only
the products that arrive after it (an ingestion job for new products) loses nothing on the
products it finds and is left to the drop rule and the youngest age band.
"""

from __future__ import annotations

import polars as pl

from feco.alerts.budget import critical_value, satterthwaite_df
from feco.alerts.rules import COSTED, COVERAGE, OWN_HISTORY, coverage_line, drop_columns, fired, same_ages
from feco.config import Alerts

AGAINST_REST = "its usual ratio to the rest of traffic in the reference period"
# The share of a product-age segment's loss its own products must show (above), and by how many
# of its sds: a failure shows on the products it finds (all of the loss but the days' noise).
SAME_PRODUCTS_SHARE = 0.5
SAME_PRODUCTS_SDS = 2.0


class DecayRule:
    name = "decay_vs_reference"
    kinds = frozenset({COVERAGE, COSTED})
    severity = None
    measure = ("7-day average coverage", "below")
    needs_history = True
    statistics = ("observed", "coverage_ma7", "days_in_window", "reference", "reference_days", "rest_reference",
                  "rest_ratio", "ratio_ma7", "weekday_effect", "ratio_weekday_effect", "yesterday_level",
                  "yesterday_ratio_level", "noise_sd", "noise_df",
                  "ratio_noise_sd", "ratio_noise_df", "week_var", "ratio_week_var", "wander_weeks", "source",
                  "risen_reference", "risen_rest_reference", "reference_overlap", "same_products_loss",
                  "same_products_sd")

    def detect(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        rule = settings.decay
        if inputs.is_empty():
            return fired(inputs, self.name)
        judged = _series(inputs, against_rest=settings.drop.against_rest)
        # in the series' own units (coverage, or the ratio to the rest), then in coverage
        spread = pl.col("decay_sd") * critical_value(alpha, pl.col("decay_df"))
        margin = pl.max_horizontal(pl.col("reference_level") * rule.relative,
                                   pl.lit(rule.absolute) / pl.col("scale"), spread)
        own = followed("reference", "risen_reference")
        own_fell = ((pl.col("coverage_ma7") < own * (1 - rule.relative))
                    & (pl.col("coverage_ma7") < own - rule.absolute)).fill_null(False)
        firing = (
            judged.filter(pl.col("reference_level").is_not_null() & pl.col("decay_sd").is_not_null()
                          & own_fell & same_ages("reference_overlap", settings.min_age_overlap))
            .with_columns(
                (pl.col("average_level") * pl.col("scale")).alias("observed"),
                (pl.col("reference_level") * pl.col("scale")).alias("baseline"),
                (pl.col("decay_sd") * pl.col("scale")).alias("std_error"),
                ((pl.col("reference_level") - margin) * pl.col("scale")).alias("threshold"),
                # the tier follows the loss reached: the last two days' level, not the lagging average
                pl.max_horizontal(1 - pl.col("average_level") / pl.col("reference_level"),
                                  1 - pl.col("reached_level") / pl.col("reference_level")).alias("severity_drop"),
            )
            .filter((pl.col("observed") < pl.col("threshold")) & _on_own_products())
            .with_columns(*drop_columns(pl.col("observed"), pl.col("baseline")), _own_products_said())
        )
        return fired(firing, self.name)

    def budget_series(self, judged: pl.DataFrame) -> int:
        return judged.filter(pl.col("reference").is_not_null()).height  # the rows with a reference

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "7-day average coverage", alert.get("against") or "the reference period")


def _series(inputs: pl.DataFrame, *, against_rest: bool) -> pl.DataFrame:
    """Each row's decay series: its own coverage (``OWN_HISTORY`` segments, or any segment
    when ``against_rest`` is off) or its ratio to the rest of traffic, with the null spread of
    the 7-day average against the reference, in that series' units."""
    by_rest = (pl.lit(against_rest) & ~pl.col("segment_dim").is_in(OWN_HISTORY)
               & pl.col("rest_reference").is_not_null() & pl.col("ratio_ma7").is_not_null())
    pick = lambda rest, own: pl.when(by_rest).then(pl.col(rest)).otherwise(pl.col(own))
    series = inputs.with_columns(
        pl.when(by_rest).then(followed("rest_reference", "risen_rest_reference"))
        .otherwise(followed("reference", "risen_reference")).alias("reference_level"),
        pick("ratio_ma7", "coverage_ma7").alias("average_level"),
        # the level of today and the day before, each as a usual weekday's: a decay's tier is
        # neither a weekend's dip nor one noisy day (an incident keeps the highest it reached)
        pl.mean_horizontal(
            pick("rest_ratio", "observed") - pick("ratio_weekday_effect", "weekday_effect").fill_null(0.0),
            pick("yesterday_ratio_level", "yesterday_level")).alias("reached_level"),
        pick("ratio_noise_sd", "noise_sd").alias("level_sd"),
        pick("ratio_noise_df", "noise_df").alias("level_df"),
        pick("ratio_week_var", "week_var").alias("level_week_var"),
        # coverage units per series unit: the rest's average coverage for a ratio
        pl.when(by_rest).then(pl.col("coverage_ma7") / pl.col("ratio_ma7")).otherwise(1.0).alias("scale"),
        pl.when(by_rest).then(pl.lit(AGAINST_REST)).alias("against"),
    )
    return series.with_columns(_wander()).with_columns(_decay_spread())


def _on_own_products() -> pl.Expr:
    """The segment's loss shows on its own products, where they are counted (module doc)."""
    loss = pl.col("baseline") - pl.col("observed")
    shown = pl.col("same_products_loss") >= pl.max_horizontal(
        loss * SAME_PRODUCTS_SHARE, pl.col("same_products_sd").fill_null(0.0) * SAME_PRODUCTS_SDS)
    return shown.fill_null(True)


def _own_products_said() -> pl.Expr:
    """The baseline's words, with what the segment's own products lost where counted: the
    reader of a page sees why a product-age segment's decay is not its products turning over."""
    points = (pl.col("same_products_loss") * 100).round(1)
    return (pl.when(pl.col("same_products_loss").is_not_null())
            .then(pl.format("{}; its products sampled a week apart lost {} points of it",
                            pl.col("against").fill_null("the reference period"), points))
            .otherwise(pl.col("against")).alias("against"))


def followed(reference: str, risen: str) -> pl.Expr:
    """The reference, or the level of a rise held above it since (a launch, a rollout)."""
    return pl.max_horizontal(pl.col(reference), pl.col(risen)).fill_null(pl.col(reference))


def _wander() -> pl.Expr:
    """tau^2, as a multiple of the days' noise: the median over the segment's features of
    their weekly variance less the days' noise in a week's mean, over that noise, or over the
    features of the same source in the segment where those are three or more and wander more
    (the features of one upstream source move together: a source whose documents drift in and
    out of a segment wanders where the segment's other features do not). A median: one
    feature's decline does not move it. 1 while no feature of the segment has two whole weeks."""
    day_var = pl.col("level_sd") ** 2
    ratio = pl.when((pl.col("wander_weeks") >= 2) & (day_var > 0)).then(
        (pl.col("level_week_var") - day_var / 7).clip(lower_bound=0.0) / day_var)
    segment = ["segment_dim", "segment_value"]
    in_source = pl.when(pl.col("source").is_not_null() & (ratio.count().over(*segment, "source") >= 3)).then(
        ratio.median().over(*segment, "source"))
    pooled = pl.max_horizontal(ratio.median().over(*segment), in_source).fill_null(1.0)
    return (day_var * pooled).alias("tau2")


def _decay_spread() -> list[pl.Expr]:
    days_part = pl.col("level_sd") ** 2 * (1 / pl.col("days_in_window") + 1 / pl.col("reference_days"))
    weeks_part = pl.col("tau2") * (1 + 7 / pl.col("reference_days"))
    return [(days_part + weeks_part).sqrt().alias("decay_sd"),
            satterthwaite_df([(days_part, pl.col("level_df").cast(pl.Float64)),
                              (weeks_part, pl.lit(None, pl.Float64))]).alias("decay_df")]
