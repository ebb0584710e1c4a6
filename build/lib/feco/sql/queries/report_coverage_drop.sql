-- report_coverage_drop: the cells of the coverage-drop experiments, for the report's grid
-- chart and table (the FeCo paper's Table 1).
-- Inputs: coverage_drop_results. Params: none.
-- Output: experiment_id, run_id, dataset, fold, mode, feature, role, baseline_rank, reduction,
-- seed, coverage_test_before, coverage_test_after, ndcg4, ndcg8, d_ndcg4, d_ndcg8.
SELECT experiment_id, run_id, dataset, fold, mode, feature, role, baseline_rank, reduction, seed,
       coverage_test_before, coverage_test_after, ndcg4, ndcg8, d_ndcg4, d_ndcg8
FROM coverage_drop_results
ORDER BY experiment_id, mode, baseline_rank, reduction, seed;
