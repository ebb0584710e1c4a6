-- day_coverage: each feature's daily coverage and rows per segment on one day, for judging
-- whether an incident's segment is back within its normal band.
-- Inputs: feco_daily. Params: $ds.
-- Output: feature, segment_dim, segment_value, n_rows, coverage.
SELECT feature, segment_dim, segment_value, n_rows, coverage
FROM feco_daily
WHERE ds = $ds;
