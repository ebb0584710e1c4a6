"""The drop rule against the rest of traffic, through detect_alerts and its SQL inputs."""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.detect import detect_alerts
from feco.warehouse import open_for_write
from logbuilder import make_config, write_states

START = date(2026, 3, 2)
USUAL = 0.40


def drop_alerts(tmp_path, last_day: dict[str, float], *, against_rest: bool = True) -> pl.DataFrame:
    """Drop alerts on day 29 of regions A and B, which swing together by ±10% a day (too wide
    for a 20% drop to clear the budget's critical value of their own days' sd), their
    coverages that day being ``last_day``."""
    days = [START + timedelta(days=i) for i in range(29)]
    swing = {ds: USUAL * (1 + 0.1 * (i % 3 - 1)) for i, ds in enumerate(days)}
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": ["region"]},
                         alerts={"min_rows": 100, "weekly": False, "drop": {"against_rest": against_rest}})
    with open_for_write(config.paths.warehouse) as conn:
        regions = {name: swing | {days[-1]: last_day[name]} for name in ("A", "B")}
        for name, coverages in regions.items():
            write_states(conn, coverages, ("region", name))
        write_states(conn, {ds: (regions["A"][ds] + regions["B"][ds]) / 2 for ds in days}, rows_per_window=2000)
        found = detect_alerts(conn, days[-1], config=config)
    return found.filter(pl.col("rule") == "drop_vs_moving_average")


def test_a_drop_in_one_segment_shows_against_the_rest_of_traffic(tmp_path):
    fired = drop_alerts(tmp_path, {"A": 0.32, "B": USUAL})
    assert fired.select("segment_dim", "segment_value").rows() == [("region", "A")]
    row = fired.row(0, named=True)
    # its usual share of the rest today (USUAL), at most what its own days predict: their last
    # week's mean, 0.394 on the swing's phase
    own = sum(USUAL * (1 + 0.1 * (i % 3 - 1)) for i in range(21, 28)) / 7
    assert row["baseline"] == pytest.approx(min(USUAL, own), abs=0.002) and row["status"] == "open"
    assert "rest of traffic" in row["detail"]


def test_a_swing_of_all_traffic_or_the_test_off_raises_nothing(tmp_path):
    assert drop_alerts(tmp_path / "swing", {"A": 0.34, "B": 0.34}).is_empty()
    assert drop_alerts(tmp_path / "off", {"A": 0.32, "B": USUAL}, against_rest=False).is_empty()



def test_an_outage_day_leaves_a_segment_s_spread_whether_or_not_it_alerted(tmp_path):
    # An outage of all traffic on day 15. Left in a segment's history it would widen the
    # segment's day-to-day sd tenfold and hide the next drop of its own; it leaves by its own
    # value (robust statistics), not by the alerts a day raised, which its own alerts can empty.
    from feco.alerts.detect import alert_inputs

    days = [START + timedelta(days=i) for i in range(29)]
    outage = days[15]
    coverages = {ds: 0.05 if ds == outage else USUAL + 0.01 * (i % 2) for i, ds in enumerate(days)}
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": ["region"]},
                         alerts={"min_rows": 100})

    def region_sd(conn) -> float:
        inputs = alert_inputs(conn, days[-1], alerts=config.alerts)
        return inputs.filter(pl.col("segment_value") == "A")["baseline_sd"].item()

    with open_for_write(config.paths.warehouse) as conn:
        for segment in (("region", "A"), ("region", "B"), ("all", "all")):
            write_states(conn, coverages, segment)
        without_alert = region_sd(conn)
        conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, severity, status) "
                     "VALUES (?, 'a1', 'f_dense', 'all', 'all', 'drop_vs_moving_average', 'critical', 'open')", [outage])
        with_alert = region_sd(conn)
    assert without_alert == with_alert < 0.01
