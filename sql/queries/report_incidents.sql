-- report_incidents: the report's incidents (the incidents table, paged or not), each shown by
-- its latest headline alert: the most severe, most localised segment it fired in.
-- Inputs: incident_summary, incidents, alerts, ranker_daily_ndcg, incident_costs. Params: none.
-- Output: incident_id, feature, segment_dim, segment_value (the headline's), rule, severity
-- (the worst it reached), first_ds (opened), last_ds (its latest headline day), days (tracked),
-- live (not resolved), observed, baseline, threshold, drop_rel, detail (the headline alert's on
-- last_ds), ndcg8_change (the segment's NDCG@8 on last_ds minus its previous 7 days' mean; NULL
-- when the segment is not scored), ndcg8_change_all (the same for all traffic), d_ndcg8,
-- d_ndcg8_low, d_ndcg8_high (its last replayed cost and interval; NULL when never replayed);
-- live ones first, then the most severe, then the latest.
WITH latest_headline AS (
    SELECT incident_id, max(ds) AS ds, arg_max(headline_alert_id, ds) AS alert_id
    FROM incidents
    WHERE headline_alert_id IS NOT NULL
    GROUP BY incident_id
),
latest_cost AS (
    SELECT incident_id, arg_max(d_ndcg8, ds) AS d_ndcg8, arg_max(d_ndcg8_low, ds) AS d_ndcg8_low,
           arg_max(d_ndcg8_high, ds) AS d_ndcg8_high
    FROM incident_costs
    GROUP BY incident_id
)
SELECT s.incident_id, s.feature, a.segment_dim, a.segment_value, a.rule, s.severity,
       s.opened_ds AS first_ds, h.ds AS last_ds, s.days, s.status <> 'resolved' AS live,
       a.observed, a.baseline, a.threshold, a.drop_rel, a.detail,
       own.ndcg8_change, everyone.ndcg8_change AS ndcg8_change_all,
       cost.d_ndcg8, cost.d_ndcg8_low, cost.d_ndcg8_high
FROM incident_summary AS s
JOIN latest_headline AS h ON h.incident_id = s.incident_id
JOIN alerts AS a ON a.ds = h.ds AND a.alert_id = h.alert_id
LEFT JOIN ranker_daily_ndcg AS own
       ON own.ds = h.ds AND own.segment_dim = a.segment_dim AND own.segment_value = a.segment_value
LEFT JOIN ranker_daily_ndcg AS everyone
       ON everyone.ds = h.ds AND everyone.segment_dim = 'all'
LEFT JOIN latest_cost AS cost ON cost.incident_id = s.incident_id
WHERE s.feature IS NOT NULL AND s.severity_rank > 0
ORDER BY live DESC, s.severity_rank DESC, last_ds DESC, s.feature, a.segment_dim, a.segment_value;
