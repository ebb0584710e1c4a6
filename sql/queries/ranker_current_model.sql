-- ranker_current_model: the reference model that scores day $ds, the newest valid on it.
-- Inputs: model_runs. Params: $ds. Output: run_id, version, artifact, valid_from, train_end
-- (the last day it learned from; 0 or 1 row).
SELECT run_id, version, artifact, valid_from, train_end
FROM model_runs
WHERE kind = 'reference' AND valid_from <= $ds
ORDER BY valid_from DESC, run_id DESC
LIMIT 1;
