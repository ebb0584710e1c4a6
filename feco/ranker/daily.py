"""The reference ranker on the pipeline's own samples, and the daily NDCG it and the served order measure.

``train_reference(ds)`` trains a lambdarank model on the sampled days before ``ds`` (a search
event is a query, its shown products the candidates, the logged engagement grade the label),
early-stopping on the last ``validation_days`` of them, and stores it as a versioned artifact
valid from ``ds``; the weekly DAG ``feco_ranker`` calls it. ``score_day`` stores, per segment,
the NDCG@4/8 sums and counts of the order that was served (``served_daily``, from the logged
positions: no model needed) and of the model serving ``ds`` (``ranker_daily``; the team's own
model when ``[ranker.model]`` names one, :mod:`feco.ranker.serving`). Choosing the model by
date (not "the latest file") keeps a re-run of an old day identical after a retrain.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import date, timedelta
from pathlib import Path

import duckdb
import lightgbm as lgb
import numpy as np
import polars as pl

from feco.config import Config
from feco.coverage import SEGMENT_DIMENSIONS, band_history, segment_rows
from feco.dimensions import source_columns
from feco.errors import DataError
from feco.evaluation import evaluate_labelled
from feco.ranker.attribution import SHAP_DAILY_SCHEMA, daily_shap, plan_draws
from feco.ranker.importance import importances
from feco.ranker.model import TrainedRanker, ndcg_summary, predict_scores, score_ndcg, train_ranker
from feco.ranker.rows import DRAW, event_batches, label_rows
from feco.ranker.store import store_daily, store_model_run
from feco.sample_folder import is_sampled, read_sample, sample_files
from feco.warehouse import named_query, open_configured

DAILY_SCHEMA = {"ds": pl.Date, "run_id": pl.String, "segment_dim": pl.String, "segment_value": pl.String,
                "queries": pl.Int64, "queries_evaluated": pl.Int64, "queries_no_relevant": pl.Int64,
                "ndcg4_sum": pl.Float64, "ndcg8_sum": pl.Float64}
SERVED_SCHEMA = {"ds": pl.Date, "segment_dim": pl.String, "segment_value": pl.String, "queries": pl.Int64,
                 "queries_evaluated": pl.Int64, "queries_no_relevant": pl.Int64, "ndcg4_sum": pl.Float64,
                 "ndcg8_sum": pl.Float64, "events_tied": pl.Int64}
POSITION, MODEL_LABEL = "position", "model_label"  # the LTR frame's served position and model label


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


def score_day(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config, rescore: bool = False) -> dict:
    """Score ``ds``'s sample and replace the day's ``served_daily`` (the NDCG of the order that
    was served, no model needed), ``ranker_daily`` (the serving model's NDCG) and ``shap_daily``
    (its attribution per feature and segment, :mod:`feco.ranker.attribution`) through ``conn``,
    inside the caller's transaction when there is one (``feco.tasks.publish``).

    The day is read as whole events a batch at a time (:func:`feco.ranker.rows.event_batches`):
    per-event NDCG sums merge like counts, and only the rows the attribution may draw are kept,
    so memory is set by a batch, not by the day. The model is the one serving ``ds``
    (:func:`feco.ranker.serving.serving_model`: the team's own when ``[ranker.model]`` names one,
    else the newest reference model valid on it; a day a team model's version scored keeps it
    unless ``rescore``); without one the served NDCG is still stored and the model's tables
    are cleared for the day.

    Examples
    --------
    With the demo's config, samples and reference model (not run as a doctest)::

        with open_configured(config) as conn:
            score_day(conn, date(2026, 11, 20), config=load_config("configs/feco.toml"))
        # {'ds': '2026-11-20', 'model': '2026-11-11-e7b67579', 'queries_evaluated': 2012, 'ndcg8': 0.72,
        #  'served_ndcg8': 0.69}
    """
    from feco.ranker.serving import serving_model

    run = serving_model(conn, ds, config=config, rescore=rescore)
    model = load_model(Path(run["artifact"])) if run else None
    draws = None
    if model is not None:
        draws = plan_draws(named_query(conn, "ranker_segment_rows", {"ds": ds}), rows=config.ranker.shap_rows,
                           per_segment=config.ranker.shap_segment_rows, incidents=config.alerts.incidents)
    served, scored, kept = read_day(ds, config, model, label=_label(run, config),
                                    threshold=draws.threshold if draws else 0.0)
    scores = shap = None
    if model is not None and kept.height:  # a day without rows has nothing to score
        scores = scored.with_columns(pl.lit(ds).alias("ds"), pl.lit(run["run_id"]).alias("run_id"))
        labels = label_rows(kept, ds, config).rename(lambda name: f"segment:{name}")
        shap = daily_shap(ltr_rows(kept.hstack(labels), config, keep={**{d: f"segment:{d}" for d in SEGMENT_DIMENSIONS},
                                                                      DRAW: DRAW}, features=model.features),
                          model, ds=ds, run_id=run["run_id"], segments=config.segments.names(), draws=draws)
    store_daily(conn, ds, _typed(scores, DAILY_SCHEMA), _typed(shap, SHAP_DAILY_SCHEMA), _typed(
        served.with_columns(pl.lit(ds).alias("ds")) if served.height else None, SERVED_SCHEMA))
    result = {"ds": ds.isoformat(), "model": run["version"] if run else None,
              "served_ndcg8": _mean(served, "ndcg8_sum")}
    if scores is not None:
        result |= {"queries_evaluated": _overall(scores)["queries_evaluated"], "ndcg8": _mean(scores, "ndcg8_sum")}
    return result


def read_day(ds: date, config: Config, model: TrainedRanker | None, *, label: str,
             threshold: float) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """One pass over the day's sample, whole events a batch at a time: the served order's NDCG
    sums per segment (:func:`served_sums`), the model's (:func:`ndcg_sums`, on ``label``; empty
    without a model) and the sampled rows whose draw is below ``threshold`` (those the
    attribution may explain; none at 0). All three are empty when the logs have no label.

    Examples
    --------
    The score step without its attribution, as ``bench/cost_speed.py`` times it (not run as a
    doctest: it needs a sampled day)::

        served, scored, _ = read_day(date(2026, 11, 20), config, model, label="label", threshold=0.0)
    """
    logs, settings = config.logs, config.ranker
    segments = {s: getattr(logs, s) for s in settings.segments}
    schema = sample_files(ds, config.paths.samples).schema
    if logs.label not in schema or label not in schema:  # no label, no NDCG to take (feco status says so)
        return pl.DataFrame(), pl.DataFrame(), pl.DataFrame()
    keys = [logs.event_id, *source_columns(logs)]  # what labels rows with their segments
    features = model.features if model else []
    read = [c for c in dict.fromkeys([logs.event_id, logs.label, label, settings.position, *segments.values(),
                                      *(keys if model else []), *features]) if c in schema]
    keep = {s: c for s, c in segments.items() if c in schema} | {POSITION: settings.position, MODEL_LABEL: label}
    keep = {name: column for name, column in keep.items() if column in schema}
    served, scored, kept = [], [], []
    for batch in event_batches(ds, config, read, seed=settings.seed):
        frame = ltr_rows(batch, config, keep=keep, features=features)
        if POSITION in frame.columns:  # logs without the served order have no served NDCG
            served.append(served_sums(frame, segments=list(segments)))
        if model is not None:
            scored.append(ndcg_sums(frame.with_columns(pl.col(MODEL_LABEL).cast(pl.Int64).alias("label")),
                                    predict_scores(model, frame), segments=list(segments)))
            kept.append(batch.filter(pl.col(DRAW) < threshold))
    return _merged(served), _merged(scored), pl.concat(kept, how="diagonal_relaxed") if kept else pl.DataFrame()


def ndcg_sums(frame: pl.DataFrame, scores: np.ndarray, *, segments: list[str]) -> pl.DataFrame:
    """NDCG@4/8 sums and query counts per segment of ``frame``'s events (feco's conventions:
    exp2 gain, ideal DCG over the event's rows, ties item id descending with the row's place as
    the item, events with no relevant row counted and left out of the sums).

    Examples
    --------
    Two events (queries) in two regions; the second has no relevant row, so it is counted but
    left out of the NDCG sums:

    >>> frame = pl.DataFrame({"qid": [1, 1, 1, 2, 2], "label": [0, 2, 1, 0, 0], "region": ["DE"] * 3 + ["US"] * 2})
    >>> sums = ndcg_sums(frame, np.array([0.1, 0.9, 0.5, 0.3, 0.2]), segments=["region"])
    >>> sums.select("segment_dim", "segment_value", "queries", "queries_evaluated", "queries_no_relevant",
    ...             "ndcg8_sum").rows()
    [('all', 'all', 2, 1, 1, 1.0), ('region', 'DE', 1, 1, 0, 1.0), ('region', 'US', 1, 0, 1, 0.0)]
    """
    scored = frame.select("qid", "label", pl.Series("score", np.asarray(scores, dtype=np.float64)))
    per_query = evaluate_labelled(scored, metrics=["ndcg@4", "ndcg@8"]).per_query
    return _segment_sums(per_query, frame, segments, [])


def served_sums(frame: pl.DataFrame, *, segments: list[str]) -> pl.DataFrame:
    """:func:`ndcg_sums` of the order that was served: rows by ``position`` ascending (NULL
    positions last); rows sharing a position are tied, and feco's tie rule puts the later row
    of the sample first. ``events_tied``: events with a shared or NULL position.

    Examples
    --------
    Event 1 served its relevant row second; event 2 shows two rows at position 1, so the later
    one (not relevant) counts as shown first:

    >>> frame = pl.DataFrame({"qid": [1, 1, 2, 2], "label": [0, 1, 1, 0], "position": [1, 2, 1, 1],
    ...                       "region": ["DE", "DE", "US", "US"]})
    >>> sums = served_sums(frame, segments=["region"])
    >>> sums.select("segment_value", "ndcg8_sum", "events_tied").rows()
    [('all', 1.261859507142915, 1), ('DE', 0.6309297535714575, 0), ('US', 0.6309297535714575, 1)]
    """
    position = pl.col(POSITION).cast(pl.Float64)
    served = frame.select(pl.when(position.is_null()).then(float("-inf")).otherwise(-position)).to_series().to_numpy()
    scored = frame.select("qid", "label", pl.Series("score", served))
    per_query = evaluate_labelled(scored, metrics=["ndcg@4", "ndcg@8"]).per_query
    tied = (frame.group_by("qid").agg((pl.col(POSITION).n_unique() < pl.len()) | pl.col(POSITION).is_null().any())
            .rename({POSITION: "tied"}))
    return _segment_sums(per_query.join(tied, left_on="query", right_on="qid", how="left"), frame, segments,
                         [pl.col("tied").sum().alias("events_tied")])


def _segment_sums(per_query: pl.DataFrame, frame: pl.DataFrame, segments: list[str], extra: list) -> pl.DataFrame:
    """Per-event NDCG summed per segment: all traffic and each event-level segment."""
    events = frame.group_by("qid").agg(*(pl.col(s).first().cast(pl.String).fill_null("unknown") for s in segments))
    per_query = per_query.join(events, left_on="query", right_on="qid", how="left")
    parts = [per_query.with_columns(pl.lit("all").alias("segment_dim"), pl.lit("all").alias("segment_value"))]
    parts += [per_query.with_columns(pl.lit(s).alias("segment_dim"), pl.col(s).alias("segment_value")) for s in segments]
    return (pl.concat([p.drop(segments) for p in parts])
            .group_by("segment_dim", "segment_value")
            .agg(pl.len().alias("queries"), pl.col("ndcg@8").is_not_null().sum().alias("queries_evaluated"),
                 (pl.col("status") == "no_relevant").sum().alias("queries_no_relevant"),
                 pl.col("ndcg@4").sum().alias("ndcg4_sum"), pl.col("ndcg@8").sum().alias("ndcg8_sum"), *extra)
            .sort("segment_dim", "segment_value"))


def _merged(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Batches' sums per segment added up (events never span batches)."""
    if not parts:
        return pl.DataFrame()
    return (pl.concat(parts).group_by("segment_dim", "segment_value").agg(pl.exclude("segment_dim", "segment_value").sum())
            .sort("segment_dim", "segment_value"))


def _typed(frame: pl.DataFrame | None, schema: dict) -> pl.DataFrame:
    return pl.DataFrame(schema=schema) if frame is None else frame.select(list(schema)).cast(schema)


def _overall(sums: pl.DataFrame) -> dict:
    return sums.row(by_predicate=pl.col("segment_dim") == "all", named=True)


def _mean(sums: pl.DataFrame, column: str) -> float | None:
    if sums.is_empty():
        return None
    overall = _overall(sums)
    return overall[column] / overall["queries_evaluated"] if overall["queries_evaluated"] else None


def _label(run: dict | None, config: Config) -> str:
    """The label the serving model's NDCG is taken on: a team model's own, else [logs] label."""
    if run is None or run["kind"] != "external":
        return config.logs.label
    return json.loads(run["params"])["label"]


def events_frame(days: list[date], config: Config, *, labelled: bool = False) -> pl.DataFrame:
    """The sampled rows of ``days`` as LTR data: ``qid`` (the event), ``label``, segments and
    features, rows of an event together in shown order (in memory: for training).

    Segments: the ``[ranker] segments`` columns as logged or, ``labelled``, every segment
    dimension as coverage counts it that day (query bands included, 'unknown' for NULL).
    """
    rows = pl.concat([_day_rows(d, config, labelled=labelled) for d in days], how="diagonal_relaxed")
    keep = {s: f"segment:{s}" for s in SEGMENT_DIMENSIONS} if labelled else None
    return ltr_rows(rows, config, keep=keep)


def ltr_rows(rows: pl.DataFrame, config: Config, *, keep: dict[str, str] | None = None,
             features: list[str] | None = None, label: str | None = None) -> pl.DataFrame:
    """Sampled rows as LTR data (see :func:`events_frame`), with the columns of ``keep``
    (output name: column of ``rows``), by default the ``[ranker] segments`` as logged;
    ``features``: the model's columns (default the ``[logs] features`` in ``rows``);
    ``label``: the label column (default ``[logs] label``)."""
    logs = config.logs
    label = label or logs.label
    if label not in rows.columns:
        raise DataError(f"label column '{label}' is not in the sampled logs ([logs] label, or a team model's "
                        "[ranker.model] label): the ranker is trained and scored on it")
    features = [f for f in logs.features if f in rows.columns] if features is None else features
    if keep is None:
        keep = {s: c for s, c in ((s, getattr(logs, s)) for s in config.ranker.segments) if c in rows.columns}
    position = config.ranker.position
    order = [logs.event_id] + ([position] if position in rows.columns else [])
    return rows.sort(order, maintain_order=True).select(
        pl.col(logs.event_id).alias("qid"), pl.col(label).cast(pl.Int64).alias("label"),
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
                         "label": config.logs.label,
                         # What only scoring reads is left out: a model trained again is the same version.
                         "ranker": config.ranker.model_dump(mode="json", exclude={"models", "model", "position",
                                                                                  "shap_segment_rows"}),
                         "sampling": config.sampling.model_dump(mode="json")}, sort_keys=True)
    return f"{ds.isoformat()}-{hashlib.sha256(inputs.encode()).hexdigest()[:8]}"
