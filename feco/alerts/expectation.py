"""What the drop rule expected of each day: the same inputs and margins as detection, kept
for every segment it judged, fired or not, so a chart can draw the band an alert fired below."""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl

from feco.alerts.detect import alert_inputs, day_alpha, judged_on_history
from feco.alerts.rules.drop import DropRule
from feco.config import Alerts

BAND_SCHEMA = {"ds": pl.Date, "feature": pl.String, "segment_dim": pl.String, "segment_value": pl.String,
               "expected": pl.Float64, "lower": pl.Float64}


def expected_coverage(conn: duckdb.DuckDBPyConnection, days: list[date], *, alerts: Alerts,
                      moving_average_days: int = 7) -> pl.DataFrame:
    """Per day, feature and segment the drop rule judged: the coverage it expected
    (``expected``, the previous days' mean shifted by the weekday's usual deviation) and the
    coverage below which it fires against that (``lower``).

    Segments too small that day, and days before the rule's warm-up, are left out: the rule
    does not judge them. Each day is read as detection reads it (``alert_inputs``), so the band
    is the rule's own, not a look-alike.

    Examples
    --------
    On the demo's warehouse (``make demo``; not run as a doctest: it needs weeks of data)::

        with open_read_only(Path("var/demo/feco.duckdb")) as conn:
            band = expected_coverage(conn, [date(2026, 11, 16)], alerts=config.alerts)
        band.columns
        # ['ds', 'feature', 'segment_dim', 'segment_value', 'expected', 'lower']
    """
    rule = DropRule()
    frames = [pl.DataFrame(schema=BAND_SCHEMA)]
    for ds in days:
        inputs = alert_inputs(conn, ds, alerts=alerts, moving_average_days=moving_average_days)
        band = rule.band(judged_on_history(inputs, alerts), alerts, day_alpha(inputs, alerts)).drop_nulls("expected")
        frames.append(band.with_columns(pl.lit(ds).alias("ds")).select(BAND_SCHEMA.keys()))
    return pl.concat(frames)
