-- incident_alerts: the alerts attached to the given incidents, for `feco alerts --all`.
-- Inputs: incidents, alerts. Params: $incident_ids (a list).
-- Output: incident_id and every alerts column, by day then severity.
SELECT incidents.incident_id, alerts.*
FROM incidents, unnest(incidents.alert_ids) AS attached(alert_id)
JOIN alerts ON alerts.alert_id = attached.alert_id
WHERE list_contains($incident_ids, incidents.incident_id)
ORDER BY alerts.ds,
         CASE alerts.severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 WHEN 'low' THEN 3 ELSE 4 END,
         alerts.feature, alerts.segment_dim, alerts.segment_value, alerts.rule;
