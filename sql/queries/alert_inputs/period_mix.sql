-- period_mix: each band's mean share of its segment's rows over a period's days.
-- Inputs: period_bands. Params: none.
-- Output: period, feature, segment_dim, segment_value, band, share.
SELECT period, feature, segment_dim, segment_value, band,
       sum(share) / any_value(days) AS share
FROM (SELECT *, n_rows / sum(n_rows) OVER (PARTITION BY period, ds, feature, segment_dim, segment_value) AS share,
             count(DISTINCT ds) OVER (PARTITION BY period, feature, segment_dim, segment_value) AS days
      FROM period_bands)
GROUP BY ALL;
