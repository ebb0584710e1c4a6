-- band_days: each age band's and query band's coverage on the days the history and the reference
-- need.
-- Inputs: daily. Params: $new_bands, $bands_from, $ds, $baseline_days, $spread_days, $ma_days,
-- $ref_start, $ref_end.
-- Output: ds, feature, dim, band, n_rows, coverage, missing_share, age ('new' or 'established').
SELECT ds, feature, segment_dim AS dim, segment_value AS band, n_rows, coverage, missing_share,
       CASE WHEN list_contains($new_bands, segment_value) THEN 'new' ELSE 'established' END AS age
FROM daily
-- Query bands only once two weeks of days have them ($bands_from, the first day with them):
-- every day of all traffic's series is then scaled by both mixes, and before that by the age
-- mix alone; a series scaled on some days and not on others is no series.
WHERE (segment_dim = 'age_band'
       OR segment_dim = 'query_band' AND $ds >= $bands_from + to_days(14))
  AND segment_value <> 'unknown'
  AND (ds BETWEEN $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)) AND $ds
       OR ds BETWEEN $ref_start AND $ref_end);
