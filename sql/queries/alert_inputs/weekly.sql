-- weekly: each weekday's effect, where all seven have a typical day.
-- A weekday's effect: the mean of its typical days less the mean of the seven, where
-- every weekday has a typical day (of the two or more it has: a weekday whose days differ
-- keeps its shape from the typical one, its effect's error the larger for it).
-- Inputs: weekday_levels. Params: none.
-- Output: feature, segment_dim, segment_value, series, weekday, days, effect.
SELECT feature, segment_dim, segment_value, series, weekday, days,
       level - avg(level) OVER series AS effect
FROM weekday_levels
WINDOW series AS (PARTITION BY feature, segment_dim, segment_value, series)
QUALIFY count(*) FILTER (WHERE days >= 1) OVER series = 7;
