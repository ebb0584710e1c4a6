-- series_days: the earlier days of the spread period, one row per series (coverage, ratio,
-- missing).
-- Inputs: recent. Params: $ds, $spread_days.
-- Output: ds, feature, segment_dim, segment_value, series, value.
SELECT ds, feature, segment_dim, segment_value, series, value
FROM (SELECT ds, feature, segment_dim, segment_value, as_today AS coverage,
             as_today / nullif(rest_as_today, 0) AS ratio, missing_as_today AS missing
      FROM recent
      WHERE ds < $ds AND ds >= $ds - to_days($spread_days))
UNPIVOT (value FOR series IN (coverage, ratio, missing));
