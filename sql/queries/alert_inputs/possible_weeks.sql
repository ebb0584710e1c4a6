-- possible_weeks: the series whose weekly shape can be learnt ($weekly).
-- Series with two days of every weekday in the spread period: their weekly shape can be learnt.
-- Inputs: series_days. Params: $weekly.
-- Output: feature, segment_dim, segment_value, series.
SELECT feature, segment_dim, segment_value, series
FROM (SELECT feature, segment_dim, segment_value, series, isodow(ds) AS weekday, count(*) AS days
      FROM series_days GROUP BY ALL)
WHERE $weekly
GROUP BY ALL
HAVING count(*) FILTER (WHERE days >= 2) = 7;
