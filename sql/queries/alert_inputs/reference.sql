-- reference: each series' reference level, where the period has $ref_min_days usable days.
-- Inputs: reference_days. Params: $ref_min_days, $min_rows.
-- Output: feature, segment_dim, segment_value, reference, rest_reference, reference_days.
SELECT feature, segment_dim, segment_value,
       CASE WHEN count(*) >= $ref_min_days THEN avg(coverage) END AS reference,
       CASE WHEN count(rest_ratio) >= $ref_min_days THEN avg(rest_ratio) END AS rest_reference,
       count(*) AS reference_days
FROM reference_days
WHERE n_rows >= $min_rows
GROUP BY feature, segment_dim, segment_value;
