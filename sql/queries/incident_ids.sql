-- incident_ids: every incident's id, for naming one on the command line (a prefix, a near miss).
-- Inputs: incidents. Params: none. Output: incident_id.
SELECT DISTINCT incident_id
FROM incidents
ORDER BY incident_id;
