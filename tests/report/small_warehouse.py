"""A small warehouse for the report's tests: three features over twelve days in a few
segments, eng_ctr falling in region DE on day 9 (an open alert and the incident it opened),
region BR launched on day 5; ``add_attribution`` adds the daily SHAP the score step stores,
eng_ctr's share falling with its coverage."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import duckdb

from feco.warehouse import create_schema

START = date(2026, 3, 1)
DAYS = 12
FEATURES = ["eng_ctr", "meta_rating", "text_bm25"]


def _states(ds: date, day: int) -> list[tuple]:
    """Coverage counts for one day: eng_ctr drops on day 9 in DE; region BR starts on day 5."""
    rows = []
    segments = [("all", "all", 1000), ("region", "US", 600), ("region", "DE", 400),
                ("product_age", "new", 200), ("product_age", "established", 800)]
    if day >= 5:
        segments.append(("region", "BR", 100 + 20 * day))
    for feature, base in zip(FEATURES, (0.5, 0.9, 0.97)):
        for dim, value, n in segments:
            share = base - (0.3 if dim == "product_age" and value == "new" and feature == "eng_ctr" else 0)
            if feature == "eng_ctr" and day == 9 and value in ("DE", "all"):
                share -= 0.4 if value == "DE" else 0.16
            rows.append((ds, 0, feature, dim, value, n, n, round(n * share)))
    return rows


def build(path: Path) -> Path:
    with duckdb.connect(str(path)) as conn:
        create_schema(conn, moving_average_days=7)
        for day in range(DAYS):
            conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             _states(START + timedelta(days=day), day))
        conn.execute(
            "INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, "
            "baseline, threshold, drop_abs, drop_rel, severity, status, n_rows, detail) VALUES "
            "(?, 'a1', 'eng_ctr', 'region', 'DE', 'drop_vs_moving_average', 0.1, 0.5, 0.45, 0.4, 0.8, "
            "'critical', 'open', 400, 'eng_ctr fell in DE')", [START + timedelta(days=9)])
        conn.execute(
            "INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, status, "
            "severity, severity_rank, paged_rank, normal_days, rows_lost, headline_alert_id, alert_ids) VALUES "
            "($ds, 'i1', 'eng_ctr', 'region', 'DE', $ds, 'open', 'critical', 4, 4, 0, 160, 'a1', ['a1'])",
            {"ds": START + timedelta(days=9)})
    return path


def add_attribution(conn: duckdb.DuckDBPyConnection) -> None:
    """shap_daily rows for every day in all traffic and region DE: |SHAP| sums 30, 50, 20 over
    100 explained rows (eng_ctr's share 0.3), eng_ctr's falling to 10 in DE on day 9 (0.125)."""
    rows = []
    for day in range(DAYS):
        for dim, value in (("all", "all"), ("region", "DE")):
            for feature, total in zip(FEATURES, (30.0, 50.0, 20.0)):
                fallen = feature == "eng_ctr" and day == 9 and value == "DE"
                rows.append((START + timedelta(days=day), "ref", feature, dim, value, 1000, 100,
                             10.0 if fallen else total))
    conn.executemany("INSERT INTO shap_daily VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)


def add_incidents(conn: duckdb.DuckDBPyConnection) -> None:
    """Incidents as a demo's report has them, with the cost each replayed: text_bm25 in region US
    (critical, resolved on day 6, the costliest), meta_rating's values turning NULL in all
    traffic (high, live; its rule fires above a NULL share) and eng_ctr in DE (build's, critical,
    live). Ordered as paged: critical before high, the costliest first."""
    day = [START + timedelta(days=d) for d in range(DAYS)]
    conn.executemany(
        "INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, baseline, threshold, "
        "drop_abs, drop_rel, severity, status, n_rows, detail) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', 600, '')",
        [(day[4], "a2", "text_bm25", "region", "US", "decay_vs_reference", 0.5, 0.97, 0.873, 0.47, 0.4845, "critical"),
         (day[10], "a3", "meta_rating", "all", "all", "missing_values", 0.534, 0.128, 0.178, -0.406, None, "high")])
    conn.executemany(
        "INSERT INTO incidents (ds, incident_id, feature, segment_dim, segment_value, opened_ds, status, severity, "
        "severity_rank, paged_rank, normal_days, rows_lost, headline_alert_id, alert_ids, source, features) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 100, ?, [], ?, ?)",
        [(day[3], "i2", "text_bm25", "region", "US", day[3], "open", "high", 3, 3, None, None, ["text_bm25"]),
         (day[4], "i2", "text_bm25", "region", "US", day[3], "ongoing", "critical", 4, 4, "a2", None, ["text_bm25"]),
         (day[6], "i2", "text_bm25", "region", "US", day[3], "resolved", "critical", 4, 4, None, None, ["text_bm25"]),
         (day[10], "i3", "meta_rating", "all", "all", day[10], "open", "high", 3, 3, "a3", "metadata",
          ["meta_rating"])])
    conn.executemany(
        "INSERT INTO incident_costs (ds, incident_id, run_id, segment_dim, segment_value, onset, reference_days, "
        "features, loss_shares, loss_kinds, events, d_ndcg8, d_ndcg8_low, d_ndcg8_high, severity) "
        "VALUES (?, ?, 'ref', ?, ?, ?, 7, [?], [0.5], ['zero'], 5000, ?, ?, ?, 'high')",
        [(day[4], "i2", "region", "US", day[3], "text_bm25", -0.0200, -0.0310, -0.0090),
         (day[9], "i1", "region", "DE", day[9], "eng_ctr", -0.0046, -0.0094, -0.0002),
         (day[10], "i3", "all", "all", day[10], "meta_rating", -0.0012, -0.0037, 0.0012)])
