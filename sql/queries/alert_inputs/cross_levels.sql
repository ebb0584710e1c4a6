-- cross_levels: each segment's and its rest's usual coverage and NULL/NaN share per query band.
-- Pooled over the earlier days (each day weighted by its rows: a segment's tail may hold a
-- few dozen rows a day).
-- Inputs: cross_band_days. Params: $ds.
-- Output: feature, segment_dim, segment_value, band, level, missing_level, rest_level.
SELECT feature, segment_dim, segment_value, band,
       sum(n_rows * coverage) / nullif(sum(n_rows), 0) AS level,
       sum(n_rows * missing_share) / nullif(sum(n_rows), 0) AS missing_level,
       sum(rest_rows * rest_coverage) / nullif(sum(rest_rows), 0) AS rest_level
FROM cross_band_days
WHERE ds < $ds
GROUP BY ALL;
