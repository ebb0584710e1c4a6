-- largest_drops: the days on which a feature's coverage fell furthest below the average of
-- the days before it; one row per day and feature, naming the segment where the drop was
-- largest, beside the drop in all traffic (a wide drop is listed even where a small segment
-- fell further).
-- Inputs: feco_daily, feature_rules (the average restarts where a feature's coverage rule
-- changed). Params: $since (first ds to report), $days (the moving average's days: the
-- baseline is the mean of the $days calendar days before ds), $min_days (of them with data),
-- $warmup_days (days the warehouse must hold before ds, as the alert rules' warm-up), $min_rows
-- (rows a segment needs that day), $dim (one segment_dim, 'all' for all traffic; NULL: every
-- dimension but the crosses, whose small cells are noisy), $limit.
-- Output: ds, feature, segment_dim, segment_value, coverage_pct, baseline_pct, drop_points
-- (baseline - coverage, in points), all_traffic_drop_points (the same in all traffic; NULL
-- where all traffic is not judged that day).
WITH history AS (
    SELECT ds, feature, segment_dim, segment_value, coverage, n_rows,
           avg(coverage) OVER days_before AS baseline,
           count(*) OVER days_before AS baseline_days
    FROM feco_daily
    LEFT JOIN feature_rules USING (ds, feature)
    WHERE segment_dim = 'all' OR segment_dim = $dim OR ($dim IS NULL AND segment_dim NOT LIKE '% x %')
    WINDOW days_before AS (
        PARTITION BY feature, segment_dim, segment_value, rule_since
        ORDER BY ds
        RANGE BETWEEN to_days(CAST($days AS INTEGER)) PRECEDING AND INTERVAL 1 DAY PRECEDING
    )
),
judged AS (
    SELECT *
    FROM history
    WHERE ds >= $since
      AND ds >= (SELECT min(ds) FROM feco_daily) + CAST($warmup_days AS INTEGER)
      AND baseline_days >= $min_days
      AND n_rows >= $min_rows
),
all_traffic AS (
    SELECT ds, feature, baseline - coverage AS all_traffic_drop
    FROM judged
    WHERE segment_dim = 'all'
)
SELECT ds, feature, segment_dim, segment_value,
       round(100 * coverage, 2) AS coverage_pct,
       round(100 * baseline, 2) AS baseline_pct,
       round(100 * (baseline - coverage), 2) AS drop_points,
       round(100 * all_traffic_drop, 2) AS all_traffic_drop_points
FROM judged
LEFT JOIN all_traffic USING (ds, feature)
WHERE baseline > coverage AND ($dim IS NULL OR segment_dim = $dim)
QUALIFY row_number() OVER (
    PARTITION BY ds, feature ORDER BY baseline - coverage DESC, segment_dim, segment_value
) = 1
ORDER BY baseline - coverage DESC, ds, feature, segment_dim, segment_value
LIMIT $limit;
