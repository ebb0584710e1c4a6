-- reference_days: how many days of a frozen reference period the warehouse holds with enough
-- traffic to count, for `feco status` to say when the decay rule cannot run.
-- Inputs: feco_daily. Params: $ref_start, $ref_end (the period), $min_rows (sampled rows a
-- day needs, as the alert rules count a reference day).
-- Output: one row: days.
SELECT count(DISTINCT ds) AS days
FROM feco_daily
WHERE segment_dim = 'all'
  AND ds BETWEEN $ref_start AND $ref_end
  AND n_rows >= $min_rows;
