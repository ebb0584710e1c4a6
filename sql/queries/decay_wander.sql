-- decay_wander: how much each series' weekly level wanders, for the decay rule's null.
-- A 7-day average is compared with a frozen reference weeks apart; besides the days' own
-- noise, the level itself moves from week to week (catalogue churn, a segment's changing
-- membership, campaigns). This measures that movement from whole weeks: 7-day blocks counted
-- back from the day before $ds to $ref_start, at most $wander_days back (query-band segments
-- from $bands_from on: bands drawn from fewer days than their window are not the same segment).
-- A week holding a day that raised an alert of a rule in $abnormal_day_rules (a drop, values
-- turning NULL, a collapse) for the
-- feature in the segment or in all traffic is not a whole week of normal days: an outage of
-- one feature must not widen the wander its segment's (or its source's) other features are
-- judged with.
-- Inputs: feco_daily, feature_rules, alerts (earlier days'). Days counted under another coverage
-- rule than ds's are another series, left out.
-- Params: $ds, $ref_start, $wander_days, $min_rows, $bands_from; $abnormal_day_rules (rule
-- names, from feco.alerts.rules.registry); $risen_features,
-- $risen_dims, $risen_values, $risen_since (parallel lists, the series whose reference rose).
-- A series whose decay reference followed a rise (a launch, a rollout: $risen_* lists them
-- and the day the rise had held, from alert_inputs) counts its weeks from then: its weeks
-- before the rise are another level, not wander.
-- Output, per feature and segment: weeks (whole weeks of days with at least $min_rows rows),
--   week_var (the variance of their mean coverages), ratio_week_var (of their mean ratios to
--   the rest of traffic, NULL for the global segment).
WITH rule_starts AS (
    SELECT feature, rule_since FROM feature_rules WHERE ds = $ds
),
risen AS (
    SELECT unnest($risen_features) AS feature, unnest($risen_dims) AS segment_dim,
           unnest($risen_values) AS segment_value, unnest($risen_since) AS since
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
    WHERE list_contains($abnormal_day_rules, rule)
),
blocks AS (
    SELECT daily.feature, daily.segment_dim, daily.segment_value,
           date_diff('day', daily.ds, $ds - INTERVAL 1 DAY) // 7 AS block,
           avg(daily.coverage) AS week_coverage, avg(daily.rest_ratio) AS week_ratio
    FROM daily
    LEFT JOIN risen USING (feature, segment_dim, segment_value)
    LEFT JOIN step_days AS own
        ON own.ds = daily.ds AND own.feature = daily.feature
       AND own.segment_dim = daily.segment_dim AND own.segment_value = daily.segment_value
    LEFT JOIN step_days AS everywhere
        ON everywhere.ds = daily.ds AND everywhere.feature = daily.feature AND everywhere.segment_dim = 'all'
    WHERE daily.n_rows >= $min_rows AND (daily.ds >= $bands_from OR daily.segment_dim NOT LIKE '%query_band%')
      AND own.ds IS NULL AND everywhere.ds IS NULL AND (risen.since IS NULL OR daily.ds >= risen.since)
    GROUP BY ALL
    HAVING count(*) = 7  -- whole weeks only: a part week carries its weekdays' levels
)
SELECT feature, segment_dim, segment_value, count(*) AS weeks,
       var_samp(week_coverage) AS week_var, var_samp(week_ratio) AS ratio_week_var
FROM blocks
GROUP BY feature, segment_dim, segment_value
ORDER BY feature, segment_dim, segment_value;
