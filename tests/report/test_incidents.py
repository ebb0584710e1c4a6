"""report_incidents: an open alert and the ongoing ones after it are one incident; the next
open alert starts another; live ones (firing on the last day) come first."""

from datetime import date, timedelta

import duckdb
import pytest

from feco.warehouse import create_schema, named_query

DAY = date(2026, 5, 1)


def alert(day: int, feature: str, segment: tuple[str, str], rule: str, status: str, severity: str,
          observed: float = 0.3) -> tuple:
    ds = DAY + timedelta(days=day)
    return (ds, f"{ds}{feature}{segment}{rule}", feature, *segment, rule, observed, 0.5, 0.45,
            0.5 - observed, (0.5 - observed) / 0.5, severity, status)


@pytest.fixture
def incidents():
    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    rows = [
        alert(0, "f1", ("all", "all"), "drop_vs_moving_average", "open", "medium"),
        alert(1, "f1", ("all", "all"), "drop_vs_moving_average", "ongoing", "critical", observed=0.2),
        alert(4, "f1", ("all", "all"), "drop_vs_moving_average", "open", "low"),
        alert(2, "f2", ("region", "DE"), "decay_vs_reference", "open", "high"),
        alert(3, "f2", ("region", "DE"), "decay_vs_reference", "ongoing", "high"),
        alert(3, "f2", ("region", "DE x head"), "decay_vs_reference", "grouped", "high"),
        alert(4, None, ("region", "BR"), "low_volume", "suppressed", "low"),
    ]
    conn.executemany("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, "
                     "baseline, threshold, drop_abs, drop_rel, severity, status) VALUES "
                     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    for day in range(4):  # NDCG@8 of region DE: 0.7 for three days, then 0.6
        for segment, ndcg in ((("region", "DE"), 0.7 if day < 3 else 0.6), (("all", "all"), 0.8)):
            conn.execute("INSERT INTO ranker_daily VALUES (?, 'm', ?, ?, 10, 10, 0, ?, ?)",
                         [DAY + timedelta(days=day), *segment, 10 * ndcg, 10 * ndcg])
    return named_query(conn, "report_incidents").to_dicts()


def test_open_and_ongoing_alerts_group_into_incidents_live_first(incidents):
    assert [(i["feature"], i["first_ds"].day, i["last_ds"].day, i["days"], i["live"]) for i in incidents] == [
        ("f1", 5, 5, 1, True),    # a new open alert after a gap: a new incident, firing on the last day
        ("f1", 1, 2, 2, False),
        ("f2", 3, 4, 2, False),   # grouped and suppressed rows are not incidents
    ]


def test_an_incident_carries_its_worst_severity_and_its_last_day(incidents):
    first = incidents[1]
    assert first["severity"] == "critical"
    assert first["observed"] == pytest.approx(0.2) and first["drop_rel"] == pytest.approx(0.6)


def test_ndcg_change_is_the_segments_on_the_last_day(incidents):
    decay = incidents[2]
    assert decay["ndcg8_change"] == pytest.approx(-0.1)
    assert decay["ndcg8_change_all"] == pytest.approx(0.0)
    assert incidents[0]["ndcg8_change"] is None  # day 5 was not scored
