"""The team's own model: the LightGBM model file it serves, used as feco uses its reference ranker.

``[ranker.model]`` names the file, maps the model's feature names to log columns, and says from
which day it serves (``valid_from``). Publishing a day it serves registers it once in
``model_runs`` (kind ``external``): the file is copied beside the reference models, as
``models/<valid_from>-<digest>/model.txt`` with the mapping in ``meta.json``, versioned by the
digest of its bytes, so a day re-run later is scored by the bytes that scored it first, and a
file replaced in place is a new version. Its importances (mean |SHAP| and gain) are taken on the
sampled days before ``valid_from``. From then on the daily NDCG, the SHAP per segment, the
replay of incidents and the NDCG at risk use it exactly as they use the reference ranker, and a
registered team model is preferred to the reference one on the days it is valid.

Formats: LightGBM's model file, the text ``Booster.save_model`` writes (``LGBMRanker`` too:
``ranker.booster_.save_model(path)``); LightGBM has no other model file. Not read: a pickled or
joblib ``Booster`` or ``LGBMRanker`` (unpickling runs code from the file; save it as text
instead), nor XGBoost, CatBoost or ONNX models: scores, exact TreeSHAP and the replay go through
LightGBM's booster, and a converted model can split and treat missing values otherwise than the
model served, so its costs would be another model's.
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
from feco.errors import ConfigError
from feco.ranker.importance import importances
from feco.ranker.model import TrainedRanker, ndcg_summary, predict_scores, score_ndcg
from feco.ranker.store import current_model, store_model_run
from feco.sample_folder import is_sampled, sample_files
from feco.warehouse import named_query

KIND = "external"


def serving_model(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config) -> dict | None:
    """The model run that serves ``ds``: the team's own when ``[ranker.model]`` names one valid
    on it (registered first, once per version), else the newest reference model valid on it.

    Raises
    ------
    ConfigError
        When the model file is missing or not a LightGBM model, its features are not all log
        columns, or the mapping names features the model does not have.

    Examples
    --------
    With ``[ranker.model]`` in the config and the day sampled (not run as a doctest)::

        serving_model(conn, date(2026, 11, 18), config=config)["kind"]
        # 'external'
    """
    settings = config.ranker.model
    if settings is not None and settings.valid_from <= ds:
        register(conn, ds, config=config)
    return current_model(conn, ds)


def register(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config) -> dict:
    """Register the configured team model in ``model_runs`` (nothing when this version is in
    already); a file changed in place replaces the version registered for its ``valid_from``.
    ``ds``: a day it serves, whose sample holds the columns its features map to."""
    settings = config.ranker.model
    content = _read(settings.file, config)
    version = f"{settings.valid_from.isoformat()}-{hashlib.sha256(content).hexdigest()[:8]}"
    run_id = f"{KIND}-{version}"
    held = named_query(conn, "ranker_external_runs", {"valid_from": settings.valid_from})
    if run_id in held.get_column("run_id").to_list():
        return held.row(by_predicate=pl.col("run_id") == run_id, named=True)
    booster = _booster(content, config)
    columns = feature_columns(booster.feature_name(), settings.features, available=set(sample_files(
        ds, config.paths.samples).schema), source=f"{config.source}: [ranker.model] {settings.file.name}")
    label = settings.label or config.logs.label
    artifact = _save(content, config.ranker.models / version, {"features": columns, "label": label,
                                                                "model_features": booster.feature_name(),
                                                                "file": str(settings.file)})
    model = TrainedRanker(booster, columns, booster.current_iteration(), 0.0)
    frame = _importance_rows(settings.valid_from, ds, config, columns, label)
    run = {"run_id": run_id, "kind": KIND, "version": version, "artifact": str(artifact),
           "train_end": settings.trained_until, "valid_from": settings.valid_from,
           "params": json.dumps({"file": str(settings.file), "features": settings.features, "label": label},
                                sort_keys=True),
           "best_iteration": model.best_iteration, "shap_rows": min(config.ranker.shap_sample_rows, frame.height),
           **ndcg_summary(score_ndcg(frame, predict_scores(model, frame)))}
    conn.execute("DELETE FROM feature_importance WHERE run_id IN (SELECT run_id FROM model_runs WHERE kind = $kind "
                 "AND valid_from = $valid_from)", {"kind": KIND, "valid_from": settings.valid_from})
    conn.execute("DELETE FROM model_runs WHERE kind = $kind AND valid_from = $valid_from",
                 {"kind": KIND, "valid_from": settings.valid_from})
    store_model_run(conn, run, importances(model, frame, sample_rows=config.ranker.shap_sample_rows,
                                           seed=config.ranker.seed))
    return run


def feature_columns(names: list[str], mapping: dict[str, str], *, available: set[str], source: str) -> list[str]:
    """The log column of each of the model's features, in model order: mapped, else its own name.

    Examples
    --------
    >>> feature_columns(["Column_0", "ctr"], {"Column_0": "price"}, available={"price", "ctr"}, source="m")
    ['price', 'ctr']
    >>> feature_columns(["Column_0", "ctr"], {"Column_0": "price", "rating": "rating"}, available={"price", "ctr"},
    ...                 source="m")
    Traceback (most recent call last):
    feco.errors.ConfigError: m: the model has 2 features (Column_0, ctr) and the mapping names 2, 1 of them not the model's: rating
    """
    unknown = [name for name in mapping if name not in names]
    if unknown:
        raise ConfigError(f"{source}: the model has {len(names)} features ({', '.join(names[:8])}"
                          f"{', …' if len(names) > 8 else ''}) and the mapping names {len(mapping)}, "
                          f"{len(unknown)} of them not the model's: {', '.join(unknown)}")
    columns = [mapping.get(name, name) for name in names]
    absent = [f"{name} ({column})" if column != name else name
              for name, column in zip(names, columns) if column not in available]
    if absent:
        raise ConfigError(f"{source}: {len(absent)} of the model's {len(names)} features are not columns of the "
                          f"sampled logs: {', '.join(absent[:8])}{' …' if len(absent) > 8 else ''} "
                          "(map the model's names to log columns in [ranker.model.features])")
    return columns


def _read(path: Path, config: Config) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise ConfigError(f"{config.source}: [ranker.model] file {path}: {error.strerror}") from None


def _booster(content: bytes, config: Config) -> lgb.Booster:
    """The booster in a LightGBM model file, or one clear error saying what the file is not."""
    name = config.ranker.model.file
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{config.source}: [ranker.model] file {name} is not a LightGBM model file (text): a "
                          "pickled or joblib model is not read (unpickling runs code from the file); write it with "
                          "booster.save_model(path)") from None
    try:
        return lgb.Booster(model_str=text)
    except lgb.basic.LightGBMError as error:
        raise ConfigError(f"{config.source}: [ranker.model] file {name} is not a LightGBM model: "
                          f"{str(error).splitlines()[0]}") from None


def _importance_rows(valid_from: date, ds: date, config: Config, columns: list[str], label: str) -> pl.DataFrame:
    """LTR rows to take the model's importances on: events of the sampled days among the
    ``validation_days`` before ``valid_from`` (else of ``valid_from``, else of ``ds``)."""
    from feco.ranker.replay import reference_rows

    before = [valid_from - timedelta(days=d) for d in range(config.ranker.validation_days, 0, -1)]
    days = ([d for d in before if is_sampled(d, config.paths.samples)]
            or [d for d in (valid_from, ds) if is_sampled(d, config.paths.samples)][:1])
    # About shap_sample_rows rows: the generated logs and most search pages show 10-20 items.
    events = max(1, config.ranker.shap_sample_rows // 10)
    return reference_rows(days, config, ("all", "all"), events=events, seed=config.ranker.seed, features=columns,
                          label=label)


def _save(content: bytes, folder: Path, meta: dict) -> Path:
    """Copy the model's bytes and write its mapping through temporary names."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "model.txt"
    (folder / "model.txt.tmp").write_bytes(content)
    os.replace(folder / "model.txt.tmp", path)
    (folder / "meta.json.tmp").write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
    os.replace(folder / "meta.json.tmp", folder / "meta.json")
    return path
