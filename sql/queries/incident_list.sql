-- incident_list: incidents tracked on any day from $since to $until, for `feco alerts`, most
-- severe first, then the largest, with where their last headline was and their source.
-- Inputs: incident_summary, incidents. Params: $since, $until (NULL: no end).
-- Output: every incident_summary column, then headline_dim and headline_value (the segment of
-- the alert `detail` describes, the last day's headline: the root segment or one it holds),
-- source and features (the upstream source's incident: its name and failing features, as on
-- the last day; NULL and [feature] for any other).
WITH last_day AS (
    SELECT incident_id,
           arg_max(headline_dim, ds) FILTER (WHERE headline_alert_id IS NOT NULL) AS headline_dim,
           arg_max(headline_value, ds) FILTER (WHERE headline_alert_id IS NOT NULL) AS headline_value,
           arg_max(source, ds) AS source,
           arg_max(features, ds) AS features
    FROM incidents
    GROUP BY incident_id
)
SELECT incident_summary.*, last_day.headline_dim, last_day.headline_value, last_day.source, last_day.features
FROM incident_summary
JOIN last_day USING (incident_id)
WHERE last_ds >= $since
  AND ($until IS NULL OR opened_ds <= $until)
ORDER BY severity_rank DESC, rows_lost DESC, alerts DESC, feature, segment_dim, segment_value;
