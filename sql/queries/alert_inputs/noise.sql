-- noise: the days' own noise free of a slow trend, for the decay rule.
-- The days' own noise free of a slow trend: half the mean squared change between
-- consecutive typical days (deseasoned; von Neumann's estimator, about 2/3 as efficient as a
-- sample variance), for the decay rule, whose 7-day average a decline under way would
-- otherwise seem to vary by. Of the plain coverage and ratio, as the decay judges them.
-- Inputs: deseasoned. Params: none.
-- Output: feature, segment_dim, segment_value, noise_sd, noise_df, ratio_noise_sd, ratio_noise_df.
SELECT feature, segment_dim, segment_value,
       sqrt(avg(change ^ 2) FILTER (WHERE series = 'coverage') / 2) AS noise_sd,
       count(change) FILTER (WHERE series = 'coverage') * 2 / 3 AS noise_df,
       sqrt(avg(change ^ 2) FILTER (WHERE series = 'ratio') / 2) AS ratio_noise_sd,
       count(change) FILTER (WHERE series = 'ratio') * 2 / 3 AS ratio_noise_df
FROM (SELECT feature, segment_dim, segment_value, series,
             CASE WHEN ds - lag(ds) OVER days = 1 THEN level_value - lag(level_value) OVER days END AS change
      FROM deseasoned
      WHERE typical AND series <> 'missing'
      WINDOW days AS (PARTITION BY feature, segment_dim, segment_value, series ORDER BY ds))
GROUP BY ALL;
