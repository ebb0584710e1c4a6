"""Write ranker results to the warehouse: replace by key in one transaction.

An experiment's rows (its model runs, importances, cells and correlations) are replaced as a
whole by experiment id, or one run at a time by run id as the grid goes (so a stopped grid
resumes), a reference model's by run id, a day's scores by ds: running the same thing twice
leaves the same rows.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from feco.warehouse import named_query, replace_rows

if TYPE_CHECKING:
    from feco.ranker.experiment import ExperimentResult, RunRecord


def store_experiment(conn: duckdb.DuckDBPyConnection, result: ExperimentResult) -> None:
    """Replace one experiment's rows in model_runs, feature_importance and the result tables.

    Examples
    --------
    After ``run_coverage_drop`` (not run as a doctest: it needs a trained grid)::

        with open_configured(config) as conn:
            store_experiment(conn, result)
    """
    key = {"experiment_id": result.experiment_id}
    correlations = result.correlations.with_columns(pl.lit(result.experiment_id).alias("experiment_id"))
    replace_rows(conn, [
        ("feature_importance", "run_id IN (SELECT run_id FROM model_runs WHERE experiment_id = $experiment_id)",
         key, result.importance),
        ("coverage_drop_query_ndcg", "run_id IN (SELECT run_id FROM model_runs WHERE experiment_id = $experiment_id)",
         key, result.query_ndcg),
        ("model_runs", "experiment_id = $experiment_id", key, result.model_runs),
        ("coverage_drop_results", "experiment_id = $experiment_id", key, result.cells),
        ("coverage_drop_correlations", "experiment_id = $experiment_id", key, correlations),
    ])


def store_run(conn: duckdb.DuckDBPyConnection, record: RunRecord) -> None:
    """Replace one coverage-drop run (baseline, control or cell) with everything it measured.

    Examples
    --------
    Resuming a grid (not run as a doctest: it needs a dataset split and hours of training)::

        for record in coverage_drop_runs(split, training=training, skip=finished_cells(conn, exp_id)):
            store_run(conn, record)
    """
    from feco.ranker.experiment import cells_frame

    key = {"run_id": record.model_run["run_id"]}
    cells = cells_frame([record.cell] if record.cell else [])
    replace_rows(conn, [
        ("feature_importance", "run_id = $run_id", key, record.importance),
        ("coverage_drop_query_ndcg", "run_id = $run_id", key, record.query_ndcg),
        ("model_runs", "run_id = $run_id", key, pl.DataFrame([record.model_run])),
        ("coverage_drop_results", "run_id = $run_id", key, cells),
    ])


def finished_cells(conn: duckdb.DuckDBPyConnection, experiment_id: str) -> frozenset[str]:
    """Run ids of the experiment's cells already stored."""
    return frozenset(named_query(conn, "coverage_drop_finished_cells", {"experiment_id": experiment_id})["run_id"])


def store_correlations(conn: duckdb.DuckDBPyConnection, experiment_id: str, correlations: pl.DataFrame) -> None:
    """Replace one experiment's correlation rows."""
    replace_rows(conn, [("coverage_drop_correlations", "experiment_id = $experiment_id",
                         {"experiment_id": experiment_id},
                         correlations.with_columns(pl.lit(experiment_id).alias("experiment_id")))])


def store_claim_tests(conn: duckdb.DuckDBPyConnection, tests: pl.DataFrame) -> None:
    """Replace every row of coverage_drop_claim_tests: the report tests the whole stored grid."""
    replace_rows(conn, [("coverage_drop_claim_tests", "TRUE", {}, tests)])


def store_model_run(conn: duckdb.DuckDBPyConnection, run: dict, importance: pl.DataFrame) -> None:
    """Replace one model run and its feature importances."""
    key = {"run_id": run["run_id"]}
    replace_rows(conn, [
        ("feature_importance", "run_id = $run_id", key, importance.with_columns(pl.lit(run["run_id"]).alias("run_id"))),
        ("model_runs", "run_id = $run_id", key, pl.DataFrame([run])),
    ])


def store_daily(conn: duckdb.DuckDBPyConnection, ds: date, scores: pl.DataFrame, shap: pl.DataFrame,
                served: pl.DataFrame) -> None:
    """Replace one day's rows in ranker_daily, shap_daily and served_daily (empty frames clear
    the day)."""
    replace_rows(conn, [(table, "ds = $ds", {"ds": ds}, rows) for table, rows in (
        ("ranker_daily", scores), ("shap_daily", shap), ("served_daily", served))])


def current_model(conn: duckdb.DuckDBPyConnection, ds: date) -> dict | None:
    """The model run that scores ``ds``, or None: the newest team model (kind ``external``,
    :mod:`feco.ranker.serving`) valid on it, else the newest reference model valid on it.

    Examples
    --------
    On the demo's warehouse (not run as a doctest: it needs a trained reference model)::

        current_model(conn, date(2026, 3, 20))
        # {'run_id': 'reference-2026-03-16-…', 'kind': 'reference', 'version': '2026-03-16-…', 'artifact': '…'}
    """
    found = named_query(conn, "ranker_current_model", {"ds": ds})
    return found.row(0, named=True) if found.height else None


def importance_shares(conn: duckdb.DuckDBPyConnection, ds: date) -> dict[str, float] | None:
    """Each feature's SHAP share in the model that scores ``ds``; None without a model.

    Examples
    --------
    On the demo's warehouse (not run as a doctest: it needs a trained reference model)::

        importance_shares(conn, date(2026, 3, 20))
        # {'eng_ctr_30d': 0.31, ...}
    """
    model = current_model(conn, ds)
    if model is None:
        return None
    shares = named_query(conn, "ranker_importance_shares", {"run_id": model["run_id"]})
    return dict(shares.iter_rows())


def ndcg_changes(conn: duckdb.DuckDBPyConnection, ds: date) -> dict[tuple[str, str], float]:
    """The day's NDCG@8 change against the previous 7 days, per (segment_dim, segment_value).

    Examples
    --------
    On the demo's warehouse (not run as a doctest: it needs eight scored days)::

        ndcg_changes(conn, date(2026, 3, 20))
        # {('all', 'all'): -0.021, ('region', 'DE'): -0.064}
    """
    found = named_query(conn, "ranker_ndcg_change", {"ds": ds})
    return {(d, v): change for d, v, _, change in found.iter_rows()}
