"""The drop rule against the rest of traffic, through detect_alerts and its SQL inputs."""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.detect import detect_alerts
from feco.warehouse import open_for_write
from logbuilder import make_config, write_states

START = date(2026, 3, 2)
USUAL = 0.40


def drop_alerts(tmp_path, last_day: dict[str, float], *, k_rest: float = 4.0) -> pl.DataFrame:
    """Drop alerts on day 29 of regions A and B, which swing together by ±10% a day (too wide
    for a 20% drop to clear 3.25 day-sd), their coverages that day being ``last_day``."""
    days = [START + timedelta(days=i) for i in range(29)]
    swing = {ds: USUAL * (1 + 0.1 * (i % 3 - 1)) for i, ds in enumerate(days)}
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": ["region"]},
                         alerts={"min_rows": 100, "weekly": False, "drop": {"k_rest": k_rest}})
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
    assert row["baseline"] == pytest.approx(USUAL, abs=0.002) and row["status"] == "open"
    assert "rest of traffic" in row["detail"]


def test_a_swing_of_all_traffic_or_the_test_off_raises_nothing(tmp_path):
    assert drop_alerts(tmp_path / "swing", {"A": 0.34, "B": 0.34}).is_empty()
    assert drop_alerts(tmp_path / "off", {"A": 0.32, "B": USUAL}, k_rest=0.0).is_empty()

