-- report_shap_daily: each feature's SHAP share in the model that scored each day, for the
-- report's importance-over-time chart (a retrain shows as a step).
-- Inputs: ranker_daily, feature_importance. Params: none.
-- Output: ds, run_id, feature, shap_share.
SELECT d.ds, d.run_id, i.feature, i.shap_share
FROM (SELECT DISTINCT ds, run_id FROM ranker_daily WHERE segment_dim = 'all') AS d
JOIN feature_importance AS i USING (run_id)
ORDER BY d.ds, i.feature;
