-- wander_days: the days whose weeks measure the wander: from $ref_start, at most $wander_days
-- back, to the day before $ds, counted under $ds's coverage rule.
-- Inputs: rest_of_traffic. Params: $ref_start, $ds, $wander_days.
-- Output: ds, feature, segment_dim, segment_value, n_rows, coverage, rest_ratio.
SELECT ds, feature, segment_dim, segment_value, n_rows, coverage, rest_ratio
FROM rest_of_traffic
WHERE ds BETWEEN greatest($ref_start, $ds - to_days($wander_days)) AND $ds - INTERVAL 1 DAY;
