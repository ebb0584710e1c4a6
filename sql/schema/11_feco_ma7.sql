-- feco_ma7: the trailing moving average of daily coverage (the FeCo paper's 7-day average).
-- Inputs: feco_daily, feature_rules. {moving_average_days} is the validated integer from the
-- config (DDL cannot bind parameters); the name keeps the paper's 7 whatever the setting.
-- coverage_ma7 = mean of the daily coverage values over the calendar days ds-N+1 .. ds that
-- have data (days without data are skipped; days_in_window says how many were used) and were
-- counted under ds's coverage rule (the average restarts where the rule changed: rule_since);
-- coverage_pooled7 = sum(n_covered) / sum(n_rows) over the same days.
CREATE OR REPLACE VIEW feco_ma7 AS
SELECT daily.ds, daily.feature, daily.segment_dim, daily.segment_value, daily.coverage,
       avg(daily.coverage) OVER recent_days AS coverage_ma7,
       sum(daily.n_covered) OVER recent_days / nullif(sum(daily.n_rows) OVER recent_days, 0) AS coverage_pooled7,
       count(*) OVER recent_days AS days_in_window,
       rules.rule_since
FROM feco_daily AS daily
LEFT JOIN feature_rules AS rules USING (ds, feature)
WINDOW recent_days AS (
    PARTITION BY daily.feature, daily.segment_dim, daily.segment_value, rules.rule_since
    ORDER BY daily.ds
    RANGE BETWEEN INTERVAL ({moving_average_days} - 1) DAY PRECEDING AND CURRENT ROW
);
