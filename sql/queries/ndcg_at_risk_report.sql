-- ndcg_at_risk_report: the report's first screen: per day and scored segment (all traffic and
-- the [ranker] segments), the NDCG at risk (what the day's coverage costs the serving model,
-- with its interval) beside the served order's NDCG@8 and the model's, latest day first.
-- Inputs: served_daily_ndcg, ndcg_at_risk_daily.
-- Output: ds, segment_dim, segment_value, d_ndcg8, d_ndcg8_low, d_ndcg8_high, deficits (the
-- features replayed, each with the share of its covered rows lost), served_ndcg8, model_ndcg8.
SELECT coalesce(s.ds, r.ds) AS ds,
       coalesce(s.segment_dim, r.segment_dim) AS segment_dim,
       coalesce(s.segment_value, r.segment_value) AS segment_value,
       r.d_ndcg8, r.d_ndcg8_low, r.d_ndcg8_high,
       array_to_string(list_transform(list_zip(r.features, r.loss_shares),
                                      lambda f: f[1] || ' -' || CAST(round(100 * f[2]) AS INTEGER) || '%'), ', ')
           AS deficits,
       s.ndcg8 AS served_ndcg8,
       s.model_ndcg8
FROM served_daily_ndcg AS s
FULL JOIN ndcg_at_risk_daily AS r USING (ds, segment_dim, segment_value)
ORDER BY ds DESC, segment_dim, segment_value;
