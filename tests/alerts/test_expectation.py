"""The band the report draws is the drop rule's own: on a day it fires, the rule's baseline and
threshold; on a usual weekend dip, an expectation that already holds the dip."""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.detect import detect_alerts
from feco.alerts.expectation import expected_coverage
from feco.report.cube import heatmap_grids, pack_cube
from feco.warehouse import named_query, open_for_write
from logbuilder import make_config, write_states

MONDAY = date(2026, 3, 2)
WEEKDAY, WEEKEND = 0.40, 0.30
DAYS = [MONDAY + timedelta(days=i) for i in range(30)]  # four weeks, then Saturday ... Tuesday
TUESDAY = DAYS[-1]
SATURDAY = DAYS[-4]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """Four weeks with a weekend dip, then a usual weekend and a Tuesday at the weekend level."""
    coverages = {ds: (WEEKEND if ds.weekday() >= 5 else WEEKDAY) + 0.004 * ((i // 7 + ds.weekday()) % 3 - 1)
                 for i, ds in enumerate(DAYS)}
    coverages[TUESDAY] = WEEKEND
    config = make_config(tmp_path_factory.mktemp("expectation"), logs={"features": ["f_dense"]}, coverage={}, segments={"dimensions": []},
                         alerts={"min_rows": 100})
    with open_for_write(config.paths.warehouse) as conn:
        write_states(conn, coverages)
        fired = detect_alerts(conn, TUESDAY, config=config)
        band = expected_coverage(conn, DAYS, alerts=config.alerts)
        coverage = named_query(conn, "report_coverage")
    return fired, band, coverage


def test_on_the_day_the_rule_fires_the_band_is_its_baseline_and_threshold(warehouse):
    fired, band, _ = warehouse
    alert = fired.filter(pl.col("rule") == "drop_vs_moving_average").row(0, named=True)
    day = band.filter(pl.col("ds") == TUESDAY).row(0, named=True)
    assert day["expected"] == pytest.approx(alert["baseline"], abs=1e-9)
    assert day["lower"] == pytest.approx(alert["threshold"], abs=1e-9)
    assert alert["observed"] < day["lower"]


def test_a_usual_weekend_dip_is_inside_the_band(warehouse):
    _, band, _ = warehouse
    saturday = band.filter(pl.col("ds") == SATURDAY).row(0, named=True)
    assert saturday["expected"] == pytest.approx(WEEKEND, abs=0.006)  # not the 7-day mean, 0.37
    assert saturday["lower"] < WEEKEND


def test_the_first_week_is_not_judged(warehouse):
    _, band, _ = warehouse
    assert band.get_column("ds").min() == DAYS[7]  # warmup_days of history first


def test_heatmap_scores_a_weekend_dip_as_usual_and_the_drop_past_the_alert_line(warehouse):
    _, band, coverage = warehouse
    cube = pack_cube(coverage, band)
    scores = heatmap_grids(cube, coverage, band, min_rows=100)["all"]["z"][0]
    day = {ds: d for d, ds in enumerate(cube["days"])}
    assert -1 < scores[day[SATURDAY.isoformat()]] < 1
    assert scores[day[TUESDAY.isoformat()]] < -1
    # against a plain 7-day mean the Saturday would look like a 19% drop
    plain = coverage.filter(pl.col("ds") < SATURDAY).tail(7).get_column("coverage").mean()
    assert (plain - WEEKEND) / plain > 0.15
