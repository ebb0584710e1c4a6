-- band_shares: each band's share today, over the baseline days and over the reference days.
-- Inputs: period_mix. Params: none.
-- Output: feature, segment_dim, segment_value, band, today, baseline, reference_share,
-- baseline_seen, reference_seen.
SELECT feature, segment_dim, segment_value, band,
       coalesce(sum(share) FILTER (WHERE period = 'today'), 0) AS today,
       coalesce(sum(share) FILTER (WHERE period = 'baseline'), 0) AS baseline,
       coalesce(sum(share) FILTER (WHERE period = 'reference'), 0) AS reference_share,
       count(*) FILTER (WHERE period = 'baseline') AS baseline_seen,
       count(*) FILTER (WHERE period = 'reference') AS reference_seen
FROM period_mix
GROUP BY ALL;
