-- coverage_drop_finished_cells: the run ids of an experiment's stored cells, so a rerun of
-- `feco experiment coverage-drop` skips them.
-- Inputs: coverage_drop_results. Params: $experiment_id.
-- Output: run_id.
SELECT run_id
FROM coverage_drop_results
WHERE experiment_id = $experiment_id;
