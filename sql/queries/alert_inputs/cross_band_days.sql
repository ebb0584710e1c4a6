-- cross_band_days: each segment's coverage per query band, and the rest of traffic's, from a
-- configured cross with the query band ('region x query_band': 'DE x head'), on the days the
-- history and the reference need.
-- Only once two weeks of days have query bands (as band_days), and only where the cross was
-- counted on every day the history needs (from the feature's first day, or for that long
-- before ds: a cross added on an upgrade): a series scaled on some days and not on others is
-- no series.
-- Inputs: daily. Params: $ds, $bands_from, $baseline_days, $spread_days, $ma_days, $ref_start,
-- $ref_end.
-- Output: ds, feature, segment_dim, segment_value, band, n_rows, coverage, missing_share,
-- rest_rows, rest_coverage.
SELECT cell.ds, cell.feature, split_part(cell.segment_dim, ' x ', 1) AS segment_dim,
       split_part(cell.segment_value, ' x ', 1) AS segment_value, band.segment_value AS band,
       cell.n_rows, cell.coverage, cell.missing_share,
       band.n_rows - cell.n_rows AS rest_rows,
       (band.n_covered - cell.n_covered) / nullif(band.n_rows - cell.n_rows, 0) AS rest_coverage
FROM daily AS cell
JOIN (SELECT feature, segment_dim, min(ds) AS counted_from, any_value(first_day) AS first_day
      FROM (SELECT feature, segment_dim, ds, min(ds) OVER (PARTITION BY feature) AS first_day FROM daily)
      WHERE segment_dim LIKE '% x query_band'
      GROUP BY ALL) AS counted USING (feature, segment_dim)
JOIN daily AS band
    ON band.ds = cell.ds AND band.feature = cell.feature AND band.segment_dim = 'query_band'
   AND band.segment_value = split_part(cell.segment_value, ' x ', 2)
WHERE cell.segment_dim LIKE '% x query_band' AND cell.segment_dim NOT LIKE '% x % x %'
  AND band.segment_value <> 'unknown'
  AND $ds >= $bands_from + to_days(14)
  AND counted.counted_from <= greatest(counted.first_day, $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)))
  AND (cell.ds BETWEEN $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)) AND $ds
       OR cell.ds BETWEEN $ref_start AND $ref_end);
