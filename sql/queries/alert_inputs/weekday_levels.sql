-- weekday_levels: each weekday's mean over its typical days.
-- Inputs: kept. Params: none.
-- Output: feature, segment_dim, segment_value, series, weekday, level, days.
SELECT feature, segment_dim, segment_value, series, isodow(ds) AS weekday,
       avg(value) FILTER (WHERE typical) AS level, count(*) FILTER (WHERE typical) AS days
FROM kept
WHERE weekly_possible
GROUP BY ALL;
