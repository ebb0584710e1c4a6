-- incident_alerts: the alerts attached to the given incidents, each on the day the incident
-- held it, for `feco alerts --all`, up to $until (NULL: every day).
-- Inputs: incidents, alerts. Params: $incident_ids (a list), $until.
-- Output: incident_id, every alerts column, and lagging (true on a day the incident had no
-- headline: none of its alerts was live, each a decay whose 7-day average still holds the bad
-- days, attached but not keeping the incident from resolving), by day then severity.
SELECT incidents.incident_id, alerts.*, incidents.headline_alert_id IS NULL AS lagging
FROM incidents, unnest(incidents.alert_ids) AS attached(alert_id)
JOIN alerts ON alerts.alert_id = attached.alert_id AND alerts.ds = incidents.ds
WHERE list_contains($incident_ids, incidents.incident_id) AND ($until IS NULL OR incidents.ds <= $until)
ORDER BY alerts.ds,
         CASE alerts.severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 WHEN 'low' THEN 3 ELSE 4 END,
         alerts.feature, alerts.segment_dim, alerts.segment_value, alerts.rule;
