-- oncall_states: what people on call did to each incident and which of it is in force at $now:
-- its latest ack, a snooze not yet over, a silence in force that matches it, a resolve by
-- hand, noise marks. One row per incident with any of these (an incident with none is absent).
-- A silence matches an incident when each matcher it has does: feature (the incident's, or
-- one its source's outage lists), segment (its root segment, exactly), source (the outage's,
-- or the [logs.sources] source of a feature it holds: $source_features, $source_names).
-- Inputs: incidents, incident_actions. Params: $now (TIMESTAMPTZ), $source_features,
-- $source_names (parallel lists).
-- Output: incident_id, acked_by, acked_at, ack_rank, snoozed_until, snoozed_by,
-- snooze_reason, silence_id, silenced_until, silenced_by, silence_reason, resolved_by,
-- resolved_at, resolve_reason, resolved_ds, noise_marks, noise_by.
WITH latest AS (
    SELECT incident_id, arg_max(feature, ds) AS feature, arg_max(features, ds) AS features,
           arg_max(segment_dim, ds) AS segment_dim, arg_max(segment_value, ds) AS segment_value,
           arg_max(source, ds) AS source
    FROM incidents
    GROUP BY incident_id
),

feature_sources AS (
    SELECT unnest($source_features::VARCHAR[]) AS feature, unnest($source_names::VARCHAR[]) AS source
),

lifted AS (
    SELECT unsilences AS action_id FROM incident_actions WHERE action = 'unsilence'
),

silences AS (
    SELECT *
    FROM incident_actions
    WHERE action = 'silence' AND held_until > $now AND action_id NOT IN (SELECT action_id FROM lifted)
),

silenced AS (
    SELECT latest.incident_id,
           arg_max(silences.action_id, silences.held_until) AS silence_id,
           max(silences.held_until) AS silenced_until,
           arg_max(silences.actor, silences.held_until) AS silenced_by,
           arg_max(silences.reason, silences.held_until) AS silence_reason
    FROM latest
    JOIN silences
      ON (silences.feature IS NULL OR silences.feature = latest.feature
          OR list_contains(latest.features, silences.feature))
     AND (silences.segment_dim IS NULL
          OR (silences.segment_dim = latest.segment_dim AND silences.segment_value = latest.segment_value))
     AND (silences.source IS NULL OR silences.source = latest.source
          OR silences.source IN (SELECT source FROM feature_sources
                                 WHERE feature = latest.feature OR list_contains(latest.features, feature)))
    GROUP BY latest.incident_id
),

per_incident AS (
    SELECT incident_id,
           arg_max(actor, acted_at) FILTER (WHERE action = 'ack') AS acked_by,
           max(acted_at) FILTER (WHERE action = 'ack') AS acked_at,
           arg_max(severity_rank, acted_at) FILTER (WHERE action = 'ack') AS ack_rank,
           -- the latest snooze governs: a new one replaces it, sooner or later
           arg_max(held_until, acted_at) FILTER (WHERE action = 'snooze') AS snoozed_until,
           arg_max(actor, acted_at) FILTER (WHERE action = 'snooze') AS snoozed_by,
           arg_max(reason, acted_at) FILTER (WHERE action = 'snooze') AS snooze_reason,
           arg_min(actor, acted_at) FILTER (WHERE action = 'resolve') AS resolved_by,
           min(acted_at) FILTER (WHERE action = 'resolve') AS resolved_at,
           arg_min(reason, acted_at) FILTER (WHERE action = 'resolve') AS resolve_reason,
           arg_min(ds, acted_at) FILTER (WHERE action = 'resolve') AS resolved_ds,
           count(*) FILTER (WHERE action = 'noise') AS noise_marks,
           arg_max(actor, acted_at) FILTER (WHERE action = 'noise') AS noise_by
    FROM incident_actions
    WHERE incident_id IS NOT NULL
    GROUP BY incident_id
)

SELECT
    coalesce(per_incident.incident_id, silenced.incident_id) AS incident_id,
    acked_by, acked_at, ack_rank,
    CASE WHEN snoozed_until > $now THEN snoozed_until END AS snoozed_until,
    CASE WHEN snoozed_until > $now THEN snoozed_by END AS snoozed_by,
    CASE WHEN snoozed_until > $now THEN snooze_reason END AS snooze_reason,
    silence_id, silenced_until, silenced_by, silence_reason,
    resolved_by, resolved_at, resolve_reason, resolved_ds,
    coalesce(noise_marks, 0) AS noise_marks, noise_by
FROM per_incident
FULL JOIN silenced ON silenced.incident_id = per_incident.incident_id
ORDER BY incident_id;
