-- incident_summary: one row per incident, as of the last day it was tracked.
-- Inputs: incidents, incident_actions. Output: incident_id, feature, segment_dim,
-- segment_value, opened_ds, last_ds, resolved_ds (NULL while not resolved), status, severity, severity_rank, days
-- (calendar days from opened_ds to last_ds, both counted: a day the pipeline did not run
-- still passed), alerts (attached, all days), rows_lost (size), paged (whether any page was
-- due), detail (the last headline's text), not_paged (why an incident never paged: its latest
-- reason; NULL once paged), recovered_ds (the first day of its last run of days back within
-- its normal band, normal_days counting them; NULL while it is not back: "recovered since"
-- while open, the day its data came back once resolved), urgency ('high': it paged someone;
-- 'low': it pages no one and goes to the daily digest). An incident resolved by hand
-- (incident_actions) is 'resolved' from the day it was resolved on (resolved_by,
-- resolve_reason: who and why; NULL otherwise).
CREATE OR REPLACE VIEW incident_summary AS
WITH per_incident AS (
    SELECT incident_id,
           max(ds) AS last_ds,
           sum(len(alert_ids)) AS alerts,
           bool_or(event IS NOT NULL) AS paged,
           arg_max(detail, ds) FILTER (WHERE headline_alert_id IS NOT NULL) AS detail,
           arg_max(not_paged, ds) FILTER (WHERE not_paged IS NOT NULL) AS not_paged,
           max(ds) FILTER (WHERE normal_days = 1) AS back_ds
    FROM incidents
    GROUP BY incident_id
),
by_hand AS (
    SELECT incident_id, arg_min(ds, acted_at) AS ds, arg_min(actor, acted_at) AS resolved_by,
           arg_min(reason, acted_at) AS resolve_reason
    FROM incident_actions
    WHERE action = 'resolve'
    GROUP BY incident_id
)
SELECT latest.incident_id, latest.feature, latest.segment_dim, latest.segment_value,
       latest.opened_ds, per_incident.last_ds,
       CASE WHEN latest.status = 'resolved' THEN latest.ds ELSE by_hand.ds END AS resolved_ds,
       CASE WHEN by_hand.ds IS NOT NULL THEN 'resolved' ELSE latest.status END AS status, latest.severity, latest.severity_rank,
       date_diff('day', latest.opened_ds, per_incident.last_ds) + 1 AS days,
       per_incident.alerts, latest.rows_lost, per_incident.paged, per_incident.detail,
       CASE WHEN NOT per_incident.paged THEN per_incident.not_paged END AS not_paged,
       CASE WHEN latest.normal_days > 0 THEN per_incident.back_ds END AS recovered_ds,
       CASE WHEN per_incident.paged THEN 'high' ELSE 'low' END AS urgency,
       by_hand.resolved_by, by_hand.resolve_reason
FROM incidents AS latest
JOIN per_incident ON per_incident.incident_id = latest.incident_id AND per_incident.last_ds = latest.ds
LEFT JOIN by_hand ON by_hand.incident_id = latest.incident_id AND latest.status <> 'resolved';
