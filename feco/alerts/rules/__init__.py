"""Alert rules, one small class each (Deequ's strategy pattern).

A rule looks at the day's inputs, one row per feature and segment (see
``sql/queries/alert_inputs.sql``), and returns the rows that fire, with the observed value,
the baseline and the threshold that made each fire. A fired alert is a row, not an exception.

Each rule says what it is (its name, its kinds, a fixed tier if any, what its observed value
measures) and how many series it adds to the false-page budget; ``registry.RULES`` lists them,
and every place that treats rules alike (detect, the budget, incidents, severity, cost, the
report) reads them there, SQL through lists of rule names bound from ``registry.rule_lists``.
"""

from __future__ import annotations

from typing import Protocol

import polars as pl

from feco.config import Alerts

FIRED_SCHEMA = {
    "feature": pl.String,
    "segment_dim": pl.String,
    "segment_value": pl.String,
    "rule": pl.String,
    "observed": pl.Float64,
    "baseline": pl.Float64,
    "threshold": pl.Float64,
    "drop_abs": pl.Float64,
    "drop_rel": pl.Float64,
    "std_error": pl.Float64,
    "n_rows": pl.Int64,
    "against": pl.String,  # what the baseline is, when not the rule's usual one (for the detail)
    "severity_drop": pl.Float64,  # the drop the tier is set by, when not drop_rel (a decay's reached loss)
}


# The kinds a rule may be of (``Rule.kinds``); the places that treat rules alike ask for one.
# Its observed value is a coverage: its threshold is the segment's normal floor (an incident
# resolves above it), and the report marks its alerts on the coverage trends.
COVERAGE = "coverage"
# It marks a failure that starts on one day: several features of one source failing so on the
# same day in the same segment are one outage.
STEP = "step"
# It is judged against a weekly pattern: before page_after_days of history a weekend's usual
# swing looks like its failure, so it lists and does not page.
LEARNT = "learnt"
# Its tier follows what its incident's loss costs the ranker, where that cost is known.
COSTED = "costed"
# A day it fires on is not a normal day: the decay rule's wander leaves that week out.
ABNORMAL_DAY = "abnormal_day"
KINDS = (COVERAGE, STEP, LEARNT, COSTED, ABNORMAL_DAY)


class Rule(Protocol):
    name: str
    kinds: frozenset[str]
    severity: str | None  # a fixed tier, whatever the drop (None: from the drop and the ranker)
    measure: tuple[str, str | None]  # what its observed value is, and the side of the threshold it fires on

    def describe(self, alert: dict) -> str:
        """One readable line for a fired row: what dropped where, against what, by how much."""


class InputRule(Rule, Protocol):
    """A rule judged on the day's inputs, one row per feature and segment."""

    needs_history: bool
    # The columns of the day's inputs it reads besides feature, segment and n_rows: the
    # statistics ``sql/queries/alert_inputs.sql`` must give it (detect refuses a rule without them).
    statistics: tuple[str, ...]

    def detect(self, inputs: pl.DataFrame, settings: Alerts, alpha: float) -> pl.DataFrame:
        """The rows of ``inputs`` that fire, in ``FIRED_SCHEMA``; ``alpha`` is the day's
        per-series false-alarm rate under the false-page budget (``feco.alerts.budget``)."""

    def budget_series(self, judged: pl.DataFrame) -> int:
        """How many series this rule judges among ``judged`` (the pageable rows with enough
        sampled rows): its share of the false-page budget's N."""


def segment_name(row: dict) -> str:
    """'all traffic' or 'dim=value'."""
    return "all traffic" if row["segment_dim"] == "all" else f"{row['segment_dim']}={row['segment_value']}"


def coverage_line(alert: dict, measure: str, against: str) -> str:
    """The line of a coverage rule: '<feature> in <segment>: <measure> X% vs Y% for <against>
    (-N points, -R%, Z SE)'."""
    line = (f"{alert['feature']} in {segment_name(alert)}: {measure} {alert['observed']:.1%} vs "
            f"{alert['baseline']:.1%} for {against} ({-alert['drop_abs'] * 100:+.1f} points")
    if alert["drop_rel"] is not None:
        line += f", {-alert['drop_rel']:+.0%}"
    if alert["std_error"]:
        line += f", {alert['drop_abs'] / alert['std_error']:.1f} SE"
    return line + ")"


def fired(frame: pl.DataFrame, rule: str) -> pl.DataFrame:
    """Shape a rule's firing rows into ``FIRED_SCHEMA``."""
    return frame.with_columns(pl.lit(rule).alias("rule")).select(
        pl.col(name).cast(dtype) if name in frame.columns or name == "rule"
        else pl.lit(None, dtype).alias(name)
        for name, dtype in FIRED_SCHEMA.items()
    )


def drop_columns(observed: pl.Expr, baseline: pl.Expr) -> list[pl.Expr]:
    return [
        (baseline - observed).alias("drop_abs"),
        ((baseline - observed) / pl.when(baseline > 0).then(baseline)).alias("drop_rel"),
    ]


# Judged against their own history, never against the rest of traffic: all traffic has no
# rest, and the rest of new products is the established ones (and back), which change by
# construction as products age from one into the other.
OWN_HISTORY = ("all", "product_age")


def same_ages(overlap: str, minimum: float) -> pl.Expr:
    """The row's segment holds enough of the product ages its history held (``overlap``, a
    column of ``alert_inputs``; NULL, for segments that are not judged by their age mix,
    passes)."""
    return (pl.col(overlap) >= minimum).fill_null(True)
