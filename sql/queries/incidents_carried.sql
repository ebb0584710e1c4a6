-- incidents_carried: the incidents not resolved on the last tracked day before $ds, whose
-- state the day carries on, and those resolved in the $lag_days days before $ds (a decay
-- they hold is lagging: the moving average still holds their bad days), each with the
-- features of the alerts it held that day (a feature it lists that raised none there and
-- steps today fails anew). An incident resolved by hand (incident_actions) is carried no
-- further than the day it was resolved on: an alert after it opens a new incident.
-- Inputs: incidents, alerts, incident_actions. Params: $ds, $lag_days.
-- Output: every incidents column, alerted_features.
SELECT i.*,
       coalesce((SELECT list(DISTINCT a.feature ORDER BY a.feature)
                 FROM alerts a
                 WHERE a.ds = i.ds AND list_contains(i.alert_ids, a.alert_id) AND a.feature IS NOT NULL),
                []) AS alerted_features
FROM incidents i
WHERE ((i.ds = (SELECT max(ds) FROM incidents WHERE ds < $ds) AND i.status <> 'resolved')
       OR (i.status = 'resolved' AND i.ds BETWEEN $ds - to_days($lag_days) AND $ds - INTERVAL 1 DAY))
  AND i.incident_id NOT IN (SELECT incident_id FROM incident_actions WHERE action = 'resolve' AND ds < $ds)
ORDER BY i.incident_id;
