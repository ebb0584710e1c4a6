-- ndcg_at_risk_daily: NDCG at risk per day and segment: the expected NDCG@8 change the day's
-- coverage deficits cause the serving model (d_ndcg8, negative: a loss) with its 95% interval,
-- the NDCG@8 of the replayed clean events before (ndcg8_before), and the deficits behind it.
-- A day with no deficit beyond noise replays nothing: its d_ndcg8 is 0 (events 0).
-- Inputs: ndcg_at_risk. Join feco_daily or served_daily_ndcg on (ds, segment_dim, segment_value).
CREATE OR REPLACE VIEW ndcg_at_risk_daily AS
SELECT ds, run_id, segment_dim, segment_value, reference_start, reference_end, reference_days, events, draws,
       ndcg8_sum / nullif(events, 0) AS ndcg8_before,
       CASE WHEN len(features) = 0 AND events = 0 THEN 0 ELSE d_ndcg8_sum / nullif(events, 0) END AS d_ndcg8,
       d_ndcg8_low, d_ndcg8_high, features, loss_shares
FROM ndcg_at_risk;
