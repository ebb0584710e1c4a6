-- pending_deliveries: open alerts not yet delivered on a channel, oldest first.
-- Inputs: alerts, alert_deliveries. Params: $channel; $since (oldest ds still retried).
-- Output: every alerts column, attempts (earlier failed attempts on this channel).
SELECT alerts.*, coalesce(deliveries.attempts, 0) AS attempts
FROM alerts
LEFT JOIN alert_deliveries AS deliveries
    ON deliveries.alert_id = alerts.alert_id AND deliveries.channel = $channel
WHERE alerts.status = 'open'
  AND alerts.ds >= $since
  AND coalesce(deliveries.status, 'pending') <> 'delivered'
ORDER BY alerts.ds, alerts.severity, alerts.feature, alerts.segment_dim, alerts.segment_value;
