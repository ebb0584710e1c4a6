-- report_ranker_daily: the reference ranker's NDCG@4/8 per day and scored segment, for the
-- report's NDCG chart. Means are taken over the events that have a relevant product.
-- Inputs: ranker_daily_ndcg. Params: none.
-- Output: ds, segment_dim, segment_value, run_id (the model that scored the day), ndcg4,
-- ndcg8, ndcg8_change (minus the previous 7 days' mean), queries_evaluated,
-- queries_no_relevant.
SELECT ds, segment_dim, segment_value, run_id, ndcg4, ndcg8, ndcg8_change,
       queries_evaluated, queries_no_relevant
FROM ranker_daily_ndcg
ORDER BY segment_dim, segment_value, ds;
