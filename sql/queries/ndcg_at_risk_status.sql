-- ndcg_at_risk_status: day $ds in all traffic, for `feco status`: the NDCG at risk (d_ndcg8
-- with its interval; NULL when it was not measured) and the served order's NDCG@8 beside the
-- serving model's (NULL without a position column, or without a model).
-- Inputs: ndcg_at_risk_daily, served_daily_ndcg, ranker_daily_ndcg. Params: $ds.
-- Output: one row: d_ndcg8, d_ndcg8_low, d_ndcg8_high, served_ndcg8, model_ndcg8.
SELECT (SELECT d_ndcg8 FROM ndcg_at_risk_daily WHERE ds = $ds AND segment_dim = 'all') AS d_ndcg8,
       (SELECT d_ndcg8_low FROM ndcg_at_risk_daily WHERE ds = $ds AND segment_dim = 'all') AS d_ndcg8_low,
       (SELECT d_ndcg8_high FROM ndcg_at_risk_daily WHERE ds = $ds AND segment_dim = 'all') AS d_ndcg8_high,
       (SELECT ndcg8 FROM served_daily_ndcg WHERE ds = $ds AND segment_dim = 'all') AS served_ndcg8,
       (SELECT ndcg8 FROM ranker_daily_ndcg WHERE ds = $ds AND segment_dim = 'all') AS model_ndcg8;
