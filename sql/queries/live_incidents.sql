-- live_incidents: the incidents not resolved on $ds (after a backfill to $ds, each gets its
-- own message beside the digest).
-- Inputs: incidents. Params: $ds. Output: incident_id.
SELECT incident_id
FROM incidents
WHERE ds = $ds AND status <> 'resolved'
ORDER BY incident_id;
