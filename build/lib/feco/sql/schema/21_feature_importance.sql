-- feature_importance: every feature's importance in one model run (model_runs.run_id).
-- shap = mean |SHAP value| (exact TreeSHAP) over a sample of rows; gain = LightGBM's total
-- split gain; *_share = the feature's part of the run's total; shap_rank 1 = most important.
CREATE TABLE IF NOT EXISTS feature_importance (
    run_id VARCHAR NOT NULL,
    feature VARCHAR NOT NULL,
    gain DOUBLE NOT NULL,
    gain_share DOUBLE NOT NULL,
    shap DOUBLE NOT NULL,
    shap_share DOUBLE NOT NULL,
    shap_rank INTEGER NOT NULL,
    PRIMARY KEY (run_id, feature)
);
