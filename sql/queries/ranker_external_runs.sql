-- ranker_external_runs: the team's models registered to serve from $valid_from (at most one,
-- the version of the file registered last), so registering the same bytes again is a no-op.
-- Inputs: model_runs. Params: $valid_from.
-- Output: every model_runs column.
SELECT *
FROM model_runs
WHERE kind = 'external' AND valid_from = $valid_from
ORDER BY run_id;
