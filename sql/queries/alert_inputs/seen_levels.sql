-- seen_levels: each band's usual coverage and NULL/NaN share over the earlier days with $min_rows
-- rows.
-- Inputs: band_days. Params: $ds, $min_rows.
-- Output: feature, dim, band, level, missing_level.
SELECT feature, dim, band, avg(coverage) AS level, avg(missing_share) AS missing_level
FROM band_days
WHERE ds < $ds AND n_rows >= $min_rows
GROUP BY feature, dim, band;
