-- recent: the days the history needs and $ds, with the rest of traffic and $ds's mix.
-- The days the history needs and ds itself, each segment with the coverage of the rest
-- of traffic that day (rest_of_traffic) and, for all traffic and the
-- product-age segments, its coverage and NULL/NaN share as they would have been with ds's
-- mix (as_today, missing_as_today; the plain ones elsewhere), and the rest's coverage as the
-- rest's mix that day would have given it (rest_as_today: for segments counted in a cross
-- with the query band; the plain one elsewhere).
-- Inputs: rest_of_traffic, mix_factors. Params: $ds, $baseline_days, $spread_days, $ma_days.
-- Output: the columns of rest_of_traffic, as_today, missing_as_today, rest_as_today.
SELECT counted.*,
       counted.coverage * coalesce(factor.factor, 1) AS as_today,
       least(greatest(counted.missing_share + coalesce(factor.missing_shift, 0), 0), 1) AS missing_as_today,
       counted.rest_coverage * coalesce(factor.rest_factor, 1) AS rest_as_today
FROM rest_of_traffic AS counted
LEFT JOIN mix_factors AS factor USING (ds, feature, segment_dim, segment_value)
WHERE counted.ds BETWEEN $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)) AND $ds;
