"""Alert rules, one small class each (Deequ's strategy pattern).

A rule looks at the day's inputs, one row per feature and segment (see
``sql/queries/alert_inputs.sql``), and returns the rows that fire, with the observed value,
the baseline and the threshold that made each fire. A fired alert is a row, not an exception.
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


class Rule(Protocol):
    name: str
    needs_history: bool

    def detect(self, inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
        """The rows of ``inputs`` that fire, in ``FIRED_SCHEMA``."""

    def describe(self, alert: dict) -> str:
        """One readable line for a fired row: what dropped where, against what, by how much."""


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
