-- coverage_drop_correlations: Pearson and Spearman coefficients (with p-values) of one
-- experiment: coverage after the change against NDCG, and a feature's baseline SHAP share
-- against the NDCG@8 loss its drop causes. scope: 'grid' (all cells pooled),
-- 'within_feature' (per feature, coefficients averaged; no p-value) or 'r=<share>'.
CREATE TABLE IF NOT EXISTS coverage_drop_correlations (
    experiment_id VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    fold INTEGER NOT NULL,
    mode VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,
    x VARCHAR NOT NULL,
    y VARCHAR NOT NULL,
    n BIGINT NOT NULL,
    pearson DOUBLE,
    pearson_p DOUBLE,
    spearman DOUBLE,
    spearman_p DOUBLE
);
