-- coverage_drop_cells: the stored coverage-drop cells, for correlations and the report.
-- Inputs: coverage_drop_results. Params: none.
-- Output: every column of coverage_drop_results, in experiment, mode, rank, share, seed order.
SELECT *
FROM coverage_drop_results
ORDER BY experiment_id, mode, baseline_rank, reduction, seed;
