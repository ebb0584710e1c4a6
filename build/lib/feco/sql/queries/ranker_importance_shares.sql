-- ranker_importance_shares: each feature's SHAP share in one model run, for alert severity.
-- Inputs: feature_importance. Params: $run_id. Output: feature, shap_share.
SELECT feature, shap_share
FROM feature_importance
WHERE run_id = $run_id
ORDER BY feature;
