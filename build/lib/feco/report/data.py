"""What the report reads from the warehouse, and nothing else: the report works on any file.

Sections whose results come from other steps (ranker runs, sampling studies) are read only
when their table exists and has rows; their frames are then None.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from feco.warehouse import fetch, named_query, quote

# Ranker table -> the named query the report reads it with.
RANKER_QUERIES = {"ranker_daily": "report_ranker_daily", "feature_importance": "report_feature_importance",
                  "coverage_drop_results": "report_coverage_drop"}


@dataclass(frozen=True)
class ReportData:
    """The frames the report draws; None where the warehouse has no such results."""

    coverage: pl.DataFrame          # global segment: ds, feature, coverage, coverage_ma7
    change: pl.DataFrame            # chosen dimension: ds, feature, segment_value, change_points
    product_age: pl.DataFrame       # ds, feature, segment_value, coverage
    region: pl.DataFrame            # ds, feature, segment_value, coverage
    alerts: pl.DataFrame            # open alerts
    segment_dim: str
    study: pl.DataFrame | None
    ranker: dict[str, pl.DataFrame]  # ranker tables that exist and have rows, by name


def load_report_data(conn: duckdb.DuckDBPyConnection, *, segment_dim: str = "region",
                     baseline_days: int = 7, min_rows: int = 500) -> ReportData:
    """Read every frame the report needs from an open warehouse connection.

    Examples
    --------
    >>> with open_read_only(Path("var/demo/feco.duckdb")) as conn:  # doctest: +SKIP
    ...     data = load_report_data(conn, segment_dim="region")
    >>> data.coverage.columns  # doctest: +SKIP
    ['ds', 'feature', 'segment_value', 'n_rows', 'coverage', 'coverage_ma7']
    """
    tables = set(named_query(conn, "report_tables").get_column("table_name").to_list())
    filled = {name for name in tables if _has_rows(conn, name)}
    return ReportData(
        coverage=named_query(conn, "report_coverage", {"segment_dim": "all"}),
        change=named_query(conn, "report_coverage_change", {
            "segment_dim": segment_dim, "baseline_days": baseline_days, "min_rows": min_rows}),
        product_age=named_query(conn, "report_coverage", {"segment_dim": "product_age"}),
        region=named_query(conn, "report_coverage", {"segment_dim": "region"}),
        alerts=named_query(conn, "report_open_alerts") if "alerts" in tables else _no_alerts(),
        segment_dim=segment_dim,
        study=named_query(conn, "report_sampling_study") if "sampling_study" in filled else None,
        ranker={name: named_query(conn, query) for name, query in RANKER_QUERIES.items() if name in filled},
    )


def _has_rows(conn: duckdb.DuckDBPyConnection, table: str) -> bool:
    # The name comes from information_schema, not from a user, and is quoted all the same.
    return fetch(conn, f"SELECT count(*) AS n FROM (SELECT 1 FROM {quote(table)} LIMIT 1)").item() > 0


def _no_alerts() -> pl.DataFrame:
    return pl.DataFrame(schema={"ds": pl.Date, "severity": pl.String, "rule": pl.String,
                                "feature": pl.String, "segment_dim": pl.String,
                                "segment_value": pl.String, "observed": pl.Float64,
                                "baseline": pl.Float64, "drop_abs": pl.Float64,
                                "drop_rel": pl.Float64, "importance": pl.Float64,
                                "n_rows": pl.Int64, "detail": pl.String})
