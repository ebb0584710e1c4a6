"""The FeCo paper's coverage-drop experiment on a public LTR fold.

Baseline: train on the fold, score the test set, rank features by mean |SHAP|. Then, for the
top-k features and (as a contrast) low-importance ones, reduce the feature's coverage by each
share r, over several seeds, in two modes: ``test`` (the test set only, model fixed) and
``retrain`` (train, validation and test sets, model retrained with the same parameters). Each
cell records measured coverage, NDCG@4/8 under feco's and LightGBM's conventions, the change
from the baseline, and every feature's SHAP and gain importance.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np
import polars as pl
from scipy import stats

from feco.ranker.datasets import Split
from feco.ranker.importance import importances
from feco.ranker.model import TrainedRanker, ndcg_summary, predict_scores, score_ndcg, train_ranker
from feco.ranker.perturb import coverage_of, reduce_coverage

MODES = ("test", "retrain")
FULL_REDUCTIONS = (0.05, 0.10, 0.25, 0.50, 1.00)
NDCG_COLUMNS = ("ndcg4", "ndcg8", "ndcg4_lightgbm", "ndcg8_lightgbm")
# A feature needs this much test coverage to be a low-importance contrast: reducing a feature
# that is almost never covered changes nothing and says nothing.
MIN_CONTRAST_COVERAGE = 0.10
CELL_SCHEMA = {"coverage_train_after": pl.Float64, "train_seconds": pl.Float64,
               **{c: pl.Float64 for c in NDCG_COLUMNS}, **{f"d_{c}": pl.Float64 for c in NDCG_COLUMNS}}


@dataclass(frozen=True)
class Grid:
    """Which cells to run: features (top-k and low-importance), shares, modes and seeds."""

    top_k: int = 3
    low_k: int = 2
    reductions: tuple[float, ...] = FULL_REDUCTIONS
    modes: tuple[str, ...] = MODES
    seeds: tuple[int, ...] = (1, 2)
    shap_sample_rows: int = 2_000


@dataclass(frozen=True)
class Training:
    """The model settings every cell shares (the paper keeps them fixed)."""

    params: Mapping[str, object]
    num_boost_round: int = 500
    early_stopping_rounds: int = 30


@dataclass
class ExperimentResult:
    """Frames for the warehouse: ``model_runs``, ``feature_importance``, cells, correlations."""

    experiment_id: str
    model_runs: pl.DataFrame
    importance: pl.DataFrame
    cells: pl.DataFrame
    correlations: pl.DataFrame = field(default_factory=pl.DataFrame)


def run_coverage_drop(split: Split, *, grid: Grid = Grid(), training: Training) -> ExperimentResult:
    """Run the coverage-drop grid on one fold.

    Examples
    --------
    >>> result = run_coverage_drop(load_split("mq2008", 1), training=Training(params))  # doctest: +SKIP
    >>> print(table1(result.cells))  # doctest: +SKIP
    """
    experiment_id = _experiment_id(split, grid, training)
    baseline, base_row, base_importance = _baseline(split, grid, training, experiment_id)
    chosen = _chosen_features(base_importance, split.test, grid)
    runs, importance, cells = [base_row], [base_importance.with_columns(pl.lit(base_row["run_id"]).alias("run_id"))], []
    for mode in grid.modes:
        for role, feature in chosen:
            for reduction in grid.reductions:
                for seed in grid.seeds:
                    row, imp = _cell(split, baseline, grid, training, mode=mode, feature=feature,
                                     reduction=reduction, seed=seed, experiment_id=experiment_id)
                    cells.append(row | _describe_feature(base_importance, feature, role) | _deltas(row, base_row))
                    runs.append(_run_row(row, kind=f"coverage_drop:{mode}", split=split, experiment_id=experiment_id))
                    importance.append(imp.with_columns(pl.lit(row["run_id"]).alias("run_id")))
    # An explicit schema: the test-mode cells come first and have no train coverage, so
    # polars would type that column as Null from its first 100 rows and fail on the rest.
    cells_frame = pl.DataFrame(cells, schema_overrides=CELL_SCHEMA).with_columns(pl.lit(experiment_id).alias("experiment_id"),
                                                   pl.lit(split.dataset).alias("dataset"),
                                                   pl.lit(split.fold).alias("fold"))
    return ExperimentResult(experiment_id, pl.DataFrame(runs), pl.concat(importance), cells_frame,
                            correlations(cells_frame))


def _baseline(split: Split, grid: Grid, training: Training, experiment_id: str):
    model = _train(split.train, split.valid, split.features, training)
    started = time.perf_counter()
    scores = predict_scores(model, split.test)
    predict_seconds = time.perf_counter() - started
    started = time.perf_counter()
    imp = importances(model, split.test, sample_rows=grid.shap_sample_rows, seed=0)
    row = {"run_id": f"{experiment_id}:baseline", "best_iteration": model.best_iteration,
           "train_seconds": model.seconds, "predict_seconds": predict_seconds,
           "shap_seconds": time.perf_counter() - started, "shap_rows": min(grid.shap_sample_rows, split.test.height),
           **ndcg_summary(score_ndcg(split.test, scores))}
    return model, _run_row(row, kind="coverage_drop:baseline", split=split, experiment_id=experiment_id,
                           params=training.params), imp


def _chosen_features(base_importance: pl.DataFrame, test: pl.DataFrame, grid: Grid) -> list[tuple[str, str]]:
    """The top-k features by mean |SHAP|, then the k least important ones that are covered."""
    ranked = base_importance.sort("shap_rank").get_column("feature").to_list()
    top = ranked[: grid.top_k]
    contrast = [f for f in reversed(ranked) if f not in top and coverage_of(test, f) >= MIN_CONTRAST_COVERAGE]
    return [("top", f) for f in top] + [("low", f) for f in contrast[: grid.low_k]]


def _cell(split: Split, baseline: TrainedRanker, grid: Grid, training: Training, *, mode: str,
          feature: str, reduction: float, seed: int, experiment_id: str):
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    test = reduce_coverage(split.test, feature, share=reduction, seed=_seed(seed, feature, reduction, "test"))
    row = {"run_id": f"{experiment_id}:{mode}:{feature}:{reduction:g}:{seed}", "mode": mode,
           "feature": feature, "reduction": reduction, "seed": seed,
           "coverage_test_before": coverage_of(split.test, feature), "coverage_test_after": coverage_of(test, feature),
           "coverage_train_after": None}
    model = baseline
    if mode == "retrain":
        train = reduce_coverage(split.train, feature, share=reduction, seed=_seed(seed, feature, reduction, "train"))
        valid = reduce_coverage(split.valid, feature, share=reduction, seed=_seed(seed, feature, reduction, "valid"))
        model = _train(train, valid, split.features, training)
        row["coverage_train_after"] = coverage_of(train, feature)
    row |= {"best_iteration": model.best_iteration,
            "train_seconds": model.seconds if mode == "retrain" else None,
            **ndcg_summary(score_ndcg(test, predict_scores(model, test)))}
    return row, importances(model, test, sample_rows=grid.shap_sample_rows, seed=0)


def _train(train, valid, features, training: Training) -> TrainedRanker:
    return train_ranker(train, valid, features=features, params=training.params,
                        num_boost_round=training.num_boost_round,
                        early_stopping_rounds=training.early_stopping_rounds)


def _describe_feature(base_importance: pl.DataFrame, feature: str, role: str) -> dict:
    row = base_importance.row(by_predicate=pl.col("feature") == feature, named=True)
    return {"role": role, "baseline_rank": row["shap_rank"], "baseline_shap_share": row["shap_share"],
            "baseline_gain_share": row["gain_share"]}


def _deltas(row: dict, base: dict) -> dict:
    return {f"d_{c}": None if row[c] is None or base[c] is None else row[c] - base[c] for c in NDCG_COLUMNS}


def _run_row(row: dict, *, kind: str, split: Split, experiment_id: str,
             params: Mapping[str, object] | None = None) -> dict:
    keep = ("run_id", "best_iteration", "train_seconds", "predict_seconds", "shap_seconds", "shap_rows",
            *NDCG_COLUMNS, "queries", "queries_no_relevant")
    return {"kind": kind, "dataset": split.dataset, "fold": split.fold, "experiment_id": experiment_id,
            "params": json.dumps(dict(params), sort_keys=True) if params else None,
            **{k: row.get(k) for k in keep}}


def _seed(seed: int, feature: str, reduction: float, part: str) -> int:
    """One independent, reproducible seed per (seed, feature, share, part of the data)."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{feature}|{reduction:g}|{part}".encode()).digest()[:8], "big")


def _experiment_id(split: Split, grid: Grid, training: Training) -> str:
    settings = json.dumps({"grid": asdict(grid), "params": dict(training.params),
                           "rounds": training.num_boost_round, "stop": training.early_stopping_rounds},
                          sort_keys=True, default=str)
    return f"{split.dataset}-fold{split.fold}-{hashlib.sha256(settings.encode()).hexdigest()[:8]}"


def correlations(cells: pl.DataFrame) -> pl.DataFrame:
    """Pearson and Spearman (with p-values) of coverage against NDCG, and of baseline
    importance against the NDCG loss a drop causes, per dataset, fold and mode.

    Rows: ``x``/``y`` name the variables; ``scope`` is ``grid`` (every cell, features
    pooled), ``within_feature`` (coverage against NDCG inside each feature's cells, the
    coefficients averaged over features) or ``r=<share>`` (features compared at one share).

    Examples
    --------
    >>> correlations(result.cells).columns  # doctest: +SKIP
    ['dataset', 'fold', 'mode', 'scope', 'x', 'y', 'n', 'pearson', 'pearson_p', 'spearman', 'spearman_p']
    """
    rows = []
    for (dataset, fold, mode), part in cells.group_by(["dataset", "fold", "mode"], maintain_order=True):
        key = {"dataset": dataset, "fold": fold, "mode": mode}
        for y in ("ndcg4", "ndcg8"):
            rows.append(key | {"scope": "grid"} | _pair(part, "coverage_test_after", y))
            per_feature = [_pair(f, "coverage_test_after", y) for _, f in part.group_by("feature")]
            rows.append(key | {"scope": "within_feature"} | _average(per_feature, "coverage_test_after", y))
        loss = part.group_by("feature", "reduction").agg(pl.col("baseline_shap_share").first(),
                                                         (-pl.col("d_ndcg8")).mean().alias("ndcg8_loss"))
        rows.append(key | {"scope": "grid"} | _pair(loss, "baseline_shap_share", "ndcg8_loss"))
        for (reduction,), at in loss.sort("reduction").group_by("reduction", maintain_order=True):
            rows.append(key | {"scope": f"r={reduction:g}"} | _pair(at, "baseline_shap_share", "ndcg8_loss"))
    return pl.DataFrame(rows, schema={"dataset": pl.String, "fold": pl.Int64, "mode": pl.String, "scope": pl.String,
                                      "x": pl.String, "y": pl.String, "n": pl.Int64, "pearson": pl.Float64,
                                      "pearson_p": pl.Float64, "spearman": pl.Float64, "spearman_p": pl.Float64})


def _pair(frame: pl.DataFrame, x: str, y: str) -> dict:
    data = frame.select(x, y).drop_nulls()
    a, b = data.get_column(x).to_numpy(), data.get_column(y).to_numpy()
    out = {"x": x, "y": y, "n": len(a), "pearson": None, "pearson_p": None, "spearman": None, "spearman_p": None}
    # Correlation is undefined for fewer than three points or a constant variable.
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return out
    pearson, spearman = stats.pearsonr(a, b), stats.spearmanr(a, b)
    return out | {"pearson": float(pearson.statistic), "pearson_p": float(pearson.pvalue),
                  "spearman": float(spearman.statistic), "spearman_p": float(spearman.pvalue)}


def _average(results: list[dict], x: str, y: str) -> dict:
    defined = [r for r in results if r["pearson"] is not None]
    mean = (lambda key: float(np.mean([r[key] for r in defined])) if defined else None)
    # p-values do not average into a test; the pooled rows carry them.
    return {"x": x, "y": y, "n": sum(r["n"] for r in defined), "pearson": mean("pearson"), "pearson_p": None,
            "spearman": mean("spearman"), "spearman_p": None}


def table1(cells: pl.DataFrame, *, baseline: Mapping[str, float] | None = None) -> pl.DataFrame:
    """The grid shaped like the paper's Table 1: one row per mode, feature and share, with
    measured coverage and NDCG@4/8 (feco's convention) as mean ± sd over seeds, and the
    change from the baseline.

    Examples
    --------
    >>> print(table1(result.cells))  # doctest: +SKIP
    """
    fmt = lambda c: (pl.format("{} ± {}", pl.col(c).mean().round(4), pl.col(c).std().fill_null(0).round(4)))  # noqa: E731
    return (cells.group_by("dataset", "fold", "mode", "role", "baseline_rank", "feature", "reduction", maintain_order=True)
            .agg(pl.len().alias("seeds"),
                 pl.col("coverage_test_before").mean().round(4).alias("feco_before"),
                 pl.col("coverage_test_after").mean().round(4).alias("feco_after"),
                 fmt("ndcg4").alias("ndcg@4"), fmt("ndcg8").alias("ndcg@8"),
                 pl.col("d_ndcg4").mean().round(4).alias("Δndcg@4"), pl.col("d_ndcg8").mean().round(4).alias("Δndcg@8"),
                 pl.col("d_ndcg8_lightgbm").mean().round(4).alias("Δndcg@8 (lgbm conv.)"))
            .sort("dataset", "fold", "mode", "baseline_rank", "reduction"))


def importance_shift(result: ExperimentResult, *, feature: str, reduction: float = 0.05, mode: str = "retrain",
                     top: int = 10) -> pl.DataFrame:
    """The paper's Figure 1/2: every top feature's SHAP and gain share at baseline and after
    ``feature`` lost ``reduction`` of its coverage (mean over seeds).

    Examples
    --------
    >>> importance_shift(result, feature="f39")  # doctest: +SKIP
    """
    base_id = f"{result.experiment_id}:baseline"
    cell_ids = result.cells.filter(feature=feature, reduction=reduction, mode=mode).get_column("run_id")
    base = result.importance.filter(pl.col("run_id") == base_id).sort("shap_rank").head(top)
    after = (result.importance.filter(pl.col("run_id").is_in(cell_ids.implode()))
             .group_by("feature").agg(pl.col("shap_share").mean().alias("shap_share_after"),
                                      pl.col("gain_share").mean().alias("gain_share_after")))
    return base.select("feature", "shap_rank", "shap_share", "gain_share").join(after, on="feature", how="left")
