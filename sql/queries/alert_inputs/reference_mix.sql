-- reference_mix: what scales the reference to the moving average's mix of product ages.
-- Inputs: age_mix. Params: $ds, $ma_days, $ref_start, $ref_end.
-- Output: feature, segment_dim, segment_value, factor.
SELECT feature, segment_dim, segment_value,
       avg(mix) FILTER (WHERE ds > $ds - to_days($ma_days))
           / nullif(avg(mix) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end), 0) AS factor
FROM age_mix
GROUP BY ALL;
