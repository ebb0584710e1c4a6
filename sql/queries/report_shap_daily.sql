-- report_shap_daily: each feature's SHAP share in the model that scored each day (over its
-- training data), the reference line of the report's attribution chart.
-- Inputs: ranker_daily, feature_importance. Params: none.
-- Output: ds, run_id, feature, shap_share.
SELECT d.ds, d.run_id, i.feature, i.shap_share
FROM (SELECT DISTINCT ds, run_id FROM ranker_daily WHERE segment_dim = 'all') AS d
JOIN feature_importance AS i USING (run_id)
ORDER BY d.ds, i.feature;
