-- report_feature_importance: every stored feature importance, for the report's importance
-- charts (baseline and coverage-drop runs, and the reference ranker's).
-- Inputs: feature_importance. Params: none.
-- Output: run_id, feature, gain_share, shap_share, shap_rank.
SELECT run_id, feature, gain_share, shap_share, shap_rank
FROM feature_importance
ORDER BY run_id, shap_rank;
