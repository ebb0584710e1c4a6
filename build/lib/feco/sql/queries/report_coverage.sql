-- report_coverage: daily coverage and its moving average of every feature in one segment
-- dimension, for the report's trend charts.
-- Inputs: feco_ma7, feco_daily. Params: $segment_dim ('all' for the global segment).
-- Output: ds, feature, segment_value, n_rows, coverage, coverage_ma7 (trailing moving average
-- of daily coverage, days without data skipped).
SELECT m.ds, m.feature, m.segment_value, d.n_rows, m.coverage, m.coverage_ma7
FROM feco_ma7 AS m
JOIN feco_daily AS d USING (ds, feature, segment_dim, segment_value)
WHERE m.segment_dim = $segment_dim
ORDER BY m.feature, m.segment_value, m.ds;
