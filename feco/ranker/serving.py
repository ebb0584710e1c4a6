"""The team's own model: the LightGBM model file it serves, used as feco uses its reference ranker.

``[ranker.model]`` names the file, maps the model's feature names to log columns, and says from
which day it serves (``valid_from``). The file is checked before LightGBM loads it in the run's
process (:mod:`feco.ranker.model_file`: a bad file is one error saying what it is). Publishing a
day it serves registers it once in ``model_runs`` (kind ``external``): the file is copied beside
the reference models, as ``models/<valid_from>-<digest>/model.txt`` with the mapping in
``meta.json``, versioned by the digest of its bytes. A file replaced in place is a new version
valid from the first day published with it; the days scored before keep their version, its row
and its copy, and a day re-run later is scored by the version that scored it. Its importances (mean |SHAP| and gain) are taken on the
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

import functools
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
from feco.ranker.model_file import load_booster
from feco.ranker.store import current_model, store_model_run
from feco.sample_folder import is_sampled, sample_files

KIND = "external"


def serving_model(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config, rescore: bool = False) -> dict | None:
    """The model run that scores ``ds``: the team model's version that scored it before, when
    one did (a rerun keeps the model of its scores) and not ``rescore``; else the version of the
    ``[ranker.model]`` file serving it, when that names one valid on it (registered the first
    time its bytes serve: ``rescore`` a day with a file changed since makes it a new version from
    that day); else the newest reference model valid on it.

    Raises
    ------
    ConfigError
        On a day the configured model serves, when its file is missing or not a whole LightGBM
        text model, its features are not all log columns, or the mapping names features the
        model does not have.

    Examples
    --------
    With ``[ranker.model]`` in the config and the day sampled (not run as a doctest)::

        serving_model(conn, date(2026, 11, 18), config=config)["kind"]
        # 'external'
    """
    served = served_file(ds, config)  # checked even on a rerun: the file serving the day is a model
    current = current_model(conn, ds)
    if served is None or (not rescore and current is not None and current["kind"] == KIND and current["scored_it"]):
        return current
    return register(conn, ds, served, current, config=config)


def served_file(ds: date, config: Config) -> tuple[bytes, lgb.Booster] | None:
    """The ``[ranker.model]`` file's bytes and booster when it serves ``ds`` (checked once per
    content in a process: a backfill's days share it), else None. ``feco.tasks.run_day`` calls
    it before it samples, so a bad file is refused before a run touches anything.

    Raises
    ------
    ConfigError
        When the file cannot be read or is not a whole LightGBM text model (what it is said).
    """
    settings = config.ranker.model
    if settings is None or ds < settings.valid_from:
        return None
    content = _read(settings.file, config)
    return content, _booster(content, f"{config.source}: [ranker.model] file {settings.file}")


def register(conn: duckdb.DuckDBPyConnection, ds: date, served: tuple[bytes, lgb.Booster], serving: dict | None,
             *, config: Config) -> dict:
    """The version of the served file's bytes serving ``ds``, registered in ``model_runs``
    when new: valid from the configured ``valid_from`` for the first version (none of the team's
    serving ``ds`` is valid from it or later), from ``ds`` for a file changed in place since (the days before keep the version that scored them: its row
    and its copy stay). ``ds``: a day it serves, whose sample holds the columns its features
    map to; ``serving``: the model run serving it so far (:func:`feco.ranker.store.current_model`)."""
    settings = config.ranker.model
    content, booster = served
    digest = hashlib.sha256(content).hexdigest()[:8]
    if serving is not None and serving["kind"] == KIND and serving["valid_from"] >= settings.valid_from:
        if serving["version"] == f"{serving['valid_from'].isoformat()}-{digest}":
            return serving
        valid_from = ds  # the file changed in place: a new version from the day it is first seen
    else:  # the configured model's first version (a model valid before it, if any, serves no day from it)
        valid_from = settings.valid_from
    version = f"{valid_from.isoformat()}-{digest}"
    columns = feature_columns(booster.feature_name(), settings.features, available=set(sample_files(
        ds, config.paths.samples).schema), source=f"{config.source}: [ranker.model] {settings.file.name}")
    label = settings.label or config.logs.label
    artifact = _save(content, config.ranker.models / version, {"features": columns, "label": label,
                                                                "model_features": booster.feature_name(),
                                                                "file": str(settings.file)})
    model = TrainedRanker(booster, columns, booster.current_iteration(), 0.0)
    frame = _importance_rows(valid_from, ds, config, columns, label)
    run = {"run_id": f"{KIND}-{version}", "kind": KIND, "version": version, "artifact": str(artifact),
           "train_end": settings.trained_until, "valid_from": valid_from,
           "params": json.dumps({"file": str(settings.file), "features": settings.features, "label": label},
                                sort_keys=True),
           "best_iteration": model.best_iteration, "shap_rows": min(config.ranker.shap_sample_rows, frame.height),
           **ndcg_summary(score_ndcg(frame, predict_scores(model, frame)))}
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


@functools.lru_cache(maxsize=4)
def _booster(content: bytes, source: str) -> lgb.Booster:
    return load_booster(content, source=source)


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
