-- ranker_daily_ndcg: daily NDCG@4/8 per segment beside the day's coverage rows
-- (join feco_daily on ds, segment_dim, segment_value). ndcg*_change = the day's value minus
-- the mean of the previous 7 calendar days' values (days without a score skipped).
CREATE OR REPLACE VIEW ranker_daily_ndcg AS
WITH daily AS (
    SELECT ds, run_id, segment_dim, segment_value, queries, queries_evaluated, queries_no_relevant,
           ndcg4_sum / nullif(queries_evaluated, 0) AS ndcg4,
           ndcg8_sum / nullif(queries_evaluated, 0) AS ndcg8
    FROM ranker_daily
)
SELECT d.*,
       d.ndcg4 - (SELECT avg(p.ndcg4) FROM daily p
                  WHERE p.segment_dim = d.segment_dim AND p.segment_value = d.segment_value
                    AND p.ds >= d.ds - INTERVAL 7 DAY AND p.ds < d.ds) AS ndcg4_change,
       d.ndcg8 - (SELECT avg(p.ndcg8) FROM daily p
                  WHERE p.segment_dim = d.segment_dim AND p.segment_value = d.segment_value
                    AND p.ds >= d.ds - INTERVAL 7 DAY AND p.ds < d.ds) AS ndcg8_change
FROM daily d;
