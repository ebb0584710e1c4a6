-- report_incidents: the report's incidents (the incidents table, paged or not), each shown by
-- its latest headline alert: the most severe, most localised segment it fired in.
-- Inputs: incident_summary, incidents, alerts, ranker_daily_ndcg, incident_costs,
-- incident_actions. Params: none.
-- Output: incident_id, feature, segment_dim, segment_value (the headline's), root_dim,
-- root_value (the incident's own segment), source (the upstream source of an outage, else
-- NULL), features (every feature it holds), rule, severity (the worst it reached), first_ds
-- (opened), headline_ds (its latest headline day), last_ds (its last tracked day),
-- resolved_ds (NULL while live), recovered_ds (its data back within its normal band since;
-- incident_summary), urgency ('high': paged, 'low': the daily digest), days (calendar days
-- from first_ds to last_ds), live (not resolved), observed, baseline, threshold, drop_rel, detail (the headline alert's on
-- headline_ds), ndcg8_change (the headline segment's NDCG@8 on headline_ds minus its previous
-- 7 days' mean; NULL when the segment is not scored), ndcg8_change_all (the same for all
-- traffic), d_ndcg8, d_ndcg8_low, d_ndcg8_high (its last replayed cost and interval; NULL when
-- never replayed), acked_by, acked_at (its latest ack), resolved_by, resolve_reason (a resolve
-- by hand), noise_marks (times marked noise). Ordered as paged: the most severe first, then the costliest (the largest
-- estimated NDCG@8 loss; never replayed last), then live before resolved, then the latest.
WITH latest_headline AS (
    SELECT incident_id, max(ds) AS ds, arg_max(headline_alert_id, ds) AS alert_id,
           arg_max(source, ds) AS source, arg_max(features, ds) AS features
    FROM incidents
    WHERE headline_alert_id IS NOT NULL
    GROUP BY incident_id
),
latest_cost AS (
    SELECT incident_id, arg_max(d_ndcg8, ds) AS d_ndcg8, arg_max(d_ndcg8_low, ds) AS d_ndcg8_low,
           arg_max(d_ndcg8_high, ds) AS d_ndcg8_high
    FROM incident_costs
    GROUP BY incident_id
),
on_call AS (
    SELECT incident_id, arg_max(actor, acted_at) FILTER (WHERE action = 'ack') AS acked_by,
           max(acted_at) FILTER (WHERE action = 'ack') AS acked_at,
           count(*) FILTER (WHERE action = 'noise') AS noise_marks
    FROM incident_actions
    WHERE incident_id IS NOT NULL
    GROUP BY incident_id
)
SELECT s.incident_id, s.feature, a.segment_dim, a.segment_value,
       s.segment_dim AS root_dim, s.segment_value AS root_value, h.source, h.features,
       a.rule, s.severity, s.opened_ds AS first_ds, h.ds AS headline_ds, s.last_ds, s.resolved_ds,
       s.recovered_ds, s.urgency, s.days, s.status <> 'resolved' AS live,
       a.observed, a.baseline, a.threshold, a.drop_rel, a.detail,
       own.ndcg8_change, everyone.ndcg8_change AS ndcg8_change_all,
       cost.d_ndcg8, cost.d_ndcg8_low, cost.d_ndcg8_high,
       on_call.acked_by, on_call.acked_at, s.resolved_by, s.resolve_reason, coalesce(on_call.noise_marks, 0) AS noise_marks
FROM incident_summary AS s
JOIN latest_headline AS h ON h.incident_id = s.incident_id
JOIN alerts AS a ON a.ds = h.ds AND a.alert_id = h.alert_id
LEFT JOIN ranker_daily_ndcg AS own
       ON own.ds = h.ds AND own.segment_dim = a.segment_dim AND own.segment_value = a.segment_value
LEFT JOIN ranker_daily_ndcg AS everyone
       ON everyone.ds = h.ds AND everyone.segment_dim = 'all'
LEFT JOIN latest_cost AS cost ON cost.incident_id = s.incident_id
LEFT JOIN on_call ON on_call.incident_id = s.incident_id
WHERE s.feature IS NOT NULL AND s.severity_rank > 0
ORDER BY s.severity_rank DESC, cost.d_ndcg8 ASC NULLS LAST, live DESC, s.last_ds DESC, s.feature,
         a.segment_dim, a.segment_value;
