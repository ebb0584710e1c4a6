"""`feco experiment coverage-drop-report`: the claims' tables from the stored grid, every test
adjusted within its family, the text printed and the rows stored.

Families (each adjusted on its own; every test belongs to exactly one):

- ``sensitivity`` (Holm): every pooled cell's mean NDCG@8 change against 0, over every
  dataset, setting, mode, feature group and share (270 on the full grid). One family for the
  claim "a coverage drop costs NDCG", so the chance that any cell called a change anywhere is
  none stays under 5%.
- ``fold_effect`` (Benjamini-Hochberg): every per-fold cell. The per-fold table screens where
  the effect shows, so the share of false discoveries among the folds called is what is meant.
- ``within_feature`` (Holm): the Pearson and the Spearman test of every dataset, setting and mode.
- ``importance_loss:top+low`` and ``importance_loss:top`` (Holm each): the Spearman test of
  every dataset, setting, mode and share, with the used low-importance contrasts among the
  points and without them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from feco.paper import claims

CONFIGURATION = ["dataset", "setting", "mode"]
ADJUSTMENTS = {"holm": claims.holm, "bh": claims.benjamini_hochberg}
CONTRAST_SETS = {True: "top+low", False: "top"}
TEST_SCHEMA = {"claim": pl.String, "family": pl.String, "method": pl.String, "dataset": pl.String,
               "setting": pl.String, "mode": pl.String, "features": pl.String, "reduction": pl.Float64,
               "fold": pl.Int64, "statistic": pl.String, "estimate": pl.Float64, "ci_low": pl.Float64,
               "ci_high": pl.Float64, "n": pl.Int64, "p": pl.Float64, "p_adjusted": pl.Float64}


@dataclass(frozen=True)
class ClaimsReport:
    """Every table of the report, adjusted p-values beside the raw ones."""

    grid: pl.DataFrame
    models: pl.DataFrame
    noise: pl.DataFrame
    pooled: pl.DataFrame
    per_fold: pl.DataFrame
    within: pl.DataFrame
    importance: pl.DataFrame
    shift: pl.DataFrame
    power: pl.DataFrame
    resamples: int
    effect: float


def build_report(cells: pl.DataFrame, deltas: pl.DataFrame, references: pl.DataFrame, shifts: pl.DataFrame, *,
                 resamples: int, effect: float, seed: int = 0) -> ClaimsReport:
    """The report's tables from the four ``coverage_drop_*`` queries' results.

    Examples
    --------
    On the experiments' warehouse (not run as a doctest: it needs a stored grid)::

        report = build_report(*(named_query(conn, q) for q in QUERIES), resamples=20_000, effect=0.01)
        print(render(report))
    """
    pooled, per_fold = claims.sensitivity_tables(deltas, resamples=resamples, seed=seed)
    pooled = with_adjusted(pooled, ["p"], "holm")
    within = with_adjusted(claims.within_feature_correlations(cells, by=CONFIGURATION, permutations=resamples,
                                                              seed=seed),
                           ["pearson_p", "spearman_p"], "holm")
    importance = pl.concat([
        with_adjusted(claims.importance_loss_correlations(cells, by=CONFIGURATION, permutations=resamples,
                                                          seed=seed, contrasts=contrasts), ["spearman_p"], "holm")
        .with_columns(pl.lit(name).alias("points_from"))
        for contrasts, name in CONTRAST_SETS.items()])
    return ClaimsReport(claims.experiments_run(cells), claims.fold_models(references), claims.retrain_noise(references),
                        pooled, with_adjusted(per_fold, ["p"], "bh"), within, importance,
                        claims.importance_shift_table(shifts), claims.power_table(pooled, effect=effect),
                        resamples, effect)


def with_adjusted(table: pl.DataFrame, p_columns: list[str], method: str) -> pl.DataFrame:
    """``table`` with ``<p>_<method>`` beside each of ``p_columns``: every p-value of those
    columns in the table is one family.

    Examples
    --------
    >>> import polars as pl
    >>> with_adjusted(pl.DataFrame({"p": [0.01, 0.02]}), ["p"], "holm").get_column("p_holm").to_list()
    [0.02, 0.02]
    """
    raw = np.concatenate([table.get_column(c).cast(pl.Float64).fill_null(np.nan).to_numpy() for c in p_columns])
    adjusted = np.split(ADJUSTMENTS[method](raw), len(p_columns))
    return table.with_columns(pl.Series(f"{c}_{method}", values, nan_to_null=True)
                              for c, values in zip(p_columns, adjusted))


def claim_tests(report: ClaimsReport) -> pl.DataFrame:
    """One row per test with its family, raw and adjusted p-value: the ``coverage_drop_claim_tests``
    rows (per-fold rows have a fold; pooled rows and correlations none)."""
    def effects(claim: str, method: str, fold: pl.Expr) -> dict:
        return {"claim": pl.lit(claim), "family": pl.lit(claim), "method": pl.lit(method),
                "features": pl.col("features"), "reduction": pl.col("reduction"), "fold": fold,
                "statistic": pl.lit("mean_d_ndcg8"), "estimate": pl.col("d_ndcg8"), "ci_low": pl.col("ci_low"),
                "ci_high": pl.col("ci_high"), "n": pl.col("queries"), "p": pl.col("p"),
                "p_adjusted": pl.col(f"p_{method}")}
    parts = [_as_tests(report.pooled, **effects("sensitivity", "holm", pl.lit(None))),
             _as_tests(report.per_fold, **effects("fold_effect", "bh", pl.col("fold")))]
    parts += [_as_tests(report.within, claim=pl.lit("within_feature"), family=pl.lit("within_feature"),
                        method=pl.lit("holm"), statistic=pl.lit(name), estimate=pl.col(name), n=pl.col("points"),
                        p=pl.col(f"{name}_p"), p_adjusted=pl.col(f"{name}_p_holm"))
              for name in ("pearson", "spearman")]
    parts.append(_as_tests(report.importance, claim=pl.lit("importance_loss"),
                           family=pl.format("importance_loss:{}", "points_from"), method=pl.lit("holm"),
                           features=pl.col("points_from"), reduction=pl.col("reduction"),
                           statistic=pl.lit("spearman"), estimate=pl.col("spearman"), n=pl.col("points"),
                           p=pl.col("spearman_p"), p_adjusted=pl.col("spearman_p_holm")))
    return pl.concat(parts)


def _as_tests(table: pl.DataFrame, **columns: pl.Expr) -> pl.DataFrame:
    """``table``'s rows as test rows: the given columns, the configuration's, null for the rest."""
    given = {c: pl.col(c) for c in CONFIGURATION} | columns
    return table.select(given.get(c, pl.lit(None)).cast(t).alias(c) for c, t in TEST_SCHEMA.items())


def families(tests: pl.DataFrame, *, level: float = 0.05) -> pl.DataFrame:
    """Per family: the adjustment, how many tests it holds, and how many are at or below
    ``level`` before and after adjusting."""
    tested = tests.filter(pl.col("p").is_not_null())
    return (tested.group_by("family", "method")
            .agg(pl.len().alias("tests"), (pl.col("p") <= level).sum().alias(f"raw_p<={level:g}"),
                 (pl.col("p_adjusted") <= level).sum().alias(f"adjusted<={level:g}"))
            .sort("family"))


def fold_beside_pooled(report: ClaimsReport, *, features: str = "top1") -> pl.DataFrame:
    """One feature group's change per share, each fold beside the folds pooled: ``mean (adjusted
    p)`` per share, the BH q-value for a fold and the Holm p for the pooled row, with the fold
    baseline's trees and tied test rows."""
    def shown(table: pl.DataFrame, p_column: str, fold: pl.Expr) -> pl.DataFrame:
        return table.filter(pl.col("features") == features).select(
            *CONFIGURATION, fold.alias("fold"),
            pl.format("r={}%", (pl.col("reduction") * 100).round(0).cast(pl.Int64)).alias("share"),
            pl.format("{} ({})", pl.col("d_ndcg8").map_elements(lambda v: f"{v:.4f}", return_dtype=pl.String),
                      pl.col(p_column).map_elements(p_text, return_dtype=pl.String)).alias("cell"))
    cells = pl.concat([shown(report.per_fold, "p_bh", pl.col("fold").cast(pl.String)),
                       shown(report.pooled, "p_holm", pl.lit("all"))])
    index = [*CONFIGURATION, "fold"]
    models = report.models.select("dataset", "setting", pl.col("fold").cast(pl.String), "trees", "tied_share")
    return (cells.pivot("share", index=index, values="cell")
            .join(models, on=["dataset", "setting", "fold"], how="left")
            .select(*index, "trees", "tied_share", pl.exclude(*index, "trees", "tied_share"))
            .sort(*CONFIGURATION, pl.col("fold") == "all", "fold"))


def p_text(p: float) -> str:
    """A p-value as printed: four decimals, or two significant digits below 0.0001 (a
    permutation p can be 1/20001; four decimals would print it as 0).

    Examples
    --------
    >>> p_text(0.0123), p_text(1 / 20001)
    ('0.0123', '5.0e-05')
    """
    return f"{p:.1e}" if p < 0.0001 else f"{p:.4f}"


def _p_columns_as_text(table: pl.DataFrame) -> pl.DataFrame:
    columns = [c for c in table.columns if c == "p" or c.endswith(("_p", "_holm", "_bh"))]
    return table.with_columns(pl.col(c).map_elements(p_text, return_dtype=pl.String) for c in columns)


def importance_with_and_without(report: ClaimsReport) -> pl.DataFrame:
    """The importance-vs-loss tests side by side: with the used contrasts among the points and
    with the top features only."""
    index = [*CONFIGURATION, "reduction"]
    parts = [report.importance.filter(pl.col("points_from") == name)
             .select(*index, *[pl.col(c).alias(f"{name}:{c}") for c in ("points", "spearman", "spearman_p",
                                                                          "spearman_p_holm")])
             for name in CONTRAST_SETS.values()]
    return parts[0].join(parts[1], on=index, how="full", coalesce=True).sort(index)


def render(report: ClaimsReport) -> str:
    """The report as printed: every table, in a fixed order, with the line that says how to read it."""
    pooled = report.pooled.select(*claims.CELL, "folds", "queries", "d_ndcg8", "ci_low", "ci_high", "p", "p_holm")
    sections = [
        ("Stored grid (cells per dataset and setting; fold_features = (fold, feature) pairs reduced; "
         "cells_per_fold in fold order)", report.grid),
        ("Baselines per fold: trees kept by early stopping (controls: fewest-most), test rows whose score ties "
         "another row of their query, and NDCG@8 under feco's tie rule (the later row first, as every table "
         "here), the opposite rule (earlier row first) and the mean over tie orders", report.models),
        ("Retraining noise: controls retrained on unperturbed data, one per seed (NDCG@8, feco's convention)",
         report.noise),
        ("Tests and their families (adjusted within a family: holm = family-wise error, bh = false discovery rate)",
         families(claim_tests(report))),
        ("NDCG@8 change [95% bootstrap interval over queries], folds pooled; test: against the baseline, retrain: "
         "against the same-seed control. p: bootstrap, two-sided; p_holm: family 'sensitivity' (every row)",
         pooled),
        ("The top feature's change per fold beside the folds pooled: mean (adjusted p); a fold: BH q, family "
         "'fold_effect' (every fold x cell, all feature groups); all: Holm p, family 'sensitivity'. Trees and "
         "tied_share: the fold's baseline", fold_beside_pooled(report)),
        ("Within-feature correlation of coverage and NDCG@8 change (mean over fold x feature; permutation p within "
         "features; *_holm: family 'within_feature', Pearson and Spearman of every row)", report.within),
        ("Baseline SHAP share against NDCG@8 loss, per share (Spearman, permutation p; one point per fold x "
         "feature). top+low: the top 5 and the used low-importance contrasts; top: the top 5 only. *_holm: "
         "family 'importance_loss:top+low' or 'importance_loss:top' (every row)", importance_with_and_without(report)),
        ("Top feature's SHAP share before and after losing 5% of its coverage (Figures 1/2; folds and seeds "
         "averaged)", report.shift),
        (f"Power: queries needed to see the top feature's loss at r = 5% (measured), and a loss of "
         f"{report.effect:g}, paired test, 5% two-sided, 80% power", report.power),
    ]
    header = (f"{report.resamples} bootstrap resamples and permutations a test (p >= 1/{report.resamples + 1} "
              f"from a permutation, >= 2/{report.resamples + 1} from the bootstrap). NDCG@8 under feco's "
              "convention; tied scores: the later row of the test file first.")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=250, fmt_str_lengths=40,
                   tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True, float_precision=4):
        return "\n\n".join([header, *(f"{title}\n{_p_columns_as_text(table)}" for title, table in sections)]) + "\n"
