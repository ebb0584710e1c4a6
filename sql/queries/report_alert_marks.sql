-- report_alert_marks: every coverage alert that fired in a segment, headline or grouped under
-- one, for the marks on that segment's trend: the rules whose observed value is a coverage
-- (drop, decay: its 7-day average, floor, collapse); suppressed low-volume marks are not alerts.
-- Inputs: alerts. Params: $coverage_rules (their names, from feco.alerts.rules.registry).
-- Output: ds, feature, segment_dim, segment_value, rule, status, severity, observed,
-- baseline, threshold (the rule's own inputs: what it expected and where it fired).
SELECT ds, feature, segment_dim, segment_value, rule, status, severity, observed, baseline, threshold
FROM alerts
WHERE list_contains($coverage_rules, rule) AND status <> 'suppressed'
ORDER BY feature, segment_dim, segment_value, ds, rule;
