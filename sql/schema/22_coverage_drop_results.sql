-- coverage_drop_results: one cell of the coverage-drop experiment (`feco experiment
-- coverage-drop`): a feature's coverage reduced by `reduction` (share of its covered values set
-- to 0, seeded) in mode 'test' (test set only, model fixed) or 'retrain' (train, validation and
-- test sets, model retrained with the same parameters). Coverage is the measured share of rows
-- > 0 after the change. d_* = the cell's NDCG minus its reference's (same conventions as
-- model_runs): in 'test' mode the baseline (run '<experiment_id>:baseline'), in 'retrain' mode
-- the control retrained on unperturbed data with the cell's seed ('<experiment_id>:control:<seed>'),
-- so retraining noise is not counted as an effect. setting: the named LightGBM settings
-- ('plain', 'config', 'regularised'). role: 'top' (top-k by baseline SHAP) or 'low' (a
-- low-importance contrast). The cell's importances are in feature_importance and its per-query
-- NDCG in coverage_drop_query_ndcg, both under run_id.
CREATE TABLE IF NOT EXISTS coverage_drop_results (
    experiment_id VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL PRIMARY KEY,
    dataset VARCHAR NOT NULL,
    fold INTEGER NOT NULL,
    setting VARCHAR,
    mode VARCHAR NOT NULL,
    feature VARCHAR NOT NULL,
    role VARCHAR NOT NULL,
    baseline_rank INTEGER NOT NULL,
    baseline_shap_share DOUBLE NOT NULL,
    baseline_gain_share DOUBLE NOT NULL,
    reduction DOUBLE NOT NULL,
    seed INTEGER NOT NULL,
    coverage_test_before DOUBLE NOT NULL,
    coverage_test_after DOUBLE NOT NULL,
    coverage_train_after DOUBLE,
    best_iteration INTEGER,
    train_seconds DOUBLE,
    ndcg4 DOUBLE,
    ndcg8 DOUBLE,
    ndcg4_lightgbm DOUBLE,
    ndcg8_lightgbm DOUBLE,
    d_ndcg4 DOUBLE,
    d_ndcg8 DOUBLE,
    d_ndcg4_lightgbm DOUBLE,
    d_ndcg8_lightgbm DOUBLE,
    queries BIGINT,
    queries_no_relevant BIGINT
);
