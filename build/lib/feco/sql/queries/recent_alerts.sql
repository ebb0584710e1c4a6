-- recent_alerts: per feature, segment and rule, the last day before ds on which a coverage
-- alert fired (headline or grouped) within $days days, so that an alert still firing is not
-- paged again.
-- Inputs: alerts. Params: $ds, $days. Output: feature, segment_dim, segment_value, rule, last_ds.
SELECT feature, segment_dim, segment_value, rule, max(ds) AS last_ds
FROM alerts
WHERE ds BETWEEN $ds - to_days($days) AND $ds - INTERVAL 1 DAY
  AND feature IS NOT NULL
  AND status IN ('open', 'ongoing', 'grouped')
GROUP BY feature, segment_dim, segment_value, rule;
