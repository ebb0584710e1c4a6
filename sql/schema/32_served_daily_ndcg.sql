-- served_daily_ndcg: the served order's daily NDCG@4/8 per segment, its change against the
-- previous 7 days, and the serving model's NDCG beside it (ranker_daily_ndcg; NULL on days
-- no model scored). ndcg*_change = the day's value minus the mean of the previous 7 calendar
-- days' values (days without a row skipped); model_minus_served = the model's NDCG@8 less the
-- served order's on the same events.
CREATE OR REPLACE VIEW served_daily_ndcg AS
WITH daily AS (
    SELECT ds, segment_dim, segment_value, queries, queries_evaluated, queries_no_relevant, events_tied,
           ndcg4_sum / nullif(queries_evaluated, 0) AS ndcg4,
           ndcg8_sum / nullif(queries_evaluated, 0) AS ndcg8
    FROM served_daily
)
SELECT d.*,
       d.ndcg4 - (SELECT avg(p.ndcg4) FROM daily p
                  WHERE p.segment_dim = d.segment_dim AND p.segment_value = d.segment_value
                    AND p.ds >= d.ds - INTERVAL 7 DAY AND p.ds < d.ds) AS ndcg4_change,
       d.ndcg8 - (SELECT avg(p.ndcg8) FROM daily p
                  WHERE p.segment_dim = d.segment_dim AND p.segment_value = d.segment_value
                    AND p.ds >= d.ds - INTERVAL 7 DAY AND p.ds < d.ds) AS ndcg8_change,
       m.run_id AS model_run_id,
       m.ndcg8 AS model_ndcg8,
       m.ndcg8 - d.ndcg8 AS model_minus_served
FROM daily d
LEFT JOIN ranker_daily_ndcg m USING (ds, segment_dim, segment_value);
