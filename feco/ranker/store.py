"""The serving ranker's rows in the warehouse: a model run and its importances, a day's scores,
and what the alerts read back (the model scoring a day, its importance shares, the day's NDCG
change).

Writes replace by key in one transaction (a model's rows by run id, a day's scores by ds):
running the same thing twice leaves the same rows. The paper's experiments keep their own
rows in :mod:`feco.paper.store`.
"""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl

from feco.warehouse import named_query, replace_rows


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
    """The model run that scores ``ds``, or None: the team model's version (kind ``external``,
    :mod:`feco.ranker.serving`) that scored it, else the newest one valid on it, else the newest
    reference model valid on it; ``scored_it``: whether it scored ``ds``.

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
