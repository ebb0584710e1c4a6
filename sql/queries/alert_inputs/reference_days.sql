-- reference_days: the days of the frozen reference period, with their ratio to the rest of traffic.
-- Inputs: rest_of_traffic. Params: $ref_start, $ref_end.
-- Output: ds, feature, segment_dim, segment_value, n_rows, coverage, rest_ratio.
SELECT ds, feature, segment_dim, segment_value, n_rows, coverage, rest_ratio
FROM rest_of_traffic
WHERE ds BETWEEN $ref_start AND $ref_end;
