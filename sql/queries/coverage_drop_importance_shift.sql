-- coverage_drop_importance_shift: for each explained cell (the smallest share), the reduced
-- feature's SHAP share in the cell's model beside its share in the baseline (the paper's
-- Figures 1 and 2: a small coverage drop moves importance).
-- Inputs: coverage_drop_results, feature_importance. Params: none.
-- Output: experiment_id, dataset, fold, setting, mode, feature, role, baseline_rank, reduction,
-- seed, shap_share_before, shap_share_after, shap_rank_after.
SELECT c.experiment_id, c.dataset, c.fold, c.setting, c.mode, c.feature, c.role, c.baseline_rank,
       c.reduction, c.seed, b.shap_share AS shap_share_before, a.shap_share AS shap_share_after,
       a.shap_rank AS shap_rank_after
FROM coverage_drop_results AS c
JOIN feature_importance AS a ON a.run_id = c.run_id AND a.feature = c.feature
JOIN feature_importance AS b ON b.run_id = c.experiment_id || ':baseline' AND b.feature = c.feature
ORDER BY c.experiment_id, c.mode, c.baseline_rank, c.reduction, c.seed;
