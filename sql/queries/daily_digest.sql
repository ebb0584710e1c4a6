-- daily_digest: the low-urgency incidents of $ds, for its daily digest: those live that day that
-- page no one (paged_rank 0: milder than page_min_severity, under page_min_share, a cross, an
-- age band, or a learnt rule before page_after_days), with whether the digest's message went
-- out on $channel already (a rerun of the day sends it once).
-- Inputs: incidents, page_deliveries. Params: $ds, $channel, $message_id (the digest's).
-- Output: every incidents column, sent (the digest was delivered on $channel, or refused as
-- invalid: not sent again), attempts (its earlier failed attempts there), most severe first,
-- then the largest.
WITH delivery AS (
    SELECT status, attempts
    FROM page_deliveries
    WHERE message_id = $message_id AND channel = $channel
)

SELECT incidents.*,
       coalesce((SELECT status IN ('delivered', 'rejected') FROM delivery), false) AS sent,
       coalesce((SELECT attempts FROM delivery), 0) AS attempts
FROM incidents
WHERE incidents.ds = $ds AND incidents.status <> 'resolved' AND incidents.paged_rank = 0
ORDER BY incidents.severity_rank DESC, incidents.rows_lost DESC, incidents.feature, incidents.segment_dim,
         incidents.segment_value;
