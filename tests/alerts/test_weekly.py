"""The drop rule's weekly adjustment, on a hand-written history with a weekend dip."""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.detect import alert_inputs, detect_alerts
from feco.warehouse import open_for_write
from logbuilder import make_config, write_states

MONDAY = date(2026, 3, 2)
WEEKDAY, WEEKEND = 0.40, 0.30  # coverage on Monday-Friday and on Saturday-Sunday


def usual(ds: date, week: int) -> float:
    """Weekly pattern plus a small day-to-day wobble, so the spread is not zero."""
    wobble = 0.004 * ((week + ds.weekday()) % 3 - 1)
    return (WEEKEND if ds.weekday() >= 5 else WEEKDAY) + wobble


def drops(tmp_path, last: float, *, weekly: bool, weekday_of_last: int) -> pl.DataFrame:
    """Drop alerts on the day after four weeks of history, that day's coverage being ``last``."""
    days = [MONDAY + timedelta(days=i) for i in range(28 + weekday_of_last + 1)]
    coverages = {ds: usual(ds, i // 7) for i, ds in enumerate(days)}
    coverages[days[-1]] = last
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": []},
                         alerts={"min_rows": 100, "weekly": weekly})
    with open_for_write(config.paths.warehouse) as conn:
        write_states(conn, coverages)
        found = detect_alerts(conn, days[-1], config=config)
    return found.filter(pl.col("rule") == "drop_vs_moving_average")


@pytest.mark.parametrize("weekly", [True, False])
def test_a_usual_weekend_dip_is_not_a_drop(tmp_path, weekly):
    # A 25% dip against the 7-day mean, but every Saturday looks like this.
    assert drops(tmp_path, WEEKEND, weekly=weekly, weekday_of_last=5).height == 0


def test_a_weekday_at_weekend_level_is_a_drop_only_once_the_week_is_known(tmp_path):
    # Tuesday at the weekend level: 20% below the 7-day mean (0.371). Without the weekly
    # pattern the weekend days' spread (sd 0.05) hides it; with it, Tuesday is expected at 0.40.
    with_pattern = drops(tmp_path / "weekly", WEEKEND, weekly=True, weekday_of_last=1)
    without = drops(tmp_path / "plain", WEEKEND, weekly=False, weekday_of_last=1)
    assert without.height == 0
    assert with_pattern.height == 1
    row = with_pattern.row(0, named=True)
    assert row["baseline"] == pytest.approx(WEEKDAY, abs=0.005)
    assert row["drop_rel"] == pytest.approx(0.25, abs=0.02)


def test_the_day_before_is_read_at_a_usual_weekday_s_level(tmp_path):
    # A decay's tier reads today's and the day before's levels each as a usual weekday's: on a
    # Monday, Sunday's 0.30 is the week's mean level once Sunday's effect, not Monday's, is added back.
    days = [MONDAY + timedelta(days=i) for i in range(36)]  # five weeks and a Monday
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": []},
                         alerts={"min_rows": 100})
    with open_for_write(config.paths.warehouse) as conn:
        write_states(conn, {ds: usual(ds, i // 7) for i, ds in enumerate(days)})
        row = alert_inputs(conn, days[-1], alerts=config.alerts).row(0, named=True)
    assert row["yesterday_level"] == pytest.approx((5 * WEEKDAY + 2 * WEEKEND) / 7, abs=0.005)
