-- feature_status: one row per day and configured feature.
-- status: 'ok', or 'missing_column' when the feature is absent from the day's logs (its
-- states then count it as never present, and the run goes on). detail says more. rule: the
-- coverage rule the day was counted under ('> 0', '!= 0', '> reference_mean (0.31)': a
-- reference rule with its frozen value); NULL for days counted before it was recorded. A
-- feature's series restarts where its rule changes (view feature_rules).
CREATE TABLE IF NOT EXISTS feature_status (
    ds DATE NOT NULL,
    feature VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    detail VARCHAR,
    rule VARCHAR,
    PRIMARY KEY (ds, feature)
);
