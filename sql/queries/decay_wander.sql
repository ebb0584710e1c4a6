-- decay_wander: how much each series' weekly level wanders, for the decay rule's null.
-- A 7-day average is compared with a frozen reference weeks apart; besides the days' own
-- noise, the level itself moves from week to week (catalogue churn, a segment's changing
-- membership, campaigns). This measures that movement from whole weeks: 7-day blocks counted
-- back from the day before $ds to $ref_start, at most $wander_days back.
-- A week holding a day that raised an alert of a rule in $abnormal_day_rules (a drop, values
-- turning NULL, a collapse) for the
-- feature in the segment or in all traffic is not a whole week of normal days: an outage of
-- one feature must not widen the wander its segment's (or its source's) other features are
-- judged with.
-- Inputs: feco_daily, feature_rules, alerts (earlier days'), through the parts in
-- sql/queries/decay_wander/ and sql/queries/shared/ (the rest of traffic as alert_inputs has it;
-- feco.sql_files.composed puts them before this statement). Days counted under another coverage
-- rule than ds's are another series, left out.
-- Params: $ds, $ref_start, $wander_days, $min_rows; $abnormal_day_rules (rule
-- names, from feco.alerts.rules.registry); $risen_features,
-- $risen_dims, $risen_values, $risen_since (parallel lists, the series whose reference rose).
-- A series whose decay reference followed a rise (a launch, a rollout: $risen_* lists them
-- and the day the rise had held, from alert_inputs) counts its weeks from then: its weeks
-- before the rise are another level, not wander.
-- Output, per feature and segment: weeks (whole weeks of days with at least $min_rows rows),
--   week_var (the variance of their mean coverages), ratio_week_var (of their mean ratios to
--   the rest of traffic, NULL for the global segment).
SELECT feature, segment_dim, segment_value, count(*) AS weeks,
       var_samp(week_coverage) AS week_var, var_samp(week_ratio) AS ratio_week_var
FROM blocks
GROUP BY feature, segment_dim, segment_value
ORDER BY feature, segment_dim, segment_value;
