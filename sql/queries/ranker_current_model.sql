-- ranker_current_model: the model that scores day $ds: the newest of the team's own models
-- (kind 'external') valid on it, else the newest reference model valid on it. Of two team
-- versions valid from one day (a file changed in place and that day scored again), the one
-- that scored that day.
-- Inputs: model_runs, ranker_daily. Params: $ds. Output: run_id, kind, version, artifact,
-- valid_from, train_end (the last day it learned from; NULL for a team model that does not
-- say), params (0 or 1 row).
SELECT run_id, kind, version, artifact, valid_from, train_end, params
FROM model_runs AS m
WHERE kind IN ('reference', 'external') AND valid_from <= $ds
ORDER BY kind = 'external' DESC, valid_from DESC,
         EXISTS (SELECT 1 FROM ranker_daily AS d WHERE d.ds = m.valid_from AND d.run_id = m.run_id) DESC,
         run_id DESC
LIMIT 1;
