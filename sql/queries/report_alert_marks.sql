-- report_alert_marks: every coverage alert that fired in a segment, headline or grouped under
-- one, for the marks on that segment's trend (suppressed low-volume marks left out).
-- Inputs: alerts. Params: none.
-- Output: ds, feature, segment_dim, segment_value, rule, status, severity, observed,
-- baseline, threshold (the rule's own inputs: what it expected and where it fired).
SELECT ds, feature, segment_dim, segment_value, rule, status, severity, observed, baseline, threshold
FROM alerts
WHERE feature IS NOT NULL AND status <> 'suppressed'
ORDER BY feature, segment_dim, segment_value, ds, rule;
