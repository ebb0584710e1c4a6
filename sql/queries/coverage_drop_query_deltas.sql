-- coverage_drop_query_deltas: each cell's per-query NDCG change against its reference, for
-- bootstrap intervals over queries. The reference is the baseline in 'test' mode and the
-- control retrained with the cell's seed on unperturbed data in 'retrain' mode (feco's
-- convention: queries with no relevant document are not in coverage_drop_query_ndcg).
-- Inputs: coverage_drop_results, coverage_drop_query_ndcg. Params: none.
-- Output: experiment_id, dataset, fold, setting, mode, feature, role, baseline_rank,
-- baseline_shap_share, reduction, seed, qid, d_ndcg4, d_ndcg8.
WITH cells AS (
    SELECT experiment_id, run_id, dataset, fold, setting, mode, feature, role, baseline_rank, baseline_shap_share,
           reduction, seed,
           CASE WHEN mode = 'test' THEN experiment_id || ':baseline'
                ELSE experiment_id || ':control:' || seed END AS reference_run_id
    FROM coverage_drop_results
)
SELECT c.experiment_id, c.dataset, c.fold, c.setting, c.mode, c.feature, c.role, c.baseline_rank,
       c.baseline_shap_share, c.reduction, c.seed, q.qid, q.ndcg4 - r.ndcg4 AS d_ndcg4, q.ndcg8 - r.ndcg8 AS d_ndcg8
FROM cells AS c
JOIN coverage_drop_query_ndcg AS q ON q.run_id = c.run_id
JOIN coverage_drop_query_ndcg AS r ON r.run_id = c.reference_run_id AND r.qid = q.qid
ORDER BY c.experiment_id, c.mode, c.baseline_rank, c.reduction, c.seed, q.qid;
