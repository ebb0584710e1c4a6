-- shap_daily_share: each feature's daily attribution in each segment, beside its coverage
-- (join feco_daily on ds, feature, segment_dim, segment_value). mean_abs_shap = mean |SHAP|
-- over the explained rows of the segment; shap_share = the feature's part of the segment's
-- total mean |SHAP| that day (0 when the model attributes nothing there).
CREATE OR REPLACE VIEW shap_daily_share AS
SELECT ds, run_id, feature, segment_dim, segment_value, rows_sampled, rows_explained,
       abs_shap_sum / nullif(rows_explained, 0) AS mean_abs_shap,
       coalesce(abs_shap_sum / nullif(sum(abs_shap_sum) OVER (PARTITION BY ds, segment_dim, segment_value), 0), 0)
           AS shap_share
FROM shap_daily;
