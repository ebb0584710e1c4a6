-- predicted: each series' prediction for $ds and its error factor.
-- Each series' prediction for ds: its recent level plus ds's weekday effect, and the error
-- of that prediction in units of the spread (the level's, and the effect's: a mean of a
-- few days of that weekday).
-- Inputs: levels, weekly. Params: $ds.
-- Output: the columns of levels, prediction, effect, error_factor, yesterday_effect (the
-- weekday effect of the day before $ds).
SELECT levels.*, levels.level + coalesce(today.effect, 0) AS prediction, today.effect AS effect,
       sqrt(1 + 1 / levels.level_days + coalesce(1 / today.days, 0)) AS error_factor,
       yesterday.effect AS yesterday_effect
FROM levels
LEFT JOIN weekly AS today
    ON today.feature = levels.feature AND today.segment_dim = levels.segment_dim
   AND today.segment_value = levels.segment_value AND today.series = levels.series
   AND today.weekday = isodow($ds)
LEFT JOIN weekly AS yesterday
    ON yesterday.feature = levels.feature AND yesterday.segment_dim = levels.segment_dim
   AND yesterday.segment_value = levels.segment_value AND yesterday.series = levels.series
   AND yesterday.weekday = isodow($ds - to_days(1));
