-- mix_factors: what scales an earlier day's coverage (and shifts its NULL/NaN share) to $ds's mix.
-- Scales a day's coverage to ds's mix (the age and the query-band factors multiply), and
-- shifts its NULL/NaN share so; the rest of traffic's coverage likewise to the rest's mix
-- (rest_factor), for segments counted in a cross with the query band.
-- Inputs: mixes. Params: $ds.
-- Output: ds, feature, segment_dim, segment_value, factor, missing_shift, rest_factor.
SELECT day.ds, day.feature, day.segment_dim, day.segment_value,
       exp(sum(ln(today.mix / day.mix))) AS factor,
       sum(today.missing_mix - day.missing_mix) AS missing_shift,
       exp(sum(CASE WHEN today.rest_mix > 0 AND day.rest_mix > 0 THEN ln(today.rest_mix / day.rest_mix) END))
           AS rest_factor
FROM mixes AS day
JOIN mixes AS today
    ON today.ds = $ds AND today.feature = day.feature AND today.dim = day.dim
   AND today.segment_dim = day.segment_dim AND today.segment_value = day.segment_value
WHERE day.mix > 0 AND today.mix > 0
GROUP BY ALL;
