-- coverage_drop_claim_tests: every test `feco experiment coverage-drop-report` makes on the
-- stored coverage-drop grid, with its raw p-value and the p-value adjusted within its family;
-- the report replaces the whole table, since it reads every stored cell. claim: 'sensitivity'
-- (a pooled cell's mean NDCG@8 change against 0), 'fold_effect' (the same per fold),
-- 'within_feature' (coverage vs NDCG@8 change inside features), 'importance_loss' (baseline SHAP
-- share vs NDCG@8 loss). family: the tests adjusted together ('sensitivity', 'fold_effect',
-- 'within_feature', 'importance_loss:top+low', 'importance_loss:top'); method: 'holm'
-- (family-wise error) or 'bh' (Benjamini-Hochberg, false discovery rate). features: the
-- feature group (top1, top2-5, low, unused) or the points of an importance test (top+low, top).
-- fold NULL: pooled over folds. statistic: 'mean_d_ndcg8' (estimate with its 95% bootstrap
-- interval over n queries), 'pearson' or 'spearman' (n points). p NULL: the test is undefined
-- (fewer than 3 points, or no spread) and in no family.
CREATE TABLE IF NOT EXISTS coverage_drop_claim_tests (
    claim VARCHAR NOT NULL,
    family VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    dataset VARCHAR NOT NULL,
    setting VARCHAR,
    mode VARCHAR NOT NULL,
    features VARCHAR,
    reduction DOUBLE,
    fold INTEGER,
    statistic VARCHAR NOT NULL,
    estimate DOUBLE,
    ci_low DOUBLE,
    ci_high DOUBLE,
    n BIGINT,
    p DOUBLE,
    p_adjusted DOUBLE
);
