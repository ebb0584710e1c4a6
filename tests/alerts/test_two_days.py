"""The drop rule's two-day test through detect_alerts, on a hand-written history."""

from datetime import date, timedelta

import polars as pl

from feco.alerts.detect import detect_alerts
from feco.warehouse import open_for_write
from logbuilder import make_config, write_states

START = date(2026, 3, 2)
USUAL, LOW = 0.40, 0.33  # LOW is 3.3 day-sd under USUAL: under k_days=4, over k_two_days=2


def drop_alerts(tmp_path, last_two: tuple[float, float]) -> pl.DataFrame:
    """Drop alerts on the last of 30 days: 28 usual ones (sd 0.02), then ``last_two``."""
    days = [START + timedelta(days=i) for i in range(30)]
    coverages = {ds: USUAL + 0.024 * (i % 3 - 1) for i, ds in enumerate(days)}
    coverages[days[-2]], coverages[days[-1]] = last_two
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": []},
                         alerts={"min_rows": 100, "weekly": False, "drop": {"k_days": 4.0, "k_two_days": 2.0}})
    with open_for_write(config.paths.warehouse) as conn:
        write_states(conn, coverages)
        assert detect_alerts(conn, days[-2], config=config).filter(pl.col("rule") == "drop_vs_moving_average").is_empty()
        found = detect_alerts(conn, days[-1], config=config)
    return found.filter(pl.col("rule") == "drop_vs_moving_average")


def test_a_drop_within_the_one_day_margin_fires_on_its_second_day(tmp_path):
    fired = drop_alerts(tmp_path, (LOW, LOW))
    assert fired.height == 1
    row = fired.row(0, named=True)
    assert row["observed"] == LOW and row["status"] == "open"
    assert "second day running" in row["detail"]


def test_one_low_day_or_a_recovered_one_does_not_fire(tmp_path):
    assert drop_alerts(tmp_path / "first", (USUAL, LOW)).is_empty()
    assert drop_alerts(tmp_path / "recovered", (LOW, USUAL)).is_empty()
