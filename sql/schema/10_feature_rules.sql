-- feature_rules: per day and feature, the coverage rule the day was counted under and the
-- first day of the run of days counted under that same rule (rule_since): a feature's series
-- (its moving average, its alert history, its decay reference) starts there. previous_rule is
-- the rule of the run before (NULL for the first). Days whose rule was not recorded (NULL,
-- counted before feco recorded it) belong to the run around them, so an upgrade restarts no
-- series.
-- Inputs: feature_status.
CREATE OR REPLACE VIEW feature_rules AS
WITH known AS (
    SELECT ds, feature, rule,
           last_value(rule IGNORE NULLS) OVER (PARTITION BY feature ORDER BY ds
                                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
    FROM feature_status
),
runs_of_days AS (
    SELECT *, sum(CASE WHEN rule <> before THEN 1 ELSE 0 END) OVER (PARTITION BY feature ORDER BY ds) AS run
    FROM known
)
SELECT ds, feature, rule,
       min(ds) OVER (PARTITION BY feature, run) AS rule_since,
       first_value(before) OVER (PARTITION BY feature, run ORDER BY ds) AS previous_rule
FROM runs_of_days;
