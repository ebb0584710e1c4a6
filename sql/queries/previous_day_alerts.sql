-- previous_day_alerts: the feature, segment and rule of every coverage alert of the day
-- before ds, headline or grouped, so that an alert still firing is not paged again.
-- Inputs: alerts. Params: $ds. Output: feature, segment_dim, segment_value, rule.
SELECT DISTINCT feature, segment_dim, segment_value, rule
FROM alerts
WHERE ds = $ds - INTERVAL 1 DAY
  AND feature IS NOT NULL
  AND status IN ('open', 'ongoing', 'grouped');
