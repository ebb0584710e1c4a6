-- ranker_scored_by_team_model: the version of the team's own model (kind 'external') that
-- scored day $ds, when one did: a rerun of the day is scored by it again, whatever the
-- model file holds now (feco.ranker.serving).
-- Inputs: model_runs, ranker_daily. Params: $ds.
-- Output: run_id, kind, version, artifact, valid_from, train_end, params (0 or 1 row).
SELECT run_id, kind, version, artifact, valid_from, train_end, params
FROM model_runs
WHERE kind = 'external' AND run_id IN (SELECT run_id FROM ranker_daily WHERE ds = $ds)
ORDER BY run_id
LIMIT 1;
