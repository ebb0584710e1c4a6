-- feco_ma7: the trailing moving average of daily coverage (the FeCo paper's 7-day average).
-- Inputs: feco_daily. {moving_average_days} is the validated integer from the config
-- (DDL cannot bind parameters); the name keeps the paper's 7 whatever the setting.
-- coverage_ma7 = mean of the daily coverage values over the calendar days ds-N+1 .. ds that
-- have data (days without data are skipped; days_in_window says how many were used);
-- coverage_pooled7 = sum(n_covered) / sum(n_rows) over the same days.
CREATE OR REPLACE VIEW feco_ma7 AS
SELECT ds, feature, segment_dim, segment_value, coverage,
       avg(coverage) OVER recent_days AS coverage_ma7,
       sum(n_covered) OVER recent_days / nullif(sum(n_rows) OVER recent_days, 0) AS coverage_pooled7,
       count(*) OVER recent_days AS days_in_window
FROM feco_daily
WINDOW recent_days AS (
    PARTITION BY feature, segment_dim, segment_value
    ORDER BY ds
    RANGE BETWEEN INTERVAL ({moving_average_days} - 1) DAY PRECEDING AND CURRENT ROW
);
