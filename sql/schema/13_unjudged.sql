-- unjudged: what the coverage rules did not judge on a day, and why, for the segments that can
-- page (a day table, written with the day's alerts). reason: 'few_rows' (a segment under
-- [alerts] min_rows: only a collapse is judged there), 'warm_up' (fewer than warmup_days days
-- of history: the drop and decay rules wait; segment all, every feature), 'age_mix' (a feature
-- in all traffic or a product-age segment whose mix of product ages shares too little with its
-- history's). feature NULL: every feature of the segment. n_rows: the segment's sampled rows
-- that day (NULL for the warm-up). detail: the figures, for a person.
CREATE TABLE IF NOT EXISTS unjudged (
    ds DATE NOT NULL,
    feature VARCHAR,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    n_rows BIGINT,
    detail VARCHAR NOT NULL
);
