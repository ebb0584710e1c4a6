-- report_coverage_change: coverage against the mean of the previous days, per day, feature and
-- value of one segment dimension, for the report's heatmap (the baseline the drop rule uses).
-- Inputs: feco_daily. Params: $segment_dim, $baseline_days (calendar days before ds in the
-- baseline), $min_rows (rows a segment-day needs to be shown).
-- Output: ds, feature, segment_value, coverage, baseline (mean daily coverage over the
-- previous $baseline_days days with data; NULL on the first day), change_points
-- (100 * (coverage - baseline)).
WITH history AS (
    SELECT ds, feature, segment_value, coverage, n_rows,
           avg(coverage) OVER (
               PARTITION BY feature, segment_value
               ORDER BY ds
               RANGE BETWEEN INTERVAL ($baseline_days) DAY PRECEDING AND INTERVAL 1 DAY PRECEDING
           ) AS baseline
    FROM feco_daily
    WHERE segment_dim = $segment_dim
)
SELECT ds, feature, segment_value, coverage, baseline,
       100 * (coverage - baseline) AS change_points
FROM history
WHERE n_rows >= $min_rows
ORDER BY feature, ds, segment_value;
