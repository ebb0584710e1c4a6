-- decay_wander: how much each series' weekly level wanders, for the decay rule's null.
-- A 7-day average is compared with a frozen reference weeks apart; besides the days' own
-- noise, the level itself moves from week to week (catalogue churn, a segment's changing
-- membership, campaigns). This measures that movement from whole weeks: 7-day blocks counted
-- back from the day before $ds to $ref_start, at most $wander_days back (query-band segments
-- from $bands_from on: bands drawn from fewer days than their window are not the same segment).
-- Inputs: feco_daily. Params: $ds, $ref_start, $wander_days, $min_rows, $bands_from.
-- Output, per feature and segment: weeks (whole weeks of days with at least $min_rows rows),
--   week_var (the variance of their mean coverages), ratio_week_var (of their mean ratios to
--   the rest of traffic, NULL for the global segment).
WITH daily AS (
    SELECT ds, feature, segment_dim, segment_value, n_rows, coverage,
           coverage / nullif(
               (any_value(n_covered) FILTER (WHERE segment_dim = 'all') OVER same_day - n_covered)
                   / nullif(any_value(n_rows) FILTER (WHERE segment_dim = 'all') OVER same_day - n_rows, 0),
               0) AS rest_ratio
    FROM feco_daily
    WHERE ds BETWEEN greatest($ref_start, $ds - to_days($wander_days)) AND $ds - INTERVAL 1 DAY
    WINDOW same_day AS (PARTITION BY ds, feature)
),
blocks AS (
    SELECT feature, segment_dim, segment_value,
           date_diff('day', ds, $ds - INTERVAL 1 DAY) // 7 AS block,
           avg(coverage) AS week_coverage, avg(rest_ratio) AS week_ratio
    FROM daily
    WHERE n_rows >= $min_rows AND (ds >= $bands_from OR segment_dim NOT LIKE '%query_band%')
    GROUP BY ALL
    HAVING count(*) = 7  -- whole weeks only: a part week carries its weekdays' levels
)
SELECT feature, segment_dim, segment_value, count(*) AS weeks,
       var_samp(week_coverage) AS week_var, var_samp(week_ratio) AS ratio_week_var
FROM blocks
GROUP BY feature, segment_dim, segment_value
ORDER BY feature, segment_dim, segment_value;
