"""Write the paper's experiments to the warehouse: replace by key in one transaction.

An experiment's rows (its model runs, importances, cells and correlations) are replaced as a
whole by experiment id, or one run at a time by run id as the grid goes (so a stopped grid
resumes); the claims' tests as a whole: running the same thing twice leaves the same rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import polars as pl

from feco.warehouse import named_query, replace_rows

if TYPE_CHECKING:
    from feco.paper.experiment import ExperimentResult, RunRecord


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
    from feco.paper.experiment import cells_frame

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
