-- model_runs: one row per trained or evaluated ranker (feco.ranker), experiments and daily.
-- kind: 'reference' (the pipeline's ranker, a versioned artifact), 'external' (the team's own
-- model, [ranker.model]: a copy of its file versioned by its bytes' digest; params holds the
-- file, the mapping of its feature names to log columns and its label), 'coverage_drop:baseline',
-- 'coverage_drop:test' (baseline model on a test set with one feature's coverage reduced),
-- 'coverage_drop:retrain' (model retrained on reduced data) or 'coverage_drop:control' (retrained on
-- unperturbed data with a cell's seed: the retraining noise). NDCG are test-set means: ndcg4/8
-- under feco's conventions (queries with no relevant document excluded, counted in
-- queries_no_relevant), *_lightgbm under LightGBM's (such a query scores 1).
-- version, artifact, train_start/end and valid_from are set for 'reference' and 'external'
-- runs only (train_start never, train_end when [ranker.model] trained_until says, for an
-- external one): such a model scores days from valid_from on, until a newer one of its kind
-- is valid; an external one is preferred to a reference one.
-- Coverage-drop runs only: scored_rows (test rows), tied_rows (those sharing their score with
-- another row of their query), ndcg8_ties_forward (NDCG@8 with ties in row order, earlier rows
-- first; feco's rule puts later rows first) and ndcg8_ties_average (over every order of a tie).
CREATE TABLE IF NOT EXISTS model_runs (
    run_id VARCHAR NOT NULL PRIMARY KEY,
    kind VARCHAR NOT NULL,
    dataset VARCHAR,
    fold INTEGER,
    experiment_id VARCHAR,
    version VARCHAR,
    artifact VARCHAR,
    train_start DATE,
    train_end DATE,
    valid_from DATE,
    params VARCHAR,
    best_iteration INTEGER,
    train_seconds DOUBLE,
    predict_seconds DOUBLE,
    shap_seconds DOUBLE,
    shap_rows BIGINT,
    ndcg4 DOUBLE,
    ndcg8 DOUBLE,
    ndcg4_lightgbm DOUBLE,
    ndcg8_lightgbm DOUBLE,
    queries BIGINT,
    queries_no_relevant BIGINT,
    scored_rows BIGINT,
    tied_rows BIGINT,
    ndcg8_ties_forward DOUBLE,
    ndcg8_ties_average DOUBLE
);
