-- unjudged: what the coverage rules did not judge on a day, and why, for the segments that can
-- page (a day table, written with the day's alerts). reason: 'few_rows' (a segment under
-- [alerts] min_rows: only a collapse is judged there), 'warm_up' (fewer than warmup_days days
-- of history: the drop and decay rules wait; segment all, every feature), 'age_mix' (a feature
-- in all traffic or a product-age segment whose mix of product ages shares too little with its
-- history's). feature NULL: every feature of the segment. detail: the figures, for a person, as
-- judged. The segment's sampled rows are feco_daily's n_rows, not copied here: a later day's
-- counting may restate a day's query bands, and what was judged stays as it was judged.
CREATE TABLE IF NOT EXISTS unjudged (
    ds DATE NOT NULL,
    feature VARCHAR,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    detail VARCHAR NOT NULL
);
