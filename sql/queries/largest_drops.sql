-- largest_drops: the days on which a feature's coverage fell furthest below the moving
-- average of the days before it; one row per day and feature, naming the segment where the
-- drop was largest.
-- Inputs: feco_daily, feature_rules (the average restarts where a feature's coverage rule
-- changed). Params: $since (first ds to report), $min_days (history days needed
-- in the baseline), $min_rows (rows a segment needs that day), $limit.
-- Output: ds, feature, segment_dim, segment_value, coverage, baseline (mean daily coverage
-- over the previous 7 calendar days), drop_points (baseline - coverage, in points).
WITH history AS (
    SELECT ds, feature, segment_dim, segment_value, coverage, n_rows,
           avg(coverage) OVER days_before AS baseline,
           count(*) OVER days_before AS baseline_days
    FROM feco_daily
    LEFT JOIN feature_rules USING (ds, feature)
    WINDOW days_before AS (
        PARTITION BY feature, segment_dim, segment_value, rule_since
        ORDER BY ds
        RANGE BETWEEN INTERVAL 7 DAY PRECEDING AND INTERVAL 1 DAY PRECEDING
    )
)
SELECT ds, feature, segment_dim, segment_value,
       round(100 * coverage, 2) AS coverage_pct,
       round(100 * baseline, 2) AS baseline_pct,
       round(100 * (baseline - coverage), 2) AS drop_points
FROM history
WHERE ds >= $since AND baseline_days >= $min_days AND n_rows >= $min_rows
QUALIFY row_number() OVER (
    PARTITION BY ds, feature ORDER BY baseline - coverage DESC, segment_dim, segment_value
) = 1
ORDER BY baseline - coverage DESC, ds, feature, segment_dim, segment_value
LIMIT $limit;
