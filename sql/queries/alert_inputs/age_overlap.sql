-- age_overlap: the share of $ds's rows whose product ages the history's mix holds too.
-- The share of ds's rows in a segment that its history's mix of product ages holds too
-- (the sum over bands of the smaller share): 1 for the same mix, 0 for none in common;
-- NULL without history.
-- Inputs: band_shares. Params: none.
-- Output: feature, segment_dim, segment_value, history_overlap, reference_overlap.
SELECT feature, segment_dim, segment_value,
       CASE WHEN sum(baseline_seen) > 0 THEN sum(least(today, baseline)) END AS history_overlap,
       CASE WHEN sum(reference_seen) > 0 THEN sum(least(today, reference_share)) END AS reference_overlap
FROM band_shares
GROUP BY ALL;
