"""report_incidents: each incident of the incidents table by its latest headline alert, ordered
as paged (severity, then cost), with its span in calendar days and the NDCG@8 change of the
headline's segment."""

from datetime import UTC, date, datetime, timedelta

import duckdb
import pytest

from feco.report.build import _incident_table
from feco.warehouse import create_schema, named_query

DAY = date(2026, 5, 1)


def day(n: int) -> date:
    return DAY + timedelta(days=n)


def alert(n: int, alert_id: str, feature: str, segment: tuple[str, str], rule: str, observed: float) -> tuple:
    return (day(n), alert_id, feature, *segment, rule, observed, 0.5, 0.45, 0.5 - observed,
            (0.5 - observed) / 0.5, "high", "open")


def incident(n: int, incident_id: str, feature: str | None, status: str, severity: str, rank: int,
             headline: str | None) -> tuple:
    return (day(n), incident_id, feature, "all", "all", day(0), status, severity, rank, rank, headline)


def insert_incidents(conn: duckdb.DuckDBPyConnection, rows: list[tuple]) -> None:
    conn.executemany("INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, "
                     "status, severity, severity_rank, paged_rank, headline_alert_id, normal_days, rows_lost, "
                     "alert_ids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, [])", rows)


def insert_cost(conn: duckdb.DuckDBPyConnection, n: int, incident_id: str, d_ndcg8: float) -> None:
    conn.execute("INSERT INTO incident_costs (ds, incident_id, run_id, segment_dim, segment_value, onset, "
                 "reference_days, features, loss_shares, loss_kinds, events, d_ndcg8, d_ndcg8_low, d_ndcg8_high, "
                 "severity) VALUES (?, ?, 'm', 'all', 'all', ?, 7, ['f'], [0.5], ['zero'], 1000, ?, ?, ?, 'high')",
                 [day(n), incident_id, day(0), d_ndcg8, d_ndcg8 - 0.002, d_ndcg8 + 0.002])


@pytest.fixture
def warehouse():
    """An in-memory warehouse holding the incidents below and their alerts."""
    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    conn.executemany("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, "
                     "baseline, threshold, drop_abs, drop_rel, severity, status) VALUES "
                     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
                         alert(0, "a0", "f1", ("region", "DE"), "drop_vs_moving_average", 0.3),
                         alert(1, "a1", "f1", ("region", "DE x head"), "drop_vs_moving_average", 0.2),
                         alert(2, "b2", "f2", ("all", "all"), "decay_vs_reference", 0.4),
                         alert(2, "c2", "f3", ("all", "all"), "drop_vs_moving_average", 0.45),
                     ])
    insert_incidents(conn, [
                         incident(0, "i1", "f1", "open", "high", 3, "a0"),
                         incident(1, "i1", "f1", "ongoing", "critical", 4, "a1"),
                         incident(2, "i1", "f1", "ongoing", "critical", 4, None),  # recovering: no alert
                         incident(2, "i2", "f2", "open", "medium", 2, "b2"),
                         incident(3, "i2", "f2", "resolved", "medium", 2, None),
                         incident(2, "i3", "f3", "open", "info", 0, "c2"),  # too mild to list
                         incident(2, "v1", None, "open", "high", 3, "c2"),  # volume: no feature
                     ])
    for n in range(3):  # NDCG@8: region DE x head 0.7 on day 0, then 0.6; all traffic 0.8
        for segment, ndcg in ((("region", "DE x head"), 0.7 if n < 1 else 0.6), (("all", "all"), 0.8)):
            conn.execute("INSERT INTO ranker_daily VALUES (?, 'm', ?, ?, 10, 10, 0, ?, ?)",
                         [day(n), *segment, 10 * ndcg, 10 * ndcg])
    return conn


@pytest.fixture
def incidents(warehouse):
    return named_query(warehouse, "report_incidents").to_dicts()


def test_each_incident_once_by_its_latest_headline_over_calendar_days(incidents):
    assert [(i["incident_id"], i["live"], i["segment_value"], i["headline_ds"], i["last_ds"], i["resolved_ds"],
             i["days"]) for i in incidents] == [
        ("i1", True, "DE x head", day(1), day(2), None, 3),  # its headline moved to the most localised cell
        # opened on day 0, tracked on days 2 and 3 only (the pipeline skipped day 1), resolved on
        # day 3: four calendar days, not the two rows it has
        ("i2", False, "all", day(2), day(3), day(3), 4),
    ]
    assert incidents[0]["root_dim"] == "all" and incidents[0]["features"] is None  # its own segment


def test_the_costliest_of_a_severity_comes_first_live_or_not():
    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    conn.executemany("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, "
                     "baseline, threshold, drop_abs, drop_rel, severity, status) VALUES "
                     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [alert(1, f"a{f}", f, ("all", "all"), "drop_vs_moving_average", 0.3) for f in ("f1", "f2", "f3")])
    insert_incidents(conn, [
        incident(1, "ended", "f1", "open", "high", 3, "af1"), incident(2, "ended", "f1", "resolved", "high", 3, None),
        incident(1, "live", "f2", "open", "high", 3, "af2"), incident(2, "live", "f2", "ongoing", "high", 3, None),
        incident(1, "uncosted", "f3", "open", "high", 3, "af3"),
        incident(2, "uncosted", "f3", "ongoing", "high", 3, None),
    ])
    insert_cost(conn, 1, "ended", -0.006)
    insert_cost(conn, 1, "live", -0.001)
    rows = named_query(conn, "report_incidents")
    assert rows.get_column("incident_id").to_list() == ["ended", "live", "uncosted"]


def test_an_incident_carries_its_worst_severity_and_its_headlines_numbers(incidents):
    first = incidents[0]
    assert first["severity"] == "critical" and first["first_ds"] == day(0)
    assert first["observed"] == pytest.approx(0.2) and first["drop_rel"] == pytest.approx(0.6)


def test_ndcg_change_is_the_headline_segments_on_its_day(incidents):
    first = incidents[0]
    assert first["ndcg8_change"] == pytest.approx(-0.1)  # day 1's 0.6 against day 0's 0.7
    assert first["ndcg8_change_all"] == pytest.approx(0.0)
    assert incidents[1]["ndcg8_change"] == pytest.approx(0.0)


def test_an_incident_shows_who_acknowledged_resolved_it_by_hand_and_marked_it_noise(warehouse):
    at = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
    warehouse.executemany("INSERT INTO incident_actions (action_id, action, incident_id, ds, reason, actor, acted_at) "
                          "VALUES (?, ?, 'i1', ?, ?, ?, ?)", [
                              ("x1", "ack", day(2), None, "ana", at),
                              ("x2", "resolve", day(2), "fixed <upstream>", "bo", at),
                              ("x3", "noise", day(2), None, "bo", at)])
    row = next(r for r in named_query(warehouse, "report_incidents").to_dicts() if r["incident_id"] == "i1")
    assert (row["live"], row["resolved_ds"], row["acked_by"], row["noise_marks"]) == (False, day(2), "ana", 1)
    table = _incident_table(named_query(warehouse, "report_incidents"), upstream={}, scored=False)
    assert ("acknowledged by ana 2026-05-04 09:30 UTC; resolved by hand by bo (fixed &lt;upstream&gt;); "
            "marked noise") in table


def test_the_first_screen_says_recovered_since_and_the_urgency():
    # issue 62: the costliest incident, back to 42.8% on 11-19, still read "live" with its 7-day
    # average's decay as the headline; one that paged no one looked like one that did
    from feco.report.build import _incidents

    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    conn.executemany("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, "
                     "baseline, threshold, drop_abs, drop_rel, severity, status) VALUES "
                     "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [alert(0, "step", "f1", ("region", "DE"), "drop_vs_moving_average", 0.05),
                      alert(0, "mild", "f2", ("query_band", "tail"), "drop_vs_moving_average", 0.4)])
    conn.executemany("INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, status, "
                     "severity, severity_rank, paged_rank, headline_alert_id, normal_days, rows_lost, alert_ids, event) "
                     "VALUES (?, ?, ?, 'region', 'DE', ?, ?, ?, ?, ?, ?, ?, 0, [], ?)", [
                         (day(0), "paged", "f1", day(0), "open", "critical", 4, 4, "step", 0, "opened"),
                         (day(1), "paged", "f1", day(0), "ongoing", "critical", 4, 4, None, 1, None),
                         (day(2), "paged", "f1", day(0), "ongoing", "critical", 4, 4, None, 0, None),
                         (day(3), "paged", "f1", day(0), "ongoing", "critical", 4, 4, None, 1, None),
                         (day(0), "digest", "f2", day(0), "open", "low", 1, 0, "mild", 0, None)])
    rows = named_query(conn, "report_incidents")
    assert rows.select("incident_id", "recovered_ds", "urgency").rows() == [("paged", day(3), "high"),
                                                                          ("digest", None, "low")]
    conn.execute("INSERT INTO incident_actions (action_id, action, segment_dim, segment_value, held_until, reason, "
                 "actor, acted_at) VALUES ('s1', 'silence', 'region', 'FR', ?, 'a <migration>', 'ana', ?)",
                 [datetime(2026, 5, 9, tzinfo=UTC), datetime(2026, 5, 4, tzinfo=UTC)])
    silences = named_query(conn, "oncall_silences", {"now": datetime(2026, 5, 5, tzinfo=UTC)})
    section = _incidents(rows, upstream={}, scored=False, silences=silences)
    assert section.title == "Incidents: 2 live (1 in the daily digest), 0 ended"
    assert f"recovered since {day(3)}" in section.body and "daily digest" in section.body
    assert "-90.0" in section.body  # the headline stays the step's
    assert "Daily digest (low urgency, paging no one): low f2 in query_band: tail." in section.body  # its headline's
    assert ("Silenced when written (their incidents page no one until then): s1 (segment region=FR) until "
            "2026-05-09T00:00+00:00 by ana: a &lt;migration&gt;.") in section.body
    over = named_query(conn, "oncall_silences", {"now": datetime(2026, 5, 10, tzinfo=UTC)})
    assert "Silenced" not in _incidents(rows, upstream={}, scored=False, silences=over).body
