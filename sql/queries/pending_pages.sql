-- pending_pages: incident messages not yet delivered on a channel, oldest first (a message the
-- service refused as invalid, status 'rejected', is not sent again).
-- Inputs: incidents, page_deliveries. Params: $channel; $since, $until (days whose messages
-- are still sent).
-- Output: every incidents column, attempts (earlier failed attempts on this channel).
SELECT incidents.*, coalesce(deliveries.attempts, 0) AS attempts
FROM incidents
LEFT JOIN page_deliveries AS deliveries
    ON deliveries.message_id = incidents.message_id AND deliveries.channel = $channel
WHERE incidents.event IS NOT NULL
  AND incidents.ds BETWEEN $since AND $until
  AND coalesce(deliveries.status, 'pending') NOT IN ('delivered', 'rejected')
ORDER BY incidents.ds, incidents.severity_rank DESC, incidents.rows_lost DESC, incidents.feature;
