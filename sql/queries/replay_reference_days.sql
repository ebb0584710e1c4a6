-- replay_reference_days: the published days after $after and before $onset (at most
-- $lookback days before it), newest first, each with the segments in which any of $features
-- alerted that day: an incident's replay takes its clean days from them.
-- Inputs: runs, alerts. Params: $onset, $after (the serving model's last training day: its
-- own training days would flatter it), $lookback, $features.
-- Output: ds, alerted (a list of {segment_dim, segment_value}; empty on a day without alerts).
SELECT r.ds,
       list(DISTINCT {'segment_dim': a.segment_dim, 'segment_value': a.segment_value})
           FILTER (WHERE a.alert_id IS NOT NULL) AS alerted
FROM runs AS r
LEFT JOIN alerts AS a
       ON a.ds = r.ds AND list_contains($features, a.feature) AND a.status <> 'suppressed'
WHERE r.ds < $onset AND r.ds > $after AND r.ds >= $onset - to_days($lookback)
GROUP BY r.ds
ORDER BY r.ds DESC;
