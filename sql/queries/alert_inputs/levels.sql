-- levels: each series' recent level and day-to-day spread.
-- Without a recent day at its usual level (a failure lasting the whole baseline), the
-- level of the spread period's typical days.
-- Inputs: deseasoned. Params: $ds, $baseline_days.
-- Output: feature, segment_dim, segment_value, series, level, level_days, sd, df.
SELECT feature, segment_dim, segment_value, series,
       coalesce(avg(level_value) FILTER (WHERE not_low AND ds >= $ds - to_days($baseline_days)),
                avg(level_value) FILTER (WHERE typical)) AS level,
       greatest(count(*) FILTER (WHERE not_low AND ds >= $ds - to_days($baseline_days)), 1) AS level_days,
       sqrt(sum(residual ^ 2) FILTER (WHERE typical)
            / nullif(count(*) FILTER (WHERE typical) - CASE WHEN bool_or(weekly_shape) THEN 7 ELSE 1 END, 0))
           AS sd,
       count(*) FILTER (WHERE typical) - CASE WHEN bool_or(weekly_shape) THEN 7 ELSE 1 END AS df
FROM deseasoned
GROUP BY ALL;
