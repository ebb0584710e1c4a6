-- decay_wander: how much each series' weekly level wanders, for the decay rule's null.
-- A 7-day average is compared with a frozen reference weeks apart; besides the days' own
-- noise, the level itself moves from week to week (catalogue churn, a segment's changing
-- membership, campaigns). This measures that movement from whole weeks: 7-day blocks counted
-- back from the day before $ds to $ref_start, at most $wander_days back (query-band segments
-- from $bands_from on: bands drawn from fewer days than their window are not the same segment).
-- A week holding a day that raised a step alert (a drop or values turning NULL) for the
-- feature in the segment or in all traffic is not a whole week of normal days: an outage of
-- one feature must not widen the wander its segment's (or its source's) other features are
-- judged with.
-- Inputs: feco_daily, feature_rules, alerts (earlier days'). Days counted under another coverage
-- rule than ds's are another series, left out.
-- Params: $ds, $ref_start, $wander_days, $min_rows, $bands_from.
-- Output, per feature and segment: weeks (whole weeks of days with at least $min_rows rows),
--   week_var (the variance of their mean coverages, from the changes between consecutive
--   weeks: robust to a level shift), ratio_week_var (of their mean ratios to the rest of
--   traffic, NULL for the global segment).
WITH rule_starts AS (
    SELECT feature, rule_since FROM feature_rules WHERE ds = $ds
),
daily AS (
    SELECT ds, feature, segment_dim, segment_value, n_rows, coverage,
           coverage / nullif(
               (any_value(n_covered) FILTER (WHERE segment_dim = 'all') OVER same_day - n_covered)
                   / nullif(any_value(n_rows) FILTER (WHERE segment_dim = 'all') OVER same_day - n_rows, 0),
               0) AS rest_ratio
    FROM feco_daily
    LEFT JOIN rule_starts USING (feature)
    WHERE ds BETWEEN greatest($ref_start, $ds - to_days($wander_days)) AND $ds - INTERVAL 1 DAY
      AND (rule_starts.rule_since IS NULL OR ds >= rule_starts.rule_since)
    WINDOW same_day AS (PARTITION BY ds, feature)
),
step_days AS (
    SELECT DISTINCT ds, feature, segment_dim, segment_value
    FROM alerts
    WHERE rule IN ('drop_vs_moving_average', 'missing_values', 'collapse')
),
blocks AS (
    SELECT daily.feature, daily.segment_dim, daily.segment_value,
           date_diff('day', daily.ds, $ds - INTERVAL 1 DAY) // 7 AS block,
           avg(daily.coverage) AS week_coverage, avg(daily.rest_ratio) AS week_ratio
    FROM daily
    LEFT JOIN step_days AS own
        ON own.ds = daily.ds AND own.feature = daily.feature
       AND own.segment_dim = daily.segment_dim AND own.segment_value = daily.segment_value
    LEFT JOIN step_days AS everywhere
        ON everywhere.ds = daily.ds AND everywhere.feature = daily.feature AND everywhere.segment_dim = 'all'
    WHERE daily.n_rows >= $min_rows AND (daily.ds >= $bands_from OR daily.segment_dim NOT LIKE '%query_band%')
      AND own.ds IS NULL AND everywhere.ds IS NULL
    GROUP BY ALL
    HAVING count(*) = 7  -- whole weeks only: a part week carries its weekdays' levels
)
-- The variance from the changes between consecutive weeks (half their mean square is the
-- variance of independent weekly levels), by their median once there are three (0.4549 is
-- the median of a chi-square on one degree of freedom): a level shift (a launch, a rollout
-- filling in) or an incident's week is one or two large changes among many, and does not
-- widen the wander. With fewer, their mean: a median of one or two is no estimate.
SELECT feature, segment_dim, segment_value, count(*) AS weeks,
       CASE WHEN count(change) >= 3 THEN median(change ^ 2) / (2 * 0.4549) ELSE avg(change ^ 2) / 2 END AS week_var,
       CASE WHEN count(ratio_change) >= 3 THEN median(ratio_change ^ 2) / (2 * 0.4549)
            ELSE avg(ratio_change ^ 2) / 2 END AS ratio_week_var
FROM (SELECT *,
             CASE WHEN lag(block) OVER weeks = block + 1 THEN week_coverage - lag(week_coverage) OVER weeks END AS change,
             CASE WHEN lag(block) OVER weeks = block + 1 THEN week_ratio - lag(week_ratio) OVER weeks END AS ratio_change
      FROM blocks
      WINDOW weeks AS (PARTITION BY feature, segment_dim, segment_value ORDER BY block DESC))
GROUP BY feature, segment_dim, segment_value
ORDER BY feature, segment_dim, segment_value;
