"""The reference ranker on the pipeline's own samples, and the daily NDCG it measures.

``train_reference(ds)`` trains a lambdarank model on the sampled days before ``ds`` (a search
event is a query, its shown products the candidates, the logged engagement grade the label),
early-stopping on the last ``validation_days`` of them, and stores it as a versioned artifact
valid from ``ds``; the weekly DAG ``feco_ranker`` calls it. ``score_day`` scores the day's
sample with the model valid on ``ds`` and stores NDCG@4/8 sums and counts per segment in
``ranker_daily``. Choosing the model by date (not "the latest file") keeps a re-run of an old
day identical after a retrain.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import date, timedelta
from pathlib import Path

import duckdb
import lightgbm as lgb
import polars as pl

from feco.config import Config
from feco.coverage import SEGMENT_DIMENSIONS, band_history, segment_rows
from feco.errors import DataError
from feco.ranker.attribution import SHAP_DAILY_SCHEMA, daily_shap
from feco.ranker.importance import importances
from feco.ranker.model import TrainedRanker, ndcg_summary, predict_scores, score_ndcg, train_ranker
from feco.ranker.store import current_model, store_daily, store_model_run
from feco.evaluation import evaluate_labelled
from feco.sampling import is_sampled, read_sample
from feco.warehouse import open_configured

DAILY_SCHEMA = {"ds": pl.Date, "run_id": pl.String, "segment_dim": pl.String, "segment_value": pl.String,
                "queries": pl.Int64, "queries_evaluated": pl.Int64, "queries_no_relevant": pl.Int64,
                "ndcg4_sum": pl.Float64, "ndcg8_sum": pl.Float64}


def train_reference(ds: date, config: Config) -> dict:
    """Train the reference ranker on the ``reference_days`` sampled days before ``ds``.

    The model, its metadata and importances are stored (artifact folder named by version,
    ``model_runs`` kind ``'reference'`` valid from ``ds``, ``feature_importance``). Training
    the same day again with the same config and samples gives the same version and rows.

    Returns
    -------
    dict
        ``version``, ``run_id``, ``artifact``, ``days``, ``best_iteration`` and the
        validation NDCG@4/8 under feco's and LightGBM's conventions.

    Raises
    ------
    DataError
        When fewer than two sampled days precede ``ds`` in the period.

    Examples
    --------
    With the demo's config and samples (not run as a doctest: it trains on weeks of data)::

        train_reference(date(2026, 3, 16), load_config("configs/feco.toml"))["version"]
        # '2026-03-16-5f0c2a9e'
    """
    settings = config.ranker
    days = sampled_days_before(ds, config)
    if len(days) < 2:
        raise DataError(f"the ranker needs sampled days before {ds}: found {len(days)} in the "
                        f"{settings.reference_days} days before it")
    held_out = min(settings.validation_days, len(days) - 1)
    train, valid = events_frame(days[:-held_out], config), events_frame(days[-held_out:], config)
    features = [f for f in config.logs.features if f in train.columns]
    model = train_ranker(train, valid, features=features, params=settings.params,
                         num_boost_round=settings.num_boost_round,
                         early_stopping_rounds=settings.early_stopping_rounds)
    version = _version(ds, days, config)
    artifact = _save(model, settings.models / version, {"ds": ds.isoformat(), "days": [d.isoformat() for d in days],
                                                        "features": features, "params": settings.params})
    run = {"run_id": f"reference-{version}", "kind": "reference", "version": version, "artifact": str(artifact),
           "train_start": days[0], "train_end": days[-1], "valid_from": ds,
           "params": json.dumps(settings.params, sort_keys=True), "best_iteration": model.best_iteration,
           "train_seconds": model.seconds, "shap_rows": min(settings.shap_sample_rows, valid.height),
           **ndcg_summary(score_ndcg(valid, predict_scores(model, valid)))}
    imp = importances(model, valid, sample_rows=settings.shap_sample_rows, seed=settings.seed)
    with open_configured(config) as conn:
        store_model_run(conn, run, imp)
    return {k: run[k] for k in ("version", "run_id", "artifact", "best_iteration", "ndcg4", "ndcg8",
                                "ndcg4_lightgbm", "ndcg8_lightgbm")} | {"days": len(days)}


def sampled_days_before(ds: date, config: Config) -> list[date]:
    """The sampled days of the ``reference_days`` before ``ds``: what a model valid from ``ds`` trains on."""
    period = [ds - timedelta(days=i) for i in range(config.ranker.reference_days, 0, -1)]
    return [d for d in period if is_sampled(d, config.paths.samples)]


def score_day(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config) -> dict:
    """Score ``ds``'s sample with the model valid on it and replace the day's ``ranker_daily``
    and ``shap_daily`` (its attribution per feature and segment, :mod:`feco.ranker.attribution`)
    through ``conn``, inside the caller's transaction when there is one (``feco.tasks.publish``).

    Without a model valid on ``ds`` nothing is scored (the day's rows are cleared) and the
    run goes on: alert severity then uses the coverage drop alone.

    Examples
    --------
    With the demo's config, samples and reference model (not run as a doctest)::

        with open_configured(config) as conn:
            score_day(conn, date(2026, 3, 20), config=load_config("configs/feco.toml"))
        # {'ds': '2026-03-20', 'model': '2026-03-16-5f0c2a9e', 'ndcg8': 0.43, 'queries_evaluated': 812}
    """
    model = current_model(conn, ds)
    if model is None:
        store_daily(conn, ds, pl.DataFrame(schema=DAILY_SCHEMA), pl.DataFrame(schema=SHAP_DAILY_SCHEMA))
        return {"ds": ds.isoformat(), "model": None}
    frame = events_frame([ds], config, labelled=True)
    ranker = load_model(Path(model["artifact"]))
    scores = daily_scores(frame, ranker, ds=ds, run_id=model["run_id"], segments=config.ranker.segments)
    shap = daily_shap(frame, ranker, ds=ds, run_id=model["run_id"], segments=config.segments.names(),
                      rows=config.ranker.shap_rows, seed=config.ranker.seed)
    store_daily(conn, ds, scores, shap)
    overall = scores.row(by_predicate=pl.col("segment_dim") == "all", named=True)
    evaluated = overall["queries_evaluated"]
    return {"ds": ds.isoformat(), "model": model["version"], "queries_evaluated": evaluated,
            "ndcg8": overall["ndcg8_sum"] / evaluated if evaluated else None}


def daily_scores(frame: pl.DataFrame, model: TrainedRanker, *, ds: date, run_id: str,
                 segments: list[str]) -> pl.DataFrame:
    """NDCG@4/8 sums and query counts per segment of ``frame``'s events (feco's conventions).

    Examples
    --------
    Two events (queries) in two regions; the second has no relevant row, so it is counted but
    left out of the NDCG sums:

    >>> frame = pl.DataFrame({"qid": [1, 1, 1, 2, 2], "label": [0, 2, 1, 0, 0],
    ...                       "region": ["DE"] * 3 + ["US"] * 2, "x": [0.1, 0.9, 0.5, 0.3, 0.2]})
    >>> model = train_ranker(frame, features=["x"], num_boost_round=2,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> scores = daily_scores(frame, model, ds=date(2026, 3, 20), run_id="r", segments=["region"])
    >>> scores.select("segment_dim", "segment_value", "queries", "queries_evaluated",
    ...               "queries_no_relevant").rows()
    [('all', 'all', 2, 1, 1), ('region', 'DE', 1, 1, 0), ('region', 'US', 1, 0, 1)]
    """
    scored = frame.with_columns(pl.Series("score", predict_scores(model, frame)))
    per_query = evaluate_labelled(scored, metrics=["ndcg@4", "ndcg@8"]).per_query
    events = scored.group_by("qid").agg(*(pl.col(s).first().cast(pl.String).fill_null("unknown") for s in segments))
    per_query = per_query.join(events, left_on="query", right_on="qid", how="left")
    parts = [per_query.with_columns(pl.lit("all").alias("segment_dim"), pl.lit("all").alias("segment_value"))]
    parts += [per_query.with_columns(pl.lit(s).alias("segment_dim"), pl.col(s).alias("segment_value")) for s in segments]
    return (pl.concat([p.select("segment_dim", "segment_value", "status", "ndcg@4", "ndcg@8") for p in parts])
            .group_by("segment_dim", "segment_value")
            .agg(pl.len().alias("queries"), pl.col("ndcg@8").is_not_null().sum().alias("queries_evaluated"),
                 (pl.col("status") == "no_relevant").sum().alias("queries_no_relevant"),
                 pl.col("ndcg@4").sum().alias("ndcg4_sum"), pl.col("ndcg@8").sum().alias("ndcg8_sum"))
            .with_columns(pl.lit(ds).alias("ds"), pl.lit(run_id).alias("run_id"))
            .select(list(DAILY_SCHEMA)).cast(DAILY_SCHEMA).sort("segment_dim", "segment_value"))


def events_frame(days: list[date], config: Config, *, labelled: bool = False) -> pl.DataFrame:
    """The sampled rows of ``days`` as LTR data: ``qid`` (the event), ``label``, segments and
    features, rows of an event together in shown order.

    Segments: the ``[ranker] segments`` columns as logged or, ``labelled``, every segment
    dimension as coverage counts it that day (query bands included, 'unknown' for NULL).
    """
    rows = pl.concat([_day_rows(d, config, labelled=labelled) for d in days], how="diagonal_relaxed")
    keep = {s: f"segment:{s}" for s in SEGMENT_DIMENSIONS} if labelled else None
    return ltr_rows(rows, config, keep=keep)


def ltr_rows(rows: pl.DataFrame, config: Config, *, keep: dict[str, str] | None = None) -> pl.DataFrame:
    """Sampled rows as LTR data (see :func:`events_frame`), with the columns of ``keep``
    (output name: column of ``rows``), by default the ``[ranker] segments`` as logged."""
    logs = config.logs
    if logs.label not in rows.columns:
        raise DataError(f"label column '{logs.label}' is not in the sampled logs")
    features = [f for f in logs.features if f in rows.columns]
    if keep is None:
        keep = {s: c for s, c in ((s, getattr(logs, s)) for s in config.ranker.segments) if c in rows.columns}
    order = [logs.event_id] + (["position"] if "position" in rows.columns else [])
    return rows.sort(order).select(
        pl.col(logs.event_id).alias("qid"), pl.col(logs.label).cast(pl.Int64).alias("label"),
        *(pl.col(c).alias(name) for name, c in keep.items()), *(pl.col(f).cast(pl.Float64) for f in features))


def _day_rows(ds: date, config: Config, *, labelled: bool) -> pl.DataFrame:
    rows = read_sample(ds, config.paths.samples)[0]
    if not labelled:
        return rows
    labels = segment_rows(rows, ds=ds, config=config, band_history=band_history(ds, config))
    return rows.hstack(labels.rename(lambda name: f"segment:{name}"))


def load_model(artifact: Path) -> TrainedRanker:
    """A stored reference model (``model.txt`` and ``meta.json`` beside it)."""
    if not artifact.exists():
        raise DataError(f"ranker artifact {artifact} is missing (retrain with `feco train-ranker`)")
    booster = lgb.Booster(model_file=str(artifact))
    meta = json.loads((artifact.parent / "meta.json").read_text(encoding="utf-8"))
    return TrainedRanker(booster, meta["features"], booster.current_iteration(), 0.0)


def _save(model: TrainedRanker, folder: Path, meta: dict) -> Path:
    """Write model and metadata through temporary names, so a reader never sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.txt"
    model.booster.save_model(str(path) + ".tmp", num_iteration=model.best_iteration)
    os.replace(str(path) + ".tmp", path)
    (folder / "meta.json.tmp").write_text(json.dumps(meta | {"best_iteration": model.best_iteration},
                                                     sort_keys=True, default=str), encoding="utf-8")
    os.replace(folder / "meta.json.tmp", folder / "meta.json")
    return path


def _version(ds: date, days: list[date], config: Config) -> str:
    """The training date and a digest of what the model depends on (days, features, params)."""
    inputs = json.dumps({"days": [d.isoformat() for d in days], "features": config.logs.features,
                         "label": config.logs.label, "ranker": config.ranker.model_dump(mode="json", exclude={"models"}),
                         "sampling": config.sampling.model_dump(mode="json")}, sort_keys=True)
    return f"{ds.isoformat()}-{hashlib.sha256(inputs.encode()).hexdigest()[:8]}"
