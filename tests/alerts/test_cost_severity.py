"""Severity from cost, piece by piece on hand-made rows: the loss an incident shows, its clean
reference days, the tier of a cost and what it does to the day's alerts and pages."""

import re
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

import feco.alerts
from feco.alerts.cost_severity import clean_days, cost_tiers, with_cost_severity
from feco.alerts.incidents import SCHEMA, track_incidents
from feco.config import CostTiers, Incidents, SeveritySettings
from feco.ranker.incident_cost import observed_losses
from feco.ranker.perturb import Loss
from feco.warehouse import create_schema

DAY = date(2026, 11, 20)
SEGMENT = ("region", "DE")


@pytest.fixture
def conn():
    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    return conn


def states(conn, ds, feature, *, rows, present, covered, segment=SEGMENT):
    conn.execute("INSERT INTO coverage_states VALUES (?, 0, ?, ?, ?, ?, ?, ?)",
                 [ds, feature, *segment, rows, present, covered])


def test_the_loss_is_the_share_of_covered_rows_lost_and_says_whether_they_turned_null(conn):
    reference = [DAY - timedelta(days=d) for d in (1, 2)]
    for ds in reference:
        states(conn, ds, "ctr", rows=1000, present=1000, covered=500)
        states(conn, ds, "rating", rows=1000, present=900, covered=800)
        states(conn, ds, "steady", rows=1000, present=1000, covered=300)
    states(conn, DAY, "ctr", rows=500, present=500, covered=25)          # zeroed: 90% of covered rows lost
    states(conn, DAY, "rating", rows=500, present=250, covered=200)      # half turned NULL
    states(conn, DAY, "steady", rows=500, present=500, covered=160)      # up, not lost
    states(conn, DAY, "ctr", rows=500, present=500, covered=0, segment=("region", "US"))  # elsewhere
    losses = observed_losses(conn, DAY, ["ctr", "rating", "steady"], SEGMENT, reference)
    assert losses == [Loss("ctr", 0.9, "zero"), Loss("rating", 0.5, "null")]
    assert observed_losses(conn, DAY, ["ctr"], SEGMENT, []) == []


def test_clean_days_skip_the_days_a_feature_alerted_there_and_the_models_training_days(conn):
    days = [DAY - timedelta(days=d) for d in range(1, 12)]
    conn.executemany("INSERT INTO runs (ds, published_at, events_sampled, rows_sampled, features, config_digest) "
                     "VALUES (?, now(), 1, 1, 1, 'x')", [[d] for d in days])
    alerted = {days[0]: ("ctr", "all", "all"),                    # all traffic holds DE: not clean
               days[1]: ("ctr", "region x query_band", "DE x head"),  # within DE: not clean
               days[2]: ("ctr", "region", "US"),                 # elsewhere: clean
               days[3]: ("other", "region", "DE")}               # another feature: clean
    for ds, (feature, dim, value) in alerted.items():
        conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, severity, status) "
                     "VALUES (?, ?, ?, ?, ?, 'drop_vs_moving_average', 'high', 'open')",
                     [ds, f"a{ds}", feature, dim, value])
    settings = SeveritySettings(reference_days=4, lookback_days=28)
    found = clean_days(conn, ["ctr"], SEGMENT, onset=DAY, after=days[7], settings=settings)
    assert found == sorted(days[2:6])
    # the model learned from the days up to `after`: only the days since can be replayed
    assert clean_days(conn, ["ctr"], SEGMENT, onset=DAY, after=days[4], settings=settings) == sorted(days[2:4])


def test_a_cost_allows_the_tiers_between_the_loss_it_supports_and_its_worse_end():
    tiers = CostTiers(critical=0.01, high=0.005, medium=0.002)

    def allowed(d, low, high):
        return cost_tiers({"d_ndcg8": d, "d_ndcg8_low": low, "d_ndcg8_high": high}, tiers)

    assert allowed(-0.012, -0.02, -0.006) == ("critical", "critical")
    assert allowed(-0.003, -0.006, -0.001) == ("medium", "high")  # a loss: at least its estimate's tier
    assert allowed(-0.003, -0.006, 0.001) == ("low", "high")      # no loss ruled out: nothing supported
    assert allowed(0.001, -0.001, 0.004) == ("low", "low")
    assert allowed(None, None, None) == ("low", "low")
    with pytest.raises(ValueError, match="tiers must shrink"):
        CostTiers(critical=0.001, high=0.005, medium=0.002)


def alert(alert_id, rule, severity, segment=("region", "DE"), feature="ctr"):
    return {"alert_id": alert_id, "feature": feature, "segment_dim": segment[0], "segment_value": segment[1],
            "rule": rule, "severity": severity, "status": "open", "parent_id": None, "drop_rel": 0.9,
            "drop_abs": 0.4, "n_rows": 5000, "threshold": 0.4, "detail": f"{feature} fell ({rule})"}


def test_a_cheap_incident_loses_its_page_and_a_costly_one_is_paged_at_its_cost():
    alerts = pl.DataFrame([alert("a", "drop_vs_moving_average", "critical"),
                           alert("b", "missing_values", "high", feature="rating"),
                           alert("c", "drop_vs_moving_average", "critical", feature="rating")])
    coverage = pl.DataFrame([("ctr", "region", "DE", 5000, 0.05), ("ctr", "all", "all", 20000, 0.4),
                             ("rating", "region", "DE", 5000, 0.4), ("rating", "all", "all", 20000, 0.8)],
                            schema=["feature", "segment_dim", "segment_value", "n_rows", "coverage"], orient="row")

    def track(alerts):
        return track_incidents(alerts, pl.DataFrame(schema=SCHEMA), coverage, ds=DAY, history_days=30,
                               settings=Incidents(page_after_days=14))

    incidents = track(alerts)
    assert incidents["event"].to_list() == ["opened", "opened"]
    ids = dict(zip(incidents["feature"], incidents["incident_id"]))
    costs = pl.DataFrame([
        {"incident_id": ids["ctr"], "segment_dim": "region", "segment_value": "DE", "d_ndcg8": -0.0004,
         "d_ndcg8_low": -0.0011, "d_ndcg8_high": 0.0003, "severity": "low"},
        {"incident_id": ids["rating"], "segment_dim": "region", "segment_value": "DE", "d_ndcg8": -0.004,
         "d_ndcg8_low": -0.006, "d_ndcg8_high": -0.002, "severity": "high"}])
    costed = with_cost_severity(alerts, incidents, costs, tiers=CostTiers(), shares={"ctr": 0.2, "rating": 0.1})
    assert costed["severity"].to_list() == ["low", "high", "high"]  # a missing-values alert keeps its tier
    assert costed["detail"][0] == ("ctr fell (drop_vs_moving_average); costs an estimated -0.000 NDCG@8 in "
                                   "region=DE (-0.001 to +0.000)")
    again = track(costed)
    assert dict(zip(again["feature"], again["event"])) == {"ctr": None, "rating": "opened"}
    assert dict(zip(again["feature"], again["severity"])) == {"ctr": "low", "rating": "high"}


def test_the_alerts_import_nothing_of_the_ranker():
    """The detect step hands the alerts their cost function (feco.ranker.incident_cost): the
    ranker can be reorganised without the alerts knowing."""
    package = Path(feco.alerts.__file__).parent
    importing = [path.relative_to(package) for path in package.rglob("*.py")
                 if re.search(r"^\s*(from|import) feco\.ranker", path.read_text(), re.MULTILINE)]
    assert importing == []
