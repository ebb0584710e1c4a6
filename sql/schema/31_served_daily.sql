-- served_daily: the NDCG of the order that was served, per day and segment of search events
-- (feco.ranker.daily.served_sums; the publish step, every day, no model needed). From each
-- sampled event's logged positions ([ranker] position, 1 = shown first) and graded labels
-- ([logs] label): gain 2^label - 1, discount 1/log2(rank + 1), ideal DCG over the event's
-- shown rows. Rows sharing a position (or without one: last) are tied; feco's tie rule puts
-- the later row of the sample first, and events_tied counts the events with such rows. Events
-- with no relevant row are not evaluated and are counted in queries_no_relevant. Sums and
-- counts, so days and segments merge: mean NDCG = ndcg*_sum / queries_evaluated (view
-- served_daily_ndcg). Segments: ('all', 'all') and each [ranker] segments dimension, as
-- ranker_daily.
CREATE TABLE IF NOT EXISTS served_daily (
    ds DATE NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    queries BIGINT NOT NULL,
    queries_evaluated BIGINT NOT NULL,
    queries_no_relevant BIGINT NOT NULL,
    ndcg4_sum DOUBLE NOT NULL,
    ndcg8_sum DOUBLE NOT NULL,
    events_tied BIGINT NOT NULL,
    PRIMARY KEY (ds, segment_dim, segment_value)
);
