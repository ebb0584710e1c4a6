-- pending_pages: incident messages not yet delivered on a channel, oldest first (a message the
-- service refused as invalid, status 'rejected', or left out of it, 'left_out', or an
-- escalation an ack held back, 'acknowledged', is not sent again; one a silence or a snooze
-- held, 'held', is pending however old, to be sent once that is over).
-- Inputs: incident_messages (incidents' messages and resolutions by hand), page_deliveries. Params: $channel; $since, $until (days whose messages
-- are still sent).
-- Output: every incidents column, attempts (earlier failed attempts on this channel),
-- triggered (the channel has received an opening or escalation of the incident, on any day:
-- PagerDuty drops a resolve for an alert it never opened).
WITH deliveries AS (
    SELECT message_id, status, attempts
    FROM page_deliveries
    WHERE channel = $channel
),

triggered AS (
    SELECT DISTINCT incidents.incident_id
    FROM incidents
    JOIN deliveries ON deliveries.message_id = incidents.message_id
    WHERE deliveries.status = 'delivered' AND incidents.event <> 'resolved'
)

SELECT
    incidents.*,
    coalesce(deliveries.attempts, 0) AS attempts,
    triggered.incident_id IS NOT NULL AS triggered
FROM incident_messages AS incidents
LEFT JOIN deliveries ON deliveries.message_id = incidents.message_id
LEFT JOIN triggered ON triggered.incident_id = incidents.incident_id
WHERE incidents.ds <= $until
  AND (incidents.ds >= $since OR deliveries.status = 'held')
  AND coalesce(deliveries.status, 'pending') NOT IN ('delivered', 'rejected', 'left_out', 'acknowledged')
ORDER BY incidents.ds, incidents.severity_rank DESC, incidents.rows_lost DESC, incidents.feature,
         incidents.event = 'resolved';  -- a day's opening before its resolution by hand
