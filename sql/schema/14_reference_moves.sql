-- reference_moves: the series whose decay reference followed a rise on a day (a launch, a
-- rollout filling in: a level held above the reference for [alerts.decay] follow_days days),
-- for the segments that can page (a day table, written with the day's alerts). reference: the
-- frozen reference period's coverage; followed: the level the decay now judges against;
-- since: the day the rise had held long enough.
CREATE TABLE IF NOT EXISTS reference_moves (
    ds DATE NOT NULL,
    feature VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    reference DOUBLE NOT NULL,
    followed DOUBLE NOT NULL,
    since DATE NOT NULL
);
