-- reference_mix: what scales the reference to the moving average's mix of product ages and
-- query bands: a holiday's tail-heavy searches lower the 7-day average for a week, and the
-- reference as that week's mix would have given it falls with it. The rest of traffic's
-- likewise (rest_factor: segments counted in a cross with the query band).
-- Inputs: mixes. Params: $ds, $ma_days, $ref_start, $ref_end.
-- Output: feature, segment_dim, segment_value, factor, rest_factor.
SELECT feature, segment_dim, segment_value, exp(sum(ln(average / reference))) AS factor,
       exp(sum(CASE WHEN rest_average > 0 AND rest_reference > 0 THEN ln(rest_average / rest_reference) END))
           AS rest_factor
FROM (SELECT feature, segment_dim, segment_value, dim,
             avg(mix) FILTER (WHERE ds > $ds - to_days($ma_days)) AS average,
             avg(mix) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end) AS reference,
             avg(rest_mix) FILTER (WHERE ds > $ds - to_days($ma_days)) AS rest_average,
             avg(rest_mix) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end) AS rest_reference
      FROM mixes
      GROUP BY ALL)
WHERE average > 0 AND reference > 0
GROUP BY ALL;
