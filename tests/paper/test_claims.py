"""The statistics behind the paper's claims, on made-up cells whose answer is known."""

import numpy as np
import polars as pl
import pytest

from feco.paper.claims import (
    benjamini_hochberg,
    bootstrap_p,
    distinct_cells,
    fold_models,
    holm,
    importance_loss_correlations,
    importance_shift_table,
    queries_needed,
    retrain_noise,
    sensitivity_tables,
    within_feature_correlations,
)
from feco.paper.claims_report import build_report, claim_tests, render
from feco.stats import bootstrap_means

SHARES = (0.05, 0.1, 0.25, 0.5, 1.0)


def _cells(change_per_lost_coverage: float, *, noise: float, seed: int = 0) -> pl.DataFrame:
    """Two folds x two features of coverage 0.14 and 0.94, three seeds: the NDCG@8 change is
    ``change_per_lost_coverage`` x the coverage lost, plus noise; r = 100% is one outcome."""
    rng = np.random.default_rng(seed)
    rows = []
    for fold in (1, 2):
        for feature, before, share in (("f_rare", 0.14, 0.05), ("f_common", 0.94, 0.30)):
            for reduction in SHARES:
                for s in (1, 2, 3):
                    after = before * (1 - reduction)
                    d = change_per_lost_coverage * (before - after)
                    d += 0.0 if reduction == 1.0 else noise * rng.standard_normal()
                    rows.append({"experiment_id": f"e{fold}", "dataset": "d", "setting": "plain", "mode": "test",
                                 "fold": fold, "feature": feature, "role": "top", "baseline_rank": 1,
                                 "baseline_shap_share": share, "reduction": reduction, "seed": s,
                                 "coverage_test_before": before, "coverage_test_after": after,
                                 "ndcg4": 0.5 + d, "ndcg8": 0.6 + d, "d_ndcg8": d})
    return pl.DataFrame(rows)


def test_identical_outcomes_across_seeds_count_once():
    cells = _cells(-0.1, noise=0.01)
    distinct = distinct_cells(cells)
    # 2 folds x 2 features: r = 100% keeps one seed of three; every other cell differs.
    assert cells.height - distinct.height == 2 * 2 * 2
    assert distinct.filter(reduction=1.0)["seed"].to_list() == [1, 1, 1, 1]


def test_a_dose_response_inside_features_is_found_and_noise_alone_is_not():
    by = ["dataset", "setting", "mode"]
    real = within_feature_correlations(_cells(-0.1, noise=0.002), by=by, permutations=999).row(0, named=True)
    assert real["features"] == 4 and real["points"] == 4 * (1 + 13)  # reference point + distinct cells
    assert real["pearson"] > 0.9 and real["pearson_p"] < 0.01
    assert real["spearman"] > 0.8 and real["spearman_p"] < 0.01
    null = within_feature_correlations(_cells(0.0, noise=0.01), by=by, permutations=999).row(0, named=True)
    assert abs(null["pearson"]) < 0.5 and null["pearson_p"] > 0.05


def test_importance_against_loss_ranks_features():
    cells = _cells(-0.1, noise=0.0)
    table = importance_loss_correlations(cells, by=["dataset", "setting", "mode"], permutations=999)
    # The common feature (SHAP share 0.30) loses more at every share: one point per fold x feature.
    assert table.height == len(SHARES) and (table["points"] == 4).all()
    assert (table["spearman"] > 0.8).all()


def test_bootstrap_means_bracket_the_mean_and_collapse_for_a_constant():
    values = np.random.default_rng(1).normal(-0.02, 0.1, size=400)
    low, high = np.percentile(bootstrap_means(values, resamples=2_000, rng=np.random.default_rng(0)), [2.5, 97.5])
    assert low < values.mean() < high and high - low == pytest.approx(2 * 1.96 * 0.1 / 20, rel=0.2)
    assert bootstrap_means(np.full(50, 0.3), resamples=100, rng=np.random.default_rng(0)) == pytest.approx(0.3)
    # Drawn in chunks: the count asked for, whatever the chunk size.
    assert len(bootstrap_means(values, resamples=4_500, rng=np.random.default_rng(0))) == 4_500


def test_sensitivity_tables_pool_folds_and_average_seeds_per_query():
    deltas = pl.DataFrame({
        "dataset": "d", "setting": "plain", "mode": "test", "role": "top", "baseline_rank": 1,
        "baseline_shap_share": 0.3, "feature": "f1", "reduction": 0.05,
        "fold": [1, 1, 1, 1, 2, 2], "seed": [1, 2, 1, 2, 1, 2], "qid": [10, 10, 11, 11, 20, 20],
        "d_ndcg4": 0.0, "d_ndcg8": [-0.1, -0.3, 0.0, 0.0, -0.2, -0.2]})
    pooled, per_fold = sensitivity_tables(deltas, resamples=200)
    row = pooled.row(0, named=True)
    assert (row["features"], row["folds"], row["queries"]) == ("top1", 2, 3)
    assert row["d_ndcg8"] == pytest.approx((-0.2 + 0.0 - 0.2) / 3)
    assert row["ci_low"] <= row["d_ndcg8"] <= row["ci_high"]
    assert per_fold.select("fold", "queries", "d_ndcg8").rows() == [(1, 2, pytest.approx(-0.1)), (2, 1, -0.2)]
    # Fold 2 has one query, always -0.2: its interval collapses and every resample is below 0.
    assert per_fold.row(1, named=True)["ci_low"] == per_fold.row(1, named=True)["ci_high"] == pytest.approx(-0.2)
    assert per_fold.row(1, named=True)["p"] == pytest.approx(2 / 201)


def test_the_bootstrap_p_value_says_what_the_interval_says():
    rng = np.random.default_rng(3)
    for shift in (0.0, 0.005, 0.01, 0.02, 0.05):
        means = bootstrap_means(rng.normal(-shift, 0.1, size=200), resamples=4_000, rng=rng)
        low, high = np.percentile(means, [2.5, 97.5])
        assert (bootstrap_p(means) < 0.05) == (high < 0 or low > 0), shift
    assert bootstrap_p(np.zeros(100)) == 1.0  # a change of exactly 0 everywhere


def test_holm_and_benjamini_hochberg_match_their_definitions():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    # Holm: sorted 0.005 0.01 0.03 0.04 times 4 3 2 1, then running maximum.
    assert holm(p)[:4].tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted times 4 / rank (4, 1.33, 2), then running minimum from the top.
    assert benjamini_hochberg(p)[:4].tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert np.isnan(holm(p)[4]) and np.isnan(benjamini_hochberg(p)[4])
    assert holm(np.array([0.5, 0.6])).tolist() == [1.0, 1.0]  # capped at 1
    scipy_stats = pytest.importorskip("scipy.stats")
    many = np.random.default_rng(0).uniform(size=50) ** 3
    assert benjamini_hochberg(many) == pytest.approx(scipy_stats.false_discovery_control(many))


def test_queries_needed_grows_with_the_square_of_noise_over_effect():
    assert queries_needed(0.1, 0.01) == 785  # (1.96 + 0.8416)^2 x 100, rounded up
    assert queries_needed(0.1, 0.005) == pytest.approx(4 * 785, abs=4)
    assert queries_needed(0.1, 0.0) is None


def test_retrain_noise_is_the_spread_of_the_controls():
    runs = pl.DataFrame({"experiment_id": "e1", "dataset": "d", "setting": "config", "fold": 1,
                         "kind": ["coverage_drop:baseline"] + ["coverage_drop:control"] * 3,
                         "ndcg8": [0.70, 0.70, 0.72, 0.68]})
    row = retrain_noise(runs).row(0, named=True)
    assert row["seeds"] == 3 and row["control_sd_ndcg8"] == pytest.approx(0.02)
    assert row["control_max_shift_ndcg8"] == pytest.approx(0.02)


def test_the_importance_shift_reads_the_top_feature_at_the_smallest_share():
    shifts = pl.DataFrame({"dataset": "d", "setting": "plain", "mode": "retrain", "fold": [1, 1, 2, 2],
                           "baseline_rank": 1, "reduction": 0.05, "seed": [1, 2, 1, 2],
                           "shap_share_before": [0.4, 0.4, 0.2, 0.2], "shap_share_after": [0.1, 0.3, 0.1, 0.1],
                           "shap_rank_after": [3, 1, 2, 2]})
    row = importance_shift_table(shifts).row(0, named=True)
    assert row["folds"] == 2 and row["shap_share_before"] == pytest.approx(0.3)
    assert row["shap_share_after"] == pytest.approx((0.2 + 0.1) / 2)
    assert row["share_of_runs_not_first"] == pytest.approx(0.75)


FEATURES = (("f1", "top", 1, 0.5), ("f2", "top", 2, 0.3), ("f3", "top", 3, 0.1), ("f9", "low", 30, 0.01),
            ("f8", "low", 40, 0.0))


def _stored_grid(dataset: str = "d", seed: int = 0) -> dict[str, pl.DataFrame]:
    """A small grid as the report's four queries return it: 2 folds, 2 modes, top features f1-f3,
    a used contrast f9 and one the model never uses (f8, SHAP share 0: it loses exactly 0 with the
    model fixed); shares 5% and 100%; 2 seeds; 8 queries a fold. A feature loses in proportion
    to its share and the coverage taken."""
    rng = np.random.default_rng(seed)
    cells, deltas, runs, shifts = [], [], [], []
    for fold in (1, 2):
        exp = f"{dataset}-fold{fold}-plain"
        runs += [{"experiment_id": exp, "dataset": dataset, "setting": "plain", "fold": fold, "kind": kind,
                  "run_id": f"{exp}:{kind}:{s}", "best_iteration": 10 + s, "ndcg8": 0.7 + 0.01 * s,
                  "scored_rows": 100, "tied_rows": 20 + fold, "ndcg8_ties_forward": 0.69 + 0.01 * s,
                  "ndcg8_ties_average": 0.695 + 0.01 * s}
                 for kind, seeds in (("coverage_drop:baseline", [0]), ("coverage_drop:control", [1, 2])) for s in seeds]
        for mode in ("test", "retrain"):
            for feature, role, rank, share in FEATURES:
                for reduction in (0.05, 1.0):
                    for s in (1, 2):
                        noise = 0.0 if mode == "test" and share == 0 else 0.01
                        per_query = -share * reduction * rng.uniform(0, 0.2, size=8) + noise * rng.standard_normal(8)
                        deltas += [{"experiment_id": exp, "dataset": dataset, "fold": fold, "setting": "plain",
                                    "mode": mode, "feature": feature, "role": role, "baseline_rank": rank,
                                    "baseline_shap_share": share, "reduction": reduction, "seed": s,
                                    "qid": 100 * fold + q, "d_ndcg4": d, "d_ndcg8": d}
                                   for q, d in enumerate(per_query)]
                        change = float(per_query.mean())
                        cells.append({"experiment_id": exp, "run_id": f"{exp}:{mode}:{feature}:{reduction}:{s}",
                                      "dataset": dataset, "fold": fold, "setting": "plain", "mode": mode,
                                      "feature": feature, "role": role, "baseline_rank": rank,
                                      "baseline_shap_share": share, "reduction": reduction, "seed": s,
                                      "coverage_test_before": 0.5, "coverage_test_after": 0.5 * (1 - reduction),
                                      "ndcg4": 0.6 + change, "ndcg8": 0.7 + change, "d_ndcg8": change})
                        if rank == 1 and reduction == 0.05:
                            shifts.append({"dataset": dataset, "setting": "plain", "mode": mode, "fold": fold,
                                           "baseline_rank": 1, "reduction": reduction, "seed": s,
                                           "shap_share_before": share, "shap_share_after": share / 2,
                                           "shap_rank_after": 2})
    return {"cells": pl.DataFrame(cells), "deltas": pl.DataFrame(deltas), "references": pl.DataFrame(runs),
            "shifts": pl.DataFrame(shifts)}


def _report(grid: dict[str, pl.DataFrame]):
    return build_report(grid["cells"], grid["deltas"], grid["references"], grid["shifts"], resamples=300, effect=0.01)


def test_the_report_is_the_same_whatever_order_the_rows_come_in():
    # A group_by without a fixed order once fed the generator rows in a different order each run.
    grid = _stored_grid()
    first = _report(grid)
    for shuffle in (1, 2, 3):
        shuffled = {name: frame.sample(fraction=1.0, shuffle=True, seed=shuffle) for name, frame in grid.items()}
        again = _report(shuffled)
        assert render(again) == render(first)
        assert claim_tests(again).equals(claim_tests(first))


def test_a_tables_rows_do_not_move_when_another_dataset_is_added():
    # Each row draws from its own stream: adding a dataset leaves the others' intervals as they were.
    alone = claim_tests(_report(_stored_grid("a")))
    both = {name: pl.concat([_stored_grid("a")[name], _stored_grid("b", seed=1)[name]])
            for name in ("cells", "deltas", "references", "shifts")}
    together = claim_tests(_report(both))
    kept = together.filter(pl.col("dataset") == "a").drop("p_adjusted")
    assert kept.sort(pl.all()).equals(alone.drop("p_adjusted").sort(pl.all()))


def test_every_test_is_in_one_family_and_adjusting_never_lowers_a_p_value():
    tests = claim_tests(_report(_stored_grid()))
    sizes = dict(tests.filter(pl.col("p").is_not_null()).group_by("family").len().iter_rows())
    # modes x feature groups (top1, top2-5, low, unused) x shares, pooled; x 2 folds per fold;
    # Pearson and Spearman per mode; one Spearman per mode and share with and without contrasts.
    assert sizes == {"sensitivity": 16, "fold_effect": 32, "within_feature": 4,
                     "importance_loss:top+low": 4, "importance_loss:top": 4}
    tested = tests.filter(pl.col("p").is_not_null())
    assert (tested["p_adjusted"] >= tested["p"] - 1e-15).all()
    assert set(tests.group_by("family").agg(pl.col("method").first()).iter_rows()) == {
        ("sensitivity", "holm"), ("fold_effect", "bh"), ("within_feature", "holm"),
        ("importance_loss:top+low", "holm"), ("importance_loss:top", "holm")}


def test_a_contrast_the_model_never_uses_is_kept_out_of_the_importance_claim():
    grid = _stored_grid()
    report = _report(grid)
    assert set(report.pooled["features"]) == {"top1", "top2-5", "low", "unused"}
    unused = report.pooled.filter(features="unused", mode="test")
    assert (unused["d_ndcg8"] == 0).all() and (unused["p"] == 1).all()
    points = dict(report.importance.group_by("points_from").agg(pl.col("points").max()).iter_rows())
    assert points == {"top+low": 2 * 4, "top": 2 * 3}  # folds x (top 3 + the used contrast), and top 3 only
    # With the unused contrast as a point, the fixed model's exact zeros would rank last every time.
    with_unused = importance_loss_correlations(grid["cells"].with_columns(pl.col("baseline_shap_share")
                                                                          .replace(0.0, 1e-9)),
                                               by=["dataset", "setting", "mode"], permutations=99)
    assert with_unused["points"].max() == 2 * 5


def test_fold_models_give_trees_and_tie_shares_per_fold():
    models = fold_models(_stored_grid()["references"])
    assert models.select("fold", "trees", "control_trees_min", "control_trees_max").rows() == [(1, 10, 11, 12),
                                                                                             (2, 10, 11, 12)]
    assert models["tied_share"].to_list() == [0.21, 0.22]
    assert models["tie_rule_shift"].to_list() == pytest.approx([-0.01, -0.01])
