-- coverage_drop_query_ndcg: per-query NDCG@4/8 of every coverage-drop model run (baseline,
-- control and cell; model_runs.run_id), under feco's convention: gain 2^rel - 1, ideal DCG over
-- the query's judged documents, queries with no relevant document left out (as of the mean).
-- The bootstrap intervals and power estimate of `feco experiment coverage-drop-report` resample
-- these rows by query.
CREATE TABLE IF NOT EXISTS coverage_drop_query_ndcg (
    run_id VARCHAR NOT NULL,
    qid BIGINT NOT NULL,
    ndcg4 DOUBLE NOT NULL,
    ndcg8 DOUBLE NOT NULL,
    PRIMARY KEY (run_id, qid)
);
