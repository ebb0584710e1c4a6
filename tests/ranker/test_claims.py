"""The statistics behind the paper's claims, on made-up cells whose answer is known."""

import numpy as np
import polars as pl
import pytest

from feco.ranker.claims import (
    bootstrap_interval,
    distinct_cells,
    importance_shift_table,
    importance_loss_correlations,
    queries_needed,
    retrain_noise,
    sensitivity_table,
    within_feature_correlations,
)

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


def test_bootstrap_interval_brackets_the_mean_and_collapses_for_a_constant():
    values = np.random.default_rng(1).normal(-0.02, 0.1, size=400)
    low, high = bootstrap_interval(values, rng=np.random.default_rng(0))
    assert low < values.mean() < high and high - low == pytest.approx(2 * 1.96 * 0.1 / 20, rel=0.2)
    assert bootstrap_interval(np.full(50, 0.3)) == pytest.approx((0.3, 0.3))


def test_sensitivity_table_pools_folds_and_averages_seeds_per_query():
    deltas = pl.DataFrame({
        "dataset": "d", "setting": "plain", "mode": "test", "role": "top", "baseline_rank": 1, "reduction": 0.05,
        "fold": [1, 1, 1, 1, 2, 2], "seed": [1, 2, 1, 2, 1, 2], "qid": [10, 10, 11, 11, 20, 20],
        "d_ndcg4": 0.0, "d_ndcg8": [-0.1, -0.3, 0.0, 0.0, -0.2, -0.2]})
    row = sensitivity_table(deltas, resamples=200).row(0, named=True)
    assert (row["features"], row["folds"], row["queries"]) == ("top1", 2, 3)
    assert row["d_ndcg8"] == pytest.approx((-0.2 + 0.0 - 0.2) / 3)
    assert row["ci_low"] <= row["d_ndcg8"] <= row["ci_high"]


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
