-- ranker_daily: the model serving a day (the reference ranker, or the team's own) scored on
-- its sample, per segment of search events
-- (feco.ranker.daily; the `score` step). Sums and counts, so days and segments merge: mean
-- NDCG = ndcg*_sum / queries_evaluated (view ranker_daily_ndcg). Conventions: feco's, exp2
-- gain over the event's shown products, events with no positive label are not evaluated and
-- are counted in queries_no_relevant. run_id names the model (model_runs) that scored the day.
CREATE TABLE IF NOT EXISTS ranker_daily (
    ds DATE NOT NULL,
    run_id VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    queries BIGINT NOT NULL,
    queries_evaluated BIGINT NOT NULL,
    queries_no_relevant BIGINT NOT NULL,
    ndcg4_sum DOUBLE NOT NULL,
    ndcg8_sum DOUBLE NOT NULL,
    PRIMARY KEY (ds, segment_dim, segment_value)
);
