-- incident_last_costs: the last cost replayed before $ds for each of the incidents $ids, so
-- an incident whose loss has not grown keeps it instead of being replayed again.
-- Inputs: incident_costs. Params: $ds, $ids. Output: every incident_costs column.
SELECT *
FROM incident_costs
WHERE ds < $ds AND list_contains($ids, incident_id)
QUALIFY row_number() OVER (PARTITION BY incident_id ORDER BY ds DESC) = 1
ORDER BY incident_id;
