"""The FeCo paper's coverage-drop experiment on a public LTR fold.

Baseline: train on the fold, score the test set, rank features by mean |SHAP|. Then, for the
top-k features and (as a contrast) the least important ones the baseline uses, reduce the
feature's coverage by each share r, over several seeds, in two modes: ``test`` (the test set
only, model fixed) and ``retrain`` (train, validation and test sets, model retrained with the
same parameters and the cell's seed). Each seed also gets a control: the model retrained on
unperturbed data. Each cell records measured coverage, NDCG@4/8 under feco's and LightGBM's
conventions, the change from its reference (the baseline in test mode, the same-seed control
in retrain mode) and per-query NDCG; the baseline and the top feature's cells at the smallest
share also every feature's SHAP and gain importance (no table reads the others'). Every run
also counts the test rows that tie on score and its NDCG@8 under two other tie rules
(:func:`tie_counts`).
The statistics over the stored grid are in :mod:`feco.paper.claims`.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from feco.evaluation import Conventions, evaluate_labelled
from feco.paper.claims import importance_loss_correlations, within_feature_correlations
from feco.paper.datasets import Split
from feco.ranker.importance import IMPORTANCE_SCHEMA, importances
from feco.ranker.model import TrainedRanker, ndcg_summary, predict_scores, score_ndcg, train_ranker
from feco.ranker.perturb import Loss, apply_losses, coverage_of

MODES = ("test", "retrain")
FULL_REDUCTIONS = (0.05, 0.10, 0.25, 0.50, 1.00)
NDCG_COLUMNS = ("ndcg4", "ndcg8", "ndcg4_lightgbm", "ndcg8_lightgbm")
# A feature needs this much test coverage to be a low-importance contrast: reducing a feature
# that is almost never covered changes nothing and says nothing.
MIN_CONTRAST_COVERAGE = 0.10
# The named LightGBM settings the sensitivity table compares. "config" is [ranker.params];
# "plain" is lambdarank with LightGBM's defaults but the learning rate (every feature seen at
# every split, no bagging); "regularised" is shallower, L2-penalised and sees half the features
# per tree, which spreads importance over correlated features even more than the config does.
PLAIN = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20}
REGULARISED = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 7, "min_data_in_leaf": 50,
               "lambda_l2": 10.0, "feature_fraction": 0.5, "bagging_fraction": 0.7, "bagging_freq": 1}
SETTINGS = ("plain", "config", "regularised")
CELL_SCHEMA = {
    "experiment_id": pl.String, "run_id": pl.String, "dataset": pl.String, "fold": pl.Int64, "setting": pl.String,
    "mode": pl.String, "feature": pl.String, "role": pl.String, "baseline_rank": pl.Int64,
    "baseline_shap_share": pl.Float64, "baseline_gain_share": pl.Float64, "reduction": pl.Float64, "seed": pl.Int64,
    "coverage_test_before": pl.Float64, "coverage_test_after": pl.Float64, "coverage_train_after": pl.Float64,
    "best_iteration": pl.Int64, "train_seconds": pl.Float64, **{c: pl.Float64 for c in NDCG_COLUMNS},
    **{f"d_{c}": pl.Float64 for c in NDCG_COLUMNS}, "queries": pl.Int64, "queries_no_relevant": pl.Int64,
}
RUN_SCHEMA = {"params": pl.String, "train_seconds": pl.Float64}


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
    """The model settings every cell shares (the paper keeps them fixed); ``setting`` names
    them in the experiment id and the tables."""

    params: Mapping[str, object]
    num_boost_round: int = 500
    early_stopping_rounds: int = 30
    setting: str = "config"


@dataclass(frozen=True)
class RunRecord:
    """One evaluated model: its ``model_runs`` row, importances, per-query NDCG and, for a
    coverage-drop cell, its ``coverage_drop_results`` row (None for a baseline or control)."""

    model_run: dict
    importance: pl.DataFrame
    query_ndcg: pl.DataFrame
    cell: dict | None = None


@dataclass
class ExperimentResult:
    """Frames for the warehouse: ``model_runs``, ``feature_importance``, cells, per-query NDCG,
    correlations."""

    experiment_id: str
    model_runs: pl.DataFrame
    importance: pl.DataFrame
    cells: pl.DataFrame
    query_ndcg: pl.DataFrame
    correlations: pl.DataFrame = field(default_factory=pl.DataFrame)


def run_coverage_drop(split: Split, *, grid: Grid = Grid(), training: Training) -> ExperimentResult:
    """Run the coverage-drop grid on one fold and collect every run in memory.

    Examples
    --------
    On MQ2008's first fold (not run as a doctest: it needs the shared datasets and minutes of training)::

        result = run_coverage_drop(load_split("mq2008", 1), training=Training(params))
        print(table1(result.cells))
    """
    records = list(coverage_drop_runs(split, grid=grid, training=training))
    cells = cells_frame([r.cell for r in records if r.cell is not None])
    return ExperimentResult(experiment_id(split, grid, training),
                            pl.DataFrame([r.model_run for r in records], schema_overrides=RUN_SCHEMA),
                            pl.concat([r.importance for r in records]), cells,
                            pl.concat([r.query_ndcg for r in records]), correlations(cells))


def coverage_drop_runs(split: Split, *, grid: Grid = Grid(), training: Training,
                       skip: frozenset[str] = frozenset()) -> Iterator[RunRecord]:
    """Yield the baseline, one no-perturbation retrain per seed (the control), then every
    cell whose run id is not in ``skip``, each as soon as it is done, so a caller can store
    it and a rerun can resume.

    A retrained cell uses its seed as LightGBM's seed too; its deltas are taken against the
    control of the same seed, so they measure the coverage drop and not retraining noise.
    Test-mode deltas are taken against the baseline.

    Examples
    --------
    Storing each run as it finishes (not run as a doctest: it needs a dataset split and minutes of training)::

        for record in coverage_drop_runs(split, training=Training(params)):
            store_run(conn, record)
    """
    exp_id = experiment_id(split, grid, training)
    baseline = _train(split.train, split.valid, split.features, training.params, training)
    base = _evaluated(baseline, split.test, grid, run_id=f"{exp_id}:baseline", kind="coverage_drop:baseline",
                      split=split, experiment_id=exp_id, params=training.params)
    yield base
    references = {"test": {seed: base for seed in grid.seeds}}
    if "retrain" in grid.modes:
        references["retrain"] = {}
        for seed in grid.seeds:
            params = _seeded(training.params, seed)
            model = _train(split.train, split.valid, split.features, params, training)
            references["retrain"][seed] = _evaluated(
                model, split.test, grid, run_id=f"{exp_id}:control:{seed}", kind="coverage_drop:control",
                split=split, experiment_id=exp_id, params=params, explain=False)
            yield references["retrain"][seed]
    chosen = _chosen_features(base.importance, split.test, grid)
    for mode in grid.modes:
        for role, feature in chosen:
            for reduction in grid.reductions:
                for seed in grid.seeds:
                    run_id = f"{exp_id}:{mode}:{feature}:{reduction:g}:{seed}"
                    if run_id in skip:
                        continue
                    yield _cell(split, baseline, grid, training, mode=mode, feature=feature, role=role,
                                reduction=reduction, seed=seed, run_id=run_id,
                                reference=references[mode][seed], base_importance=base.importance)


def named_settings(config_params: Mapping[str, object], *, threads: int) -> dict[str, dict]:
    """The settings of :data:`SETTINGS` by name, each deterministic on ``threads`` threads.

    Examples
    --------
    >>> named_settings({"objective": "lambdarank"}, threads=1)["plain"]["num_leaves"]
    31
    """
    fixed = {"num_threads": threads, "deterministic": True, "force_col_wise": True, "verbose": -1}
    return {name: {"seed": 1, **params, **fixed}
            for name, params in (("plain", PLAIN), ("config", config_params), ("regularised", REGULARISED))}


def cell_count(split: Split, grid: Grid) -> int:
    """How many cells :func:`coverage_drop_runs` plans (baseline and controls not counted)."""
    features = grid.top_k + grid.low_k
    return len(grid.modes) * min(features, len(split.features)) * len(grid.reductions) * len(grid.seeds)


def _evaluated(model: TrainedRanker, test: pl.DataFrame, grid: Grid, *, run_id: str, kind: str, split: Split,
               experiment_id: str, params: Mapping[str, object] | None = None, explain: bool = True) -> RunRecord:
    started = time.perf_counter()
    scores = predict_scores(model, test)
    predict_seconds = time.perf_counter() - started
    started = time.perf_counter()
    imp = (importances(model, test, sample_rows=grid.shap_sample_rows, seed=0) if explain
           else pl.DataFrame(schema=IMPORTANCE_SCHEMA))
    shap_seconds = time.perf_counter() - started if explain else None
    evaluations = score_ndcg(test, scores)
    row = {"kind": kind, "dataset": split.dataset, "fold": split.fold, "experiment_id": experiment_id,
           "run_id": run_id, "params": json.dumps(dict(params), sort_keys=True) if params else None,
           "best_iteration": model.best_iteration,
           "train_seconds": model.seconds if kind != "coverage_drop:test" else None,
           "predict_seconds": predict_seconds, "shap_seconds": shap_seconds,
           "shap_rows": min(grid.shap_sample_rows, test.height) if explain else None, **ndcg_summary(evaluations),
           **tie_counts(test, scores)}
    return RunRecord(row, imp.with_columns(pl.lit(run_id).alias("run_id")),
                     _query_ndcg(evaluations["feco"].per_query, run_id))


def tie_counts(test: pl.DataFrame, scores: np.ndarray) -> dict:
    """The test rows, how many share their score with another row of their query, and NDCG@8
    (feco's convention) under two other tie rules than feco's (later rows first): earlier rows
    first, and the mean over every order of each tied group. A model of a few trees scores
    many documents alike, so the tie rule alone can move its NDCG.

    Examples
    --------
    >>> import polars as pl
    >>> test = pl.DataFrame({"qid": [1, 1, 1, 2, 2], "label": [0, 1, 0, 1, 0]})
    >>> counts = tie_counts(test, np.array([0.5, 0.5, 0.1, 0.3, 0.2]))
    >>> counts["scored_rows"], counts["tied_rows"]
    (5, 2)
    >>> counts["ndcg8_ties_forward"] > counts["ndcg8_ties_average"]  # the relevant row of the tie is second
    False
    """
    scored = test.select("qid", "label", pl.Series("score", np.asarray(scores, dtype=np.float64)))
    tied = scored.group_by("qid", "score").len().filter(pl.col("len") > 1).get_column("len").sum()
    ndcg8 = {rule: evaluate_labelled(scored, metrics=["ndcg@8"], conventions=Conventions().with_options(ties=rule))
             .metrics["ndcg@8"] for rule in ("input_order", "average")}
    return {"scored_rows": scored.height, "tied_rows": int(tied),
            "ndcg8_ties_forward": ndcg8["input_order"], "ndcg8_ties_average": ndcg8["average"]}


def _query_ndcg(per_query: pl.DataFrame, run_id: str) -> pl.DataFrame:
    """Per-query NDCG@4/8 under feco's convention: queries with no relevant document are left
    out, as they are of the mean."""
    return (per_query.filter(pl.col("ndcg@8").is_not_null())
            .select(pl.lit(run_id).alias("run_id"), pl.col("query").cast(pl.Int64).alias("qid"),
                    pl.col("ndcg@4").alias("ndcg4"), pl.col("ndcg@8").alias("ndcg8")))


def _chosen_features(base_importance: pl.DataFrame, test: pl.DataFrame, grid: Grid) -> list[tuple[str, str]]:
    """The top-k features by mean |SHAP|, then as contrasts the k least important features the
    baseline uses (SHAP and gain share above 0) that are covered.

    A feature the model never splits on cannot change a fixed model's scores when it is
    zeroed: as a contrast it would lose exactly 0 by construction and make "more important
    features lose more" look stronger than the used features show it.
    """
    ranked = base_importance.sort("shap_rank")
    top = ranked.get_column("feature").to_list()[: grid.top_k]
    used = ranked.filter((pl.col("shap_share") > 0) & (pl.col("gain_share") > 0)).get_column("feature").to_list()
    contrast = [f for f in reversed(used) if f not in top and coverage_of(test, f) >= MIN_CONTRAST_COVERAGE]
    return [("top", f) for f in top] + [("low", f) for f in contrast[: grid.low_k]]


def _cell(split: Split, baseline: TrainedRanker, grid: Grid, training: Training, *, mode: str, feature: str,
          role: str, reduction: float, seed: int, run_id: str, reference: RunRecord,
          base_importance: pl.DataFrame) -> RunRecord:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    losses = [Loss(feature, reduction)]
    test = apply_losses(split.test, losses, seed=seed, part="test")
    model, params, train_coverage = baseline, None, None
    if mode == "retrain":
        train = apply_losses(split.train, losses, seed=seed, part="train")
        valid = apply_losses(split.valid, losses, seed=seed, part="valid")
        params = _seeded(training.params, seed)
        model = _train(train, valid, split.features, params, training)
        train_coverage = coverage_of(train, feature)
    record = _evaluated(model, test, grid, run_id=run_id, kind=f"coverage_drop:{mode}", split=split,
                        experiment_id=reference.model_run["experiment_id"], params=params,
                        explain=_explained(grid, feature=feature, reduction=reduction, base_importance=base_importance))
    run = record.model_run
    cell = {"experiment_id": run["experiment_id"], "run_id": run_id, "dataset": split.dataset, "fold": split.fold,
            "setting": training.setting, "mode": mode, "feature": feature, "reduction": reduction, "seed": seed,
            "coverage_test_before": coverage_of(split.test, feature), "coverage_test_after": coverage_of(test, feature),
            "coverage_train_after": train_coverage,
            **{k: run[k] for k in ("best_iteration", "train_seconds", *NDCG_COLUMNS, "queries", "queries_no_relevant")},
            **_describe_feature(base_importance, feature, role), **_deltas(run, reference.model_run)}
    return RunRecord(run, record.importance, record.query_ndcg, cell)


def _explained(grid: Grid, *, feature: str, reduction: float, base_importance: pl.DataFrame) -> bool:
    """Whether a cell computes SHAP: only the top feature at the smallest share does, the one
    place a table reads a cell's importances (the shift of the paper's Figures 1 and 2). SHAP
    takes up to half of a Webis cell's time, and it changes none of the cell's values."""
    top = base_importance.row(by_predicate=pl.col("shap_rank") == 1, named=True)["feature"]
    return feature == top and reduction == min(grid.reductions)


def cells_frame(cells: list[dict]) -> pl.DataFrame:
    """Cell rows as a frame with the table's types."""
    # An explicit schema: the test-mode cells come first and have no train coverage, so
    # polars would type that column as Null from its first 100 rows and fail on the rest.
    return pl.DataFrame(cells, schema=CELL_SCHEMA)


def _train(train, valid, features, params: Mapping[str, object], training: Training) -> TrainedRanker:
    return train_ranker(train, valid, features=features, params=params,
                        num_boost_round=training.num_boost_round,
                        early_stopping_rounds=training.early_stopping_rounds)


def _seeded(params: Mapping[str, object], seed: int) -> dict:
    return {**params, "seed": seed}


def _describe_feature(base_importance: pl.DataFrame, feature: str, role: str) -> dict:
    row = base_importance.row(by_predicate=pl.col("feature") == feature, named=True)
    return {"role": role, "baseline_rank": row["shap_rank"], "baseline_shap_share": row["shap_share"],
            "baseline_gain_share": row["gain_share"]}


def _deltas(row: dict, reference: dict) -> dict:
    return {f"d_{c}": None if row[c] is None or reference[c] is None else row[c] - reference[c]
            for c in NDCG_COLUMNS}


def experiment_id(split: Split, grid: Grid, training: Training) -> str:
    """``<dataset>-fold<k>-<setting>-<digest>``: the digest covers what decides the baseline
    and the feature ranking (parameters, rounds, SHAP rows) but not the seeds, shares, modes
    or how many top and low features are taken (a smaller grid's cells are a subset of a
    larger one's), so a larger grid adds cells to the same experiment."""
    settings = json.dumps({"params": dict(training.params), "rounds": training.num_boost_round,
                           "stop": training.early_stopping_rounds, "shap_rows": grid.shap_sample_rows},
                          sort_keys=True, default=str)
    digest = hashlib.sha256(settings.encode()).hexdigest()[:8]
    return f"{split.dataset}-fold{split.fold}-{training.setting}-{digest}"


def correlations(cells: pl.DataFrame) -> pl.DataFrame:
    """Correlations of one experiment's cells for ``coverage_drop_correlations``, per dataset,
    fold and mode (see :mod:`feco.paper.claims`).

    Rows: ``scope`` ``within_feature`` is coverage against the NDCG@8 change inside each
    feature (Pearson and Spearman averaged over features, permutation p-values); ``r=<share>``
    is the features' baseline SHAP share against the NDCG@8 they lose at that share (Spearman,
    permutation p). Features are never pooled across coverage levels: that mixes a feature of
    coverage 0.14 with one of 0.94.

    Examples
    --------
    With ``result`` from :func:`run_coverage_drop` (not run as a doctest: it needs a trained grid)::

        correlations(result.cells).columns
        # ['dataset', 'fold', 'mode', 'scope', 'x', 'y', 'n', 'pearson', 'pearson_p', 'spearman', 'spearman_p']
    """
    by = ["dataset", "fold", "mode"]
    within = (within_feature_correlations(cells, by=by) if cells.height else pl.DataFrame())
    loss = (importance_loss_correlations(cells, by=by) if cells.height else pl.DataFrame())
    rows = [{**{k: r[k] for k in by}, "scope": "within_feature", "x": "coverage_test_after", "y": "d_ndcg8",
             "n": r["points"], **{k: r[k] for k in ("pearson", "pearson_p", "spearman", "spearman_p")}}
            for r in within.iter_rows(named=True)]
    rows += [{**{k: r[k] for k in by}, "scope": f"r={r['reduction']:g}", "x": "baseline_shap_share",
              "y": "ndcg8_loss", "n": r["points"], "pearson": None, "pearson_p": None,
              "spearman": r["spearman"], "spearman_p": r["spearman_p"]}
             for r in loss.iter_rows(named=True)]
    return pl.DataFrame(rows, schema={"dataset": pl.String, "fold": pl.Int64, "mode": pl.String, "scope": pl.String,
                                      "x": pl.String, "y": pl.String, "n": pl.Int64, "pearson": pl.Float64,
                                      "pearson_p": pl.Float64, "spearman": pl.Float64, "spearman_p": pl.Float64})


def table1(cells: pl.DataFrame, *, baseline: Mapping[str, float] | None = None) -> pl.DataFrame:
    """The grid shaped like the paper's Table 1: one row per mode, feature and share, with
    measured coverage and NDCG@4/8 (feco's convention) as mean ± sd over seeds, and the
    change from the baseline.

    Examples
    --------
    With ``result`` from :func:`run_coverage_drop` (not run as a doctest: it needs a trained grid)::

        print(table1(result.cells))
    """
    fmt = lambda c: (pl.format("{} ± {}", pl.col(c).mean().round(4), pl.col(c).std().fill_null(0).round(4)))
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
    With ``result`` from :func:`run_coverage_drop` (not run as a doctest: it needs a trained grid)::

        importance_shift(result, feature="f39")
    """
    base_id = f"{result.experiment_id}:baseline"
    cell_ids = result.cells.filter(feature=feature, reduction=reduction, mode=mode).get_column("run_id")
    base = result.importance.filter(pl.col("run_id") == base_id).sort("shap_rank").head(top)
    after = (result.importance.filter(pl.col("run_id").is_in(cell_ids.implode()))
             .group_by("feature").agg(pl.col("shap_share").mean().alias("shap_share_after"),
                                      pl.col("gain_share").mean().alias("gain_share_after")))
    return base.select("feature", "shap_rank", "shap_share", "gain_share").join(after, on="feature", how="left")
