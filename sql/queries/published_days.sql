-- published_days: which of $days the warehouse holds (published by the publish step).
-- Inputs: runs. Params: $days (a list of dates). Output: ds, one row per published day.
SELECT ds
FROM runs
WHERE list_contains($days, ds)
ORDER BY ds;
