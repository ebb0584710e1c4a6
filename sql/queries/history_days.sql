-- history_days: how many days were published before $ds (the history the rules had).
-- Inputs: runs. Params: $ds. Output: days.
SELECT count(*) AS days
FROM runs
WHERE ds < $ds;
