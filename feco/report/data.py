"""What the report reads from the warehouse, and nothing else: the report works on any file.

Results that come from other steps (ranker runs, experiments, sampling studies) are read
only when their table exists and has rows; their frames are then None.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from feco.alerts.expectation import expected_coverage
from feco.alerts.rules import COVERAGE, registry
from feco.config import Alerts
from feco.errors import DataError, UsageError
from feco.sql_files import schema_relations
from feco.warehouse import fetch, named_query, quote

# Optional result -> (the table it needs rows in, the named query that reads it).
OPTIONAL = {
    "ndcg": ("ranker_daily", "report_ranker_daily"),
    "shap": ("shap_daily", "report_shap_daily"),
    "grid": ("coverage_drop_results", "report_coverage_drop"),
    "study": ("sampling_study", "report_sampling_study"),
    "at_risk": ("served_daily", "ndcg_at_risk_report"),
}


@dataclass(frozen=True)
class ReportData:
    """The frames the report draws; None where the warehouse has no such results."""

    coverage: pl.DataFrame   # every segment: ds, feature, segment_dim, segment_value, n_rows, coverage, coverage_ma7,
    #                          shap_share
    band: pl.DataFrame       # what the drop rule expected: ds, feature, segment_dim, segment_value, expected, lower
    marks: pl.DataFrame      # coverage alerts per segment and day
    incidents: pl.DataFrame  # the incidents table, each by its latest headline alert, as paged: most severe,
    #                          then costliest, then live first
    ndcg: pl.DataFrame | None
    shap: pl.DataFrame | None
    grid: pl.DataFrame | None
    study: pl.DataFrame | None
    at_risk: pl.DataFrame | None  # per day and scored segment: NDCG at risk, served and model NDCG@8


def load_report_data(conn: duckdb.DuckDBPyConnection, *, segment_dim: str = "all", alerts: Alerts | None = None,
                     moving_average_days: int = 7) -> ReportData:
    """Read every frame the report needs from an open warehouse connection.

    ``segment_dim`` must be in the warehouse (the page opens its heatmap on it); ``alerts``
    are the alert settings whose drop rule the expected band follows (default: the default
    settings). Both are checked before the band, the slow part, is read.

    Raises
    ------
    DataError
        When the warehouse holds no coverage, or predates this version's tables.
    UsageError
        When ``segment_dim`` is not one of its segment dimensions.

    Examples
    --------
    On the demo's warehouse (``make demo``; not run as a doctest, it needs weeks of data)::

        with open_read_only(Path("var/demo/feco.duckdb")) as conn:
            data = load_report_data(conn, alerts=config.alerts)
        data.coverage.columns
        # ['ds', 'feature', 'segment_dim', 'segment_value', 'n_rows', 'coverage', 'coverage_ma7']
    """
    tables = set(named_query(conn, "report_tables").get_column("table_name").to_list())
    missing = sorted(set(schema_relations()["table"]) - tables)
    if missing:  # new tables are added when a run opens the warehouse for writing
        raise DataError(f"the warehouse predates this version of feco (no {', '.join(missing)}): "
                        "run `feco run --ds DATE` once to upgrade it")
    filled = {name for name in tables if _has_rows(conn, name)}
    coverage = named_query(conn, "report_coverage")
    if coverage.is_empty():
        raise DataError("the warehouse holds no coverage yet: run `feco run --ds DATE` first")
    dims = coverage.get_column("segment_dim").unique().sort().to_list()
    if segment_dim not in dims:
        raise UsageError(f"segment dimension '{segment_dim}' is not in the warehouse (it has: {', '.join(dims)})")
    days = coverage.get_column("ds").unique().sort().to_list()
    optional = {key: named_query(conn, query) if table in filled else None
                for key, (table, query) in OPTIONAL.items()}
    return ReportData(
        coverage=coverage,
        band=expected_coverage(conn, days, alerts=alerts or Alerts(), moving_average_days=moving_average_days),
        marks=named_query(conn, "report_alert_marks", registry.rule_lists(COVERAGE)),
        incidents=named_query(conn, "report_incidents"),
        **optional,
    )


def _has_rows(conn: duckdb.DuckDBPyConnection, table: str) -> bool:
    # The name comes from information_schema, not from a user, and is quoted all the same.
    return fetch(conn, f"SELECT count(*) AS n FROM (SELECT 1 FROM {quote(table)} LIMIT 1)").item() > 0
