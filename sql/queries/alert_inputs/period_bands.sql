-- period_bands: those rows under all traffic and under their product-age segment.
-- Inputs: age_periods. Params: $new_bands.
-- Output: period, ds, feature, segment_dim, segment_value, band, n_rows.
SELECT period, ds, feature, 'all' AS segment_dim, 'all' AS segment_value, band, n_rows
FROM age_periods
UNION ALL
SELECT period, ds, feature, 'product_age',
       CASE WHEN list_contains($new_bands, band) THEN 'new' ELSE 'established' END, band, n_rows
FROM age_periods;
