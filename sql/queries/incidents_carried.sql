-- incidents_carried: the incidents not resolved on the last tracked day before $ds, whose
-- state the day carries on.
-- Inputs: incidents. Params: $ds.
-- Output: every incidents column.
SELECT *
FROM incidents
WHERE ds = (SELECT max(ds) FROM incidents WHERE ds < $ds)
  AND status <> 'resolved'
ORDER BY incident_id;
