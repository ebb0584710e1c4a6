-- incidents_carried: the incidents not resolved on the last tracked day before $ds, whose
-- state the day carries on, and those resolved in the $lag_days days before $ds (a decay
-- they hold is lagging: the moving average still holds their bad days).
-- Inputs: incidents. Params: $ds, $lag_days.
-- Output: every incidents column.
SELECT *
FROM incidents
WHERE (ds = (SELECT max(ds) FROM incidents WHERE ds < $ds) AND status <> 'resolved')
   OR (status = 'resolved' AND ds BETWEEN $ds - to_days($lag_days) AND $ds - INTERVAL 1 DAY)
ORDER BY incident_id;
