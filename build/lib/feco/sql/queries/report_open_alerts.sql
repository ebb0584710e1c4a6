-- report_open_alerts: the headline alerts (open or ongoing) with the numbers that made them fire, for
-- the report's alert table and the alert-day marks on the trend charts.
-- Inputs: alerts. Params: none.
-- Output: ds, severity, rule, feature, segment_dim, segment_value, observed, baseline,
-- drop_abs, drop_rel, importance, n_rows, detail; most severe first within a day, latest day first.
SELECT ds, severity, rule, feature, segment_dim, segment_value, observed, baseline,
       drop_abs, drop_rel, importance, n_rows, detail
FROM alerts
WHERE status IN ('open', 'ongoing')
ORDER BY ds DESC,
         CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 WHEN 'low' THEN 3 ELSE 4 END,
         feature, segment_dim, segment_value, rule;
