-- report_coverage: daily coverage, its moving average and the sampled rows of every feature
-- in every segment, with the day's attribution there, for the report's trend, cold-start,
-- heatmap and attribution charts.
-- Inputs: feco_ma7, feco_daily, shap_daily_share. Params: none.
-- Output: ds, feature, segment_dim, segment_value, n_rows, coverage, coverage_ma7 (trailing
-- moving average of daily coverage, days without data skipped), shap_share (the feature's
-- share of the segment's mean |SHAP| that day; NULL where no row of it was explained).
SELECT m.ds, m.feature, m.segment_dim, m.segment_value, d.n_rows, m.coverage, m.coverage_ma7, s.shap_share
FROM feco_ma7 AS m
JOIN feco_daily AS d USING (ds, feature, segment_dim, segment_value)
LEFT JOIN shap_daily_share AS s USING (ds, feature, segment_dim, segment_value)
ORDER BY m.feature, m.segment_dim, m.segment_value, m.ds;
