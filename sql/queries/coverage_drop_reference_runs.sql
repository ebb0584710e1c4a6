-- coverage_drop_reference_runs: the baseline and the no-perturbation controls of every
-- coverage-drop experiment that has stored cells, for the retraining-noise table and the
-- per-fold model table (trees, tied test rows, NDCG@8 under three tie rules).
-- Inputs: model_runs, coverage_drop_results. Params: none.
-- Output: experiment_id, dataset, setting, fold, kind, run_id, best_iteration, ndcg8, ndcg8_lightgbm,
-- scored_rows, tied_rows, ndcg8_ties_forward, ndcg8_ties_average.
WITH experiments AS (
    SELECT DISTINCT experiment_id, setting
    FROM coverage_drop_results
)
SELECT r.experiment_id, r.dataset, e.setting, r.fold, r.kind, r.run_id, r.best_iteration, r.ndcg8,
       r.ndcg8_lightgbm, r.scored_rows, r.tied_rows, r.ndcg8_ties_forward, r.ndcg8_ties_average
FROM model_runs AS r
JOIN experiments AS e USING (experiment_id)
WHERE r.kind IN ('coverage_drop:baseline', 'coverage_drop:control')
ORDER BY r.experiment_id, r.run_id;
