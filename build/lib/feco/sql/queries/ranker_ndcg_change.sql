-- ranker_ndcg_change: the day's measured NDCG@8 change per segment against the previous
-- 7 days, for the alert text. Inputs: ranker_daily_ndcg. Params: $ds.
-- Output: segment_dim, segment_value, ndcg8, ndcg8_change (rows with a known change only).
SELECT segment_dim, segment_value, ndcg8, ndcg8_change
FROM ranker_daily_ndcg
WHERE ds = $ds AND ndcg8_change IS NOT NULL
ORDER BY segment_dim, segment_value;
