-- mixes: each day's coverage and NULL/NaN share as its mix of bands predicts them.
-- Each day's coverage and NULL/NaN share as its mix predicts them at the bands' usual
-- levels: all traffic by age band and by query band, new and established products by age
-- band (bands seen before only) and by all traffic's query bands (a day's query mix is its
-- searches', shown new and established products alike: a holiday's tail-heavy searches
-- lower established products' coverage as they lower all traffic's), and every other segment
-- counted in a cross with the query band by its own query bands, the rest of traffic by the
-- rest's (rest_mix): a region's or a product group's searches move with the calendar by
-- their own amount (toys' went from 71% head to 80% tail on a holiday, the rest's less).
-- Inputs: band_days, band_levels, cross_band_days, cross_levels. Params: none.
-- Output: ds, feature, dim, segment_dim, segment_value, mix, missing_mix, rest_mix.
SELECT ds, feature, dim, segment_dim, segment_value, sum(n_rows * level) / nullif(sum(n_rows), 0) AS mix,
       sum(n_rows * missing_level) / nullif(sum(n_rows), 0) AS missing_mix, NULL::DOUBLE AS rest_mix
FROM (SELECT ds, feature, dim, 'all' AS segment_dim, 'all' AS segment_value, n_rows, level, missing_level
      FROM band_days JOIN band_levels USING (feature, dim, band)
      UNION ALL
      SELECT ds, feature, dim, 'product_age', age, n_rows, level, missing_level
      FROM band_days JOIN band_levels USING (feature, dim, band)
      WHERE dim = 'age_band'
      UNION ALL
      SELECT ds, feature, dim, 'product_age', ages.age, n_rows, level, missing_level
      FROM band_days JOIN band_levels USING (feature, dim, band)
      CROSS JOIN (VALUES ('new'), ('established')) AS ages(age)
      WHERE dim = 'query_band')
GROUP BY ALL
UNION ALL
SELECT ds, feature, 'query_band', segment_dim, segment_value,
       sum(n_rows * level) / nullif(sum(n_rows), 0),
       sum(n_rows * missing_level) / nullif(sum(n_rows), 0),
       sum(rest_rows * rest_level) / nullif(sum(rest_rows), 0)
FROM cross_band_days JOIN cross_levels USING (feature, segment_dim, segment_value, band)
WHERE segment_dim <> 'product_age'  -- scaled by all traffic's query mix above
GROUP BY ALL;
