"""The FeCo paper's claims tested on the stored coverage-drop grid, with the statistics they need.

Three claims: (1) a coverage drop costs NDCG, more the larger the drop; (2) within a feature,
coverage and NDCG correlate; (3) more important features cost more when they lose coverage.

- **Intervals over queries.** A cell's NDCG change is a mean over test queries; its 95%
  interval is a percentile bootstrap over queries of the per-query change (against the
  baseline in test mode, against the same-seed control in retrain mode), seeds averaged per
  query first. The bootstrap resamples each fold's test queries apart (the folds' test sets
  are disjoint and fixed in size); a pooled row's resampled mean is the query-weighted mean of
  its folds' resampled means, so per-fold and pooled rows come from the same draws. Its
  p-value inverts the interval: twice the smaller share of resampled means on either side of 0.
- **Distinct points.** Cells whose outcome is identical across seeds (r = 100% in test mode,
  or a feature the model never uses) are one observation, not several.
- **Within-feature correlations.** Coverage against NDCG change inside each (fold, feature),
  with the r = 0 point (the reference, change 0), so features of coverage 0.14 and 0.94 are
  never pooled; the mean coefficient over features is tested by permuting the changes
  within each feature.
- **Importance against loss.** Spearman of the baseline SHAP share against the loss, one point
  per (fold, feature), with the low-importance contrasts and without them (the top features
  only). Contrasts the baseline never uses (an old grid's) are left out of both: a fixed model
  cannot change when they are zeroed.
- **Many tests.** p-values are adjusted within a family (:func:`holm`, :func:`benjamini_hochberg`);
  :mod:`feco.paper.claims_report` names the families.
- **Reproducible.** Every table row draws from its own generator, seeded by the table's name
  and the row's key (:func:`stream`), and reads its rows in a fixed order, so the same cells
  give the same numbers whatever order the warehouse returns them in.
- **Power.** Queries needed to see a given NDCG@8 loss with a paired two-sided test at 5%
  and 80% power, at the per-query spread measured here.

Every NDCG here is feco's convention (gain 2^rel - 1, ideal over the judged documents,
queries with no relevant document left out; tied scores ranked later row first).
"""

from __future__ import annotations

import hashlib
from statistics import NormalDist

import numpy as np
import polars as pl

from feco.stats import bootstrap_means

OUTCOME = ("experiment_id", "mode", "feature", "reduction", "ndcg4", "ndcg8")
CELL = ["dataset", "setting", "mode", "features", "reduction"]
# The order every table reads the cells in: one row per cell, whatever order they came in.
CELL_ORDER = ["dataset", "setting", "fold", "experiment_id", "mode", "feature", "reduction", "seed"]


def stream(table: str, key: tuple, seed: int = 0) -> np.random.Generator:
    """The random generator of one row of one table, seeded by the table's name, the row's key
    and ``seed``: no row's draws depend on another's or on the order rows are visited in.

    Examples
    --------
    >>> a = stream("sensitivity", ("mq2008", "plain")).random()
    >>> a == stream("sensitivity", ("mq2008", "plain")).random() != stream("within", ("mq2008", "plain")).random()
    True
    """
    digest = hashlib.sha256(f"{table}|{key!r}".encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "big")])


def distinct_cells(cells: pl.DataFrame) -> pl.DataFrame:
    """The cells with repeated outcomes counted once (the lowest seed kept), in cell order.

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"experiment_id": ["e"] * 2, "mode": ["test"] * 2, "feature": ["f1"] * 2,
    ...                       "reduction": [1.0] * 2, "seed": [2, 1], "ndcg4": [0.5] * 2, "ndcg8": [0.6] * 2})
    >>> distinct_cells(cells).get_column("seed").to_list()
    [1]
    """
    order = [c for c in CELL_ORDER if c in cells.columns]
    return cells.sort(order).unique(list(OUTCOME), keep="first", maintain_order=True)


def feature_group(role: pl.Expr, rank: pl.Expr, shap_share: pl.Expr) -> pl.Expr:
    """``top1``, ``top2-5``, ``low`` (a contrast the baseline uses) or ``unused`` (a contrast
    of SHAP share 0, which only a grid from before contrasts were chosen among used features
    holds) from a cell's role, baseline SHAP rank and share."""
    return (pl.when(role == "top").then(pl.when(rank == 1).then(pl.lit("top1")).otherwise(pl.lit("top2-5")))
            .when(shap_share > 0).then(pl.lit("low")).otherwise(pl.lit("unused")))


def sensitivity_tables(query_deltas: pl.DataFrame, *, resamples: int = 2_000,
                       seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Mean NDCG@4/8 change per dataset, setting, mode, feature group and share, pooled over
    folds and per fold, each with a 95% bootstrap interval over queries, its p-value and the
    per-query spread.

    ``query_deltas`` is the ``coverage_drop_query_deltas`` query's result. Returns (pooled,
    per fold); both share one bootstrap per (cell, fold).

    Examples
    --------
    On the experiments' warehouse (not run as a doctest: it needs a stored grid)::

        pooled, per_fold = sensitivity_tables(named_query(conn, "coverage_drop_query_deltas"))
    """
    per_query = (query_deltas
                 .with_columns(feature_group(pl.col("role"), pl.col("baseline_rank"),
                                             pl.col("baseline_shap_share")).alias("features"))
                 .sort(*CELL, "fold", "qid", "feature", "seed")
                 .group_by(*CELL, "fold", "qid", maintain_order=True)
                 .agg(pl.col("d_ndcg4").mean(), pl.col("d_ndcg8").mean()))
    pooled, per_fold = [], []
    for key, cell in per_query.group_by(CELL, maintain_order=True):
        rng = stream("sensitivity", key, seed)
        weighted = np.zeros(resamples)
        for (fold,), part in cell.group_by("fold", maintain_order=True):
            means = bootstrap_means(part.get_column("d_ndcg8").to_numpy(), resamples=resamples, rng=rng)
            per_fold.append(dict(zip(CELL, key)) | {"fold": fold} | _effect(part, means))
            weighted += part.height * means
        pooled.append(dict(zip(CELL, key)) | {"folds": cell.get_column("fold").n_unique()}
                      | _effect(cell, weighted / cell.height))
    return pl.DataFrame(pooled), pl.DataFrame(per_fold)


def _effect(per_query: pl.DataFrame, means: np.ndarray) -> dict:
    """A cell's (or a fold's) mean change with its bootstrap interval and p-value."""
    d8 = per_query.get_column("d_ndcg8").to_numpy()
    low, high = np.percentile(means, [2.5, 97.5])
    return {"queries": len(d8), "d_ndcg4": float(per_query.get_column("d_ndcg4").mean()),
            "d_ndcg8": float(d8.mean()), "ci_low": float(low), "ci_high": float(high),
            "p": bootstrap_p(means), "query_sd": float(d8.std(ddof=1)) if len(d8) > 1 else None}


def bootstrap_p(means: np.ndarray) -> float:
    """Two-sided p-value of "the mean change is 0" from bootstrap means: twice the smaller share
    on either side of 0 (the sample itself counted once on each side), at most 1. It is below
    0.05 when the 95% percentile interval leaves out 0; the smallest value is 2 / (resamples + 1).

    Examples
    --------
    >>> bootstrap_p(np.array([-0.3, -0.2, -0.1, 0.1]))
    0.8
    >>> bootstrap_p(np.zeros(9))  # no change at all
    1.0
    """
    below, above = int(np.sum(means <= 0)), int(np.sum(means >= 0))
    return min(1.0, 2 * (1 + min(below, above)) / (1 + len(means)))


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values: the family-wise error (any false claim in the family)
    stays below a level when the claims keep adjusted p at or below it. NaN stays NaN and is not
    counted in the family.

    Examples
    --------
    >>> holm(np.array([0.01, 0.04, 0.03, np.nan])).round(4).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    return _adjusted(p_values, lambda ordered, m: np.maximum.accumulate((m - np.arange(m)) * ordered))


def benjamini_hochberg(p_values: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values): among the tests kept at q at or below a
    level, the expected share of false discoveries stays below it. NaN stays NaN.

    Examples
    --------
    >>> benjamini_hochberg(np.array([0.01, 0.04, 0.03, 0.5])).round(4).tolist()
    [0.04, 0.0533, 0.0533, 0.5]
    """
    def step_up(ordered: np.ndarray, m: int) -> np.ndarray:
        return np.minimum.accumulate((ordered * m / np.arange(1, m + 1))[::-1])[::-1]
    return _adjusted(p_values, step_up)


def _adjusted(p_values: np.ndarray, rule) -> np.ndarray:
    p_values = np.asarray(p_values, dtype=np.float64)
    out = np.full(len(p_values), np.nan)
    tested = np.flatnonzero(~np.isnan(p_values))
    order = tested[np.argsort(p_values[tested], kind="stable")]
    out[order] = np.minimum(1.0, rule(p_values[order], len(order)))
    return out


def within_feature_correlations(cells: pl.DataFrame, *, by: list[str], permutations: int = 2_000,
                                seed: int = 0) -> pl.DataFrame:
    """Pearson and Spearman of coverage against NDCG@8 change inside each (experiment,
    feature), averaged over features per ``by`` group, with permutation p-values.

    Each feature contributes its distinct cells plus the reference point (its coverage before
    the drop, change 0). The p-value permutes the changes within every feature at once and
    compares the mean coefficient, two-sided.

    Examples
    --------
    On the stored cells (not run as a doctest: it needs a stored grid)::

        within_feature_correlations(cells, by=["dataset", "setting", "mode"])
    """
    points = _with_reference_points(distinct_cells(cells)).sort(*by, "experiment_id", "feature", "reduction", "seed")
    rows = []
    for key, part in points.group_by(by, maintain_order=True):
        strata = [(f.get_column("coverage").to_numpy(), f.get_column("d_ndcg8").to_numpy())
                  for _, f in part.group_by("experiment_id", "feature", maintain_order=True)]
        strata = [(x, y) for x, y in strata if len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0]
        out = dict(zip(by, key)) | {"features": len(strata), "points": sum(len(x) for x, _ in strata)}
        for name, transform in (("pearson", _identity), ("spearman", _ranks)):
            coefficient, p_value = _stratified_permutation(
                [(transform(x), transform(y)) for x, y in strata], permutations=permutations,
                rng=stream(f"within_feature:{name}", key, seed))
            out |= {name: coefficient, f"{name}_p": p_value}
        rows.append(out)
    return pl.DataFrame(rows)


def importance_loss_correlations(cells: pl.DataFrame, *, by: list[str], permutations: int = 2_000,
                                 seed: int = 0, contrasts: bool = True) -> pl.DataFrame:
    """Spearman of a feature's baseline SHAP share against the NDCG@8 it loses at one share,
    per ``by`` group and share; one point per (fold, feature), seeds averaged; permutation p.

    ``contrasts``: the low-importance contrasts the baseline uses are points beside the top
    features (True) or left out (False). Contrasts of SHAP share 0 are always left out.

    Examples
    --------
    On the stored cells (not run as a doctest: it needs a stored grid)::

        importance_loss_correlations(cells, by=["dataset", "setting", "mode"], contrasts=False)
    """
    kept = pl.col("role") == "top"
    if contrasts:
        kept = kept | (pl.col("baseline_shap_share") > 0)
    losses = (distinct_cells(cells).filter(kept)
              .group_by(*by, "reduction", "experiment_id", "feature", maintain_order=True)
              .agg(pl.col("baseline_shap_share").first(), (-pl.col("d_ndcg8")).mean().alias("loss"))
              .sort(*by, "reduction", "experiment_id", "feature"))
    rows = []
    for key, part in losses.group_by([*by, "reduction"], maintain_order=True):
        x, y = part.get_column("baseline_shap_share").to_numpy(), part.get_column("loss").to_numpy()
        defined = len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0
        coefficient, p_value = _stratified_permutation(
            [(_ranks(x), _ranks(y))] if defined else [], permutations=permutations,
            rng=stream(f"importance_loss:{contrasts}", key, seed))
        rows.append(dict(zip([*by, "reduction"], key)) | {"points": len(x), "spearman": coefficient,
                                                          "spearman_p": p_value})
    return pl.DataFrame(rows)


def queries_needed(query_sd: float, effect: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Queries a paired two-sided z-test needs to detect a mean change of ``effect`` when the
    per-query changes spread with standard deviation ``query_sd``; None for no effect.

    Examples
    --------
    >>> queries_needed(0.1, 0.01)
    785
    """
    if not effect or query_sd is None:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return int(np.ceil((z * query_sd / abs(effect)) ** 2))


def retrain_noise(runs: pl.DataFrame) -> pl.DataFrame:
    """Per dataset and setting: how far retraining on unperturbed data with another seed moves
    NDCG@8 (spread of the controls within a fold, averaged over folds; largest distance of a
    control from the baseline).

    ``runs`` is the ``coverage_drop_reference_runs`` query's result.
    """
    per_fold = (runs.filter(pl.col("kind") == "coverage_drop:control")
                .join(runs.filter(pl.col("kind") == "coverage_drop:baseline")
                      .select("experiment_id", pl.col("ndcg8").alias("baseline_ndcg8")), on="experiment_id")
                .sort("dataset", "setting", "fold", "ndcg8")
                .group_by("dataset", "setting", "fold", maintain_order=True)
                .agg(pl.len().alias("seeds"), pl.col("ndcg8").std().alias("sd"),
                     (pl.col("ndcg8") - pl.col("baseline_ndcg8")).abs().max().alias("max_from_baseline")))
    return (per_fold.group_by("dataset", "setting", maintain_order=True)
            .agg(pl.col("fold").n_unique().alias("folds"), pl.col("seeds").max(),
                 pl.col("sd").mean().alias("control_sd_ndcg8"),
                 pl.col("max_from_baseline").max().alias("control_max_shift_ndcg8"))
            .sort("dataset", "setting"))


def fold_models(runs: pl.DataFrame) -> pl.DataFrame:
    """Per dataset, setting and fold: the baseline's trees, the controls' (fewest and most),
    the share of test rows whose score ties another row of their query, and the baseline's
    NDCG@8 under feco's tie rule (later row first), the opposite rule and the mean over tie
    orders (None for runs stored before ties were counted).

    ``runs`` is the ``coverage_drop_reference_runs`` query's result.
    """
    controls = (runs.filter(pl.col("kind") == "coverage_drop:control")
                .group_by("experiment_id")
                .agg(pl.col("best_iteration").min().alias("control_trees_min"),
                     pl.col("best_iteration").max().alias("control_trees_max")))
    return (runs.filter(pl.col("kind") == "coverage_drop:baseline")
            .join(controls, on="experiment_id", how="left")
            .select("dataset", "setting", "fold", pl.col("best_iteration").alias("trees"),
                    "control_trees_min", "control_trees_max", pl.col("scored_rows").alias("test_rows"),
                    (pl.col("tied_rows") / pl.col("scored_rows")).alias("tied_share"), "ndcg8",
                    pl.col("ndcg8_ties_forward").alias("ndcg8_forward"),
                    pl.col("ndcg8_ties_average").alias("ndcg8_average"),
                    (pl.col("ndcg8_ties_forward") - pl.col("ndcg8")).alias("tie_rule_shift"))
            .sort("dataset", "setting", "fold"))


def _with_reference_points(cells: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in cells.columns if c in ("dataset", "setting", "mode", "fold", "experiment_id", "feature")]
    measured = cells.select(*keys, "reduction", "seed", pl.col("coverage_test_after").alias("coverage"), "d_ndcg8")
    reference = (cells.group_by(keys, maintain_order=True)
                 .agg(pl.lit(0.0).alias("reduction"), pl.lit(0, measured.schema["seed"]).alias("seed"),
                      pl.col("coverage_test_before").first().alias("coverage"), pl.lit(0.0).alias("d_ndcg8")))
    return pl.concat([reference, measured], how="vertical_relaxed")


def _stratified_permutation(strata: list[tuple[np.ndarray, np.ndarray]], *, permutations: int,
                            rng: np.random.Generator) -> tuple[float | None, float | None]:
    """Mean Pearson coefficient over strata and its two-sided permutation p-value (y permuted
    within each stratum)."""
    if not strata:
        return None, None
    observed = np.mean([_pearson(x, y[None, :])[0] for x, y in strata])
    null = np.zeros(permutations)
    for x, y in strata:
        shuffled = np.take_along_axis(np.broadcast_to(y, (permutations, len(y))),
                                      rng.random((permutations, len(y))).argsort(axis=1), axis=1)
        null += _pearson(x, shuffled) / len(strata)
    # +1 on both sides: the observed arrangement is one of the permutations.
    p_value = (1 + np.sum(np.abs(null) >= abs(observed) - 1e-12)) / (1 + permutations)
    return float(observed), float(p_value)


def _pearson(x: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Pearson coefficient of ``x`` with each row of ``ys``."""
    xc = x - x.mean()
    yc = ys - ys.mean(axis=1, keepdims=True)
    return (yc @ xc) / (np.sqrt((yc ** 2).sum(axis=1)) * np.sqrt((xc ** 2).sum()))


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank), so Pearson on ranks is Spearman."""
    return pl.Series(values).rank("average").to_numpy().astype(np.float64)


def _identity(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


def experiments_run(cells: pl.DataFrame) -> pl.DataFrame:
    """What the stored grid holds: per dataset and setting, the folds, features, shares and
    seeds, the cells, and the cells of each fold in fold order (so a fold stopped part-way
    shows).

    Examples
    --------
    >>> import polars as pl
    >>> cells = pl.DataFrame({"dataset": ["d"] * 3, "setting": ["plain"] * 3, "fold": [2, 1, 1],
    ...                       "feature": ["f1", "f2", "f1"], "reduction": [0.05] * 3, "seed": [1] * 3})
    >>> experiments_run(cells).select("folds", "cells", "cells_per_fold").row(0)
    ('1,2', 3, '2,1')
    """
    per_fold = (cells.group_by("dataset", "setting", "fold").agg(pl.len().alias("cells"))
                .sort("dataset", "setting", "fold"))
    return (cells.group_by("dataset", "setting")
            .agg(pl.col("fold").unique().sort().cast(pl.String).str.join(",").alias("folds"),
                 pl.struct("fold", "feature").n_unique().alias("fold_features"),
                 pl.col("reduction").n_unique().alias("shares"), pl.col("seed").max().alias("seeds"),
                 pl.len().alias("cells"))
            .join(per_fold.group_by("dataset", "setting", maintain_order=True)
                  .agg(pl.col("cells").cast(pl.String).str.join(",").alias("cells_per_fold")),
                  on=["dataset", "setting"])
            .sort("dataset", "setting"))


def power_table(table: pl.DataFrame, *, effect: float, reduction: float = 0.05) -> pl.DataFrame:
    """Per dataset, setting and mode, for the top feature at ``reduction``: the measured loss,
    the per-query spread, the queries the test sets hold, and the queries needed to detect
    the measured loss and a loss of ``effect``."""
    top = table.filter((pl.col("features") == "top1") & (pl.col("reduction") == reduction))
    return top.select(
        "dataset", "setting", "mode", "queries", "d_ndcg8", "query_sd",
        pl.struct("query_sd", "d_ndcg8").map_elements(
            lambda r: queries_needed(r["query_sd"], r["d_ndcg8"]), return_dtype=pl.Int64).alias("needed_measured"),
        pl.col("query_sd").map_elements(lambda sd: queries_needed(sd, effect),
                                        return_dtype=pl.Int64).alias(f"needed_{effect:g}"),
    )


def importance_shift_table(shifts: pl.DataFrame, *, reduction: float = 0.05) -> pl.DataFrame:
    """The top feature's SHAP share before and after losing ``reduction`` of its coverage,
    per dataset, setting and mode (means over folds and seeds; how many folds its rank fell).

    ``shifts`` is the ``coverage_drop_importance_shift`` query's result.
    """
    top = (shifts.filter((pl.col("baseline_rank") == 1) & (pl.col("reduction") == reduction))
           .sort("dataset", "setting", "mode", "fold", "seed"))
    per_fold = top.group_by("dataset", "setting", "mode", "fold", maintain_order=True).agg(
        pl.col("shap_share_before").first(), pl.col("shap_share_after").mean(),
        (pl.col("shap_rank_after") > 1).mean().alias("lost_first_place"))
    return (per_fold.group_by("dataset", "setting", "mode", maintain_order=True)
            .agg(pl.len().alias("folds"), pl.col("shap_share_before").mean(), pl.col("shap_share_after").mean(),
                 pl.col("lost_first_place").mean().alias("share_of_runs_not_first"))
            .sort("dataset", "setting", "mode"))
