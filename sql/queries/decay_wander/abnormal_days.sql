-- abnormal_days: the days a feature raised an alert of a rule in $abnormal_day_rules in a
-- segment (a drop, values turning NULL, a collapse): not normal days.
-- Inputs: alerts. Params: $abnormal_day_rules.
-- Output: ds, feature, segment_dim, segment_value.
SELECT DISTINCT ds, feature, segment_dim, segment_value
FROM alerts
WHERE list_contains($abnormal_day_rules, rule);
