"""Which headlines are 'ongoing' (listed, not paged again)."""

from datetime import date

import polars as pl

from feco.alerts.detect import _ongoing

DS = date(2026, 3, 10)


def test_a_decay_stays_ongoing_for_a_week_a_drop_for_a_day():
    alerts = pl.DataFrame({
        "feature": ["f"] * 4, "segment_dim": ["region"] * 4, "segment_value": ["DE", "DE", "FR", "UK"],
        "rule": ["decay_vs_reference", "drop_vs_moving_average", "decay_vs_reference", "decay_vs_reference"],
        "status": ["open", "open", "open", "grouped"],
    })
    recent = pl.DataFrame({
        "feature": ["f"] * 4, "segment_dim": ["region"] * 4, "segment_value": ["DE", "DE", "FR", "UK"],
        "rule": ["decay_vs_reference", "drop_vs_moving_average", "decay_vs_reference", "decay_vs_reference"],
        "last_ds": [date(2026, 3, 4), date(2026, 3, 8), date(2026, 3, 2), date(2026, 3, 9)],
    })
    # DE decay 6 days ago: ongoing; DE drop 2 days ago: a new incident; FR decay 8 days ago:
    # paged again; a grouped alert keeps its status.
    assert _ongoing(alerts, recent, DS, 7)["status"].to_list() == ["ongoing", "open", "open", "grouped"]
    assert _ongoing(alerts, recent.clear(), DS, 7)["status"].to_list() == ["open", "open", "open", "grouped"]
