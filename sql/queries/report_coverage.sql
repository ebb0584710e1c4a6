-- report_coverage: daily coverage, its moving average and the sampled rows of every feature
-- in every segment, for the report's trend, cold-start and heatmap charts.
-- Inputs: feco_ma7, feco_daily. Params: none.
-- Output: ds, feature, segment_dim, segment_value, n_rows, coverage, coverage_ma7 (trailing
-- moving average of daily coverage, days without data skipped).
SELECT m.ds, m.feature, m.segment_dim, m.segment_value, d.n_rows, m.coverage, m.coverage_ma7
FROM feco_ma7 AS m
JOIN feco_daily AS d USING (ds, feature, segment_dim, segment_value)
ORDER BY m.feature, m.segment_dim, m.segment_value, m.ds;
