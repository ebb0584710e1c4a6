-- ranker_current_model: the model that scores day $ds: the version of the team's own model
-- (kind 'external') that scored it, when one did (a rerun keeps it, whatever the model file
-- holds now), else the newest team version valid on it, else the newest reference model valid
-- on it. Of two team versions valid from one day (a file changed in place, that day published
-- again), the one that scored that day.
-- Inputs: model_runs, ranker_daily. Params: $ds. Output: run_id, kind, version, artifact,
-- valid_from, train_end (the last day it learned from; NULL for a team model that does not
-- say), params, scored_it (whether ranker_daily names it on $ds) (0 or 1 row).
WITH valid AS (
    SELECT run_id, kind, version, artifact, valid_from, train_end, params,
           run_id IN (SELECT run_id FROM ranker_daily WHERE ds = $ds) AS scored_it,
           EXISTS (SELECT 1 FROM ranker_daily AS d WHERE d.ds = m.valid_from AND d.run_id = m.run_id)
               AS scored_first_day
    FROM model_runs AS m
    WHERE kind IN ('reference', 'external') AND valid_from <= $ds
)

SELECT run_id, kind, version, artifact, valid_from, train_end, params, scored_it
FROM valid
ORDER BY kind = 'external' DESC, kind = 'external' AND scored_it DESC, valid_from DESC, scored_first_day DESC,
         run_id DESC
LIMIT 1;
