-- history: the earlier days' lowest coverage, the moving average's days before $ds and the
-- day before $ds as the series see it (at $ds's mix).
-- The lowest coverage leaves out earlier days below $collapse_share of the spread period's
-- median: a collapsed day is no level to judge the next one by (an outage's second day).
-- Inputs: recent. Params: $ds, $baseline_days, $spread_days, $ma_days, $collapse_share.
-- Output: feature, segment_dim, segment_value, baseline_days, history_min, history_days,
-- recent_sum, recent_days, recent_ratio_sum, recent_ratio_days, yesterday_coverage,
-- yesterday_ratio.
SELECT feature, segment_dim, segment_value,
       count(*) FILTER (WHERE ds >= $ds - to_days($baseline_days)) AS baseline_days,
       min(coverage) FILTER (WHERE ds >= $ds - to_days($spread_days)
                             AND coverage >= $collapse_share * typical) AS history_min,
       count(*) FILTER (WHERE ds >= $ds - to_days($spread_days)) AS history_days,
       sum(coverage) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_sum,
       count(coverage) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_days,
       sum(coverage / nullif(rest_coverage, 0)) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_ratio_sum,
       count(coverage / nullif(rest_coverage, 0)) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_ratio_days,
       max(as_today) FILTER (WHERE ds = $ds - to_days(1)) AS yesterday_coverage,
       max(as_today / nullif(rest_as_today, 0)) FILTER (WHERE ds = $ds - to_days(1)) AS yesterday_ratio
FROM (
    SELECT *, median(CASE WHEN ds >= $ds - to_days($spread_days) THEN coverage END)
                  OVER (PARTITION BY feature, segment_dim, segment_value) AS typical
    FROM recent
    WHERE ds < $ds
)
GROUP BY ALL;
