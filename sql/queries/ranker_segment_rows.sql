-- ranker_segment_rows: the day's sampled rows in each segment, for the daily attribution's
-- draws (feco.ranker.attribution.plan_draws: which segments can page, how many rows each).
-- Inputs: coverage_states (every feature counts the same rows: one is read). Params: $ds.
-- Output: segment_dim, segment_value, n_rows.
SELECT segment_dim, segment_value, CAST(sum(n_rows) AS BIGINT) AS n_rows
FROM coverage_states
WHERE ds = $ds
  AND feature = (SELECT min(feature) FROM coverage_states WHERE ds = $ds)
GROUP BY segment_dim, segment_value
ORDER BY segment_dim, segment_value;
