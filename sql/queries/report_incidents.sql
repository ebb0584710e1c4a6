-- report_incidents: the report's incidents, built from headline alerts until an incidents
-- table exists (then this file alone changes). An incident is an 'open' alert and the
-- 'ongoing' ones that follow it for the same feature, segment and rule; it is live when it
-- fired on the warehouse's last day.
-- Inputs: alerts, ranker_daily_ndcg. Params: none.
-- Output: feature, segment_dim, segment_value, rule, severity (the worst it reached),
-- first_ds, last_ds, days (days it fired), live, observed, baseline, threshold, drop_rel
-- (on last_ds: what the rule saw, expected and fired below), detail (last_ds's text),
-- ndcg8_change (the segment's NDCG@8 on last_ds minus its previous 7 days' mean; NULL when the
-- segment is not scored), ndcg8_change_all (the same for all traffic); live ones first, then
-- the most severe, then the latest.
WITH headlines AS (
    SELECT *,
           -- each 'open' row starts a new incident of its feature, segment and rule
           count(*) FILTER (WHERE status = 'open') OVER (
               PARTITION BY feature, segment_dim, segment_value, rule ORDER BY ds
           ) AS incident
    FROM alerts
    WHERE feature IS NOT NULL AND status IN ('open', 'ongoing')
),
incidents AS (
    SELECT feature, segment_dim, segment_value, rule,
           min(CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END) AS rank,
           min(ds) AS first_ds, max(ds) AS last_ds, count(*) AS days,
           arg_max(observed, ds) AS observed, arg_max(baseline, ds) AS baseline,
           arg_max(threshold, ds) AS threshold, arg_max(drop_rel, ds) AS drop_rel,
           arg_max(detail, ds) AS detail
    FROM headlines
    GROUP BY feature, segment_dim, segment_value, rule, incident
)
SELECT i.feature, i.segment_dim, i.segment_value, i.rule,
       ['critical', 'high', 'medium', 'low'][i.rank + 1] AS severity,
       i.first_ds, i.last_ds, i.days,
       i.last_ds = (SELECT max(ds) FROM alerts) AS live,
       i.observed, i.baseline, i.threshold, i.drop_rel, i.detail,
       own.ndcg8_change, everyone.ndcg8_change AS ndcg8_change_all
FROM incidents AS i
LEFT JOIN ranker_daily_ndcg AS own
       ON own.ds = i.last_ds AND own.segment_dim = i.segment_dim AND own.segment_value = i.segment_value
LEFT JOIN ranker_daily_ndcg AS everyone
       ON everyone.ds = i.last_ds AND everyone.segment_dim = 'all'
ORDER BY live DESC, i.rank, i.last_ds DESC, i.feature, i.segment_dim, i.segment_value;
