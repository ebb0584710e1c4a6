-- incident_list: incidents tracked on any day from $since to $until, each as it stood on
-- $until (its rows up to that day: `feco alerts --ds D` shows D as it was), for `feco alerts`,
-- most severe first, then the largest, with where their last headline was and their source.
-- Inputs: incidents. Params: $since, $until (NULL: no end, each as it stands on its last day).
-- Output: incident_summary's columns (as of $until), then headline_dim and headline_value (the
-- segment of the alert `detail` describes, the last headline up to $until: the root segment
-- or one it holds), source and features (the upstream source's incident: its name and failing
-- features, as on its last day; NULL and [feature] for any other).
WITH so_far AS (
    SELECT *
    FROM incidents
    WHERE $until IS NULL OR ds <= $until
),

per_incident AS (
    SELECT incident_id,
           max(ds) AS last_ds,
           sum(len(alert_ids)) AS alerts,
           bool_or(event IS NOT NULL) AS paged,
           arg_max(detail, ds) FILTER (WHERE headline_alert_id IS NOT NULL) AS detail,
           arg_max(not_paged, ds) FILTER (WHERE not_paged IS NOT NULL) AS not_paged,
           max(ds) FILTER (WHERE normal_days = 1) AS back_ds,
           arg_max(headline_dim, ds) FILTER (WHERE headline_alert_id IS NOT NULL) AS headline_dim,
           arg_max(headline_value, ds) FILTER (WHERE headline_alert_id IS NOT NULL) AS headline_value
    FROM so_far
    GROUP BY incident_id
)

SELECT latest.incident_id, latest.feature, latest.segment_dim, latest.segment_value,
       latest.opened_ds, per_incident.last_ds,
       CASE WHEN latest.status = 'resolved' THEN latest.ds END AS resolved_ds,
       latest.status, latest.severity, latest.severity_rank,
       date_diff('day', latest.opened_ds, per_incident.last_ds) + 1 AS days,
       per_incident.alerts, latest.rows_lost, per_incident.paged, per_incident.detail,
       CASE WHEN NOT per_incident.paged THEN per_incident.not_paged END AS not_paged,
       CASE WHEN latest.normal_days > 0 THEN per_incident.back_ds END AS recovered_ds,
       CASE WHEN per_incident.paged THEN 'high' ELSE 'low' END AS urgency,
       per_incident.headline_dim, per_incident.headline_value, latest.source, latest.features
FROM so_far AS latest
JOIN per_incident ON per_incident.incident_id = latest.incident_id AND per_incident.last_ds = latest.ds
WHERE per_incident.last_ds >= $since
  AND ($until IS NULL OR latest.opened_ds <= $until)
ORDER BY latest.severity_rank DESC, latest.rows_lost DESC, per_incident.alerts DESC, latest.feature,
         latest.segment_dim, latest.segment_value;
