-- report_ranker_daily: the reference ranker's NDCG@4/8 per day on the global segment, for the
-- report's NDCG chart. Means are taken over the events that have a relevant product.
-- Inputs: ranker_daily. Params: none.
-- Output: ds, ndcg4, ndcg8, queries_evaluated, queries_no_relevant, run_ids (the models that
-- scored the day, comma-separated).
SELECT ds,
       sum(ndcg4_sum) / nullif(sum(queries_evaluated), 0) AS ndcg4,
       sum(ndcg8_sum) / nullif(sum(queries_evaluated), 0) AS ndcg8,
       sum(queries_evaluated)::BIGINT AS queries_evaluated,
       sum(queries_no_relevant)::BIGINT AS queries_no_relevant,
       string_agg(DISTINCT run_id, ',' ORDER BY run_id) AS run_ids
FROM ranker_daily
WHERE segment_dim = 'all'
GROUP BY ds
ORDER BY ds;
