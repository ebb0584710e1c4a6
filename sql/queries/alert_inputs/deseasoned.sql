-- deseasoned: each kept day less its weekday's effect, and its residual.
-- Inputs: kept, weekly. Params: none.
-- Output: the columns of kept, weekly_shape, level_value, residual.
SELECT kept.*, weekly.effect IS NOT NULL AS weekly_shape,
       kept.value - coalesce(weekly.effect, 0) AS level_value,
       kept.value - coalesce(weekly.effect, 0)
           - avg(kept.value - coalesce(weekly.effect, 0)) FILTER (WHERE kept.typical) OVER series AS residual
FROM kept
LEFT JOIN weekly
    ON weekly.feature = kept.feature AND weekly.segment_dim = kept.segment_dim
   AND weekly.segment_value = kept.segment_value AND weekly.series = kept.series
   AND weekly.weekday = isodow(kept.ds)
WINDOW series AS (PARTITION BY kept.feature, kept.segment_dim, kept.segment_value, kept.series);
