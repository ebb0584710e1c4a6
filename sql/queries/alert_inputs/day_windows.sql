-- day_windows: each window's coverage on $ds.
-- Inputs: coverage_states. Params: $ds.
-- Output: feature, segment_dim, segment_value, window_index, coverage.
SELECT feature, segment_dim, segment_value, window_index,
       n_covered / nullif(n_rows, 0) AS coverage
FROM coverage_states
WHERE ds = $ds;
