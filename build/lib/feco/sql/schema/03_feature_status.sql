-- feature_status: one row per day and configured feature.
-- status: 'ok', or 'missing_column' when the feature is absent from the day's logs (its
-- states then count it as never present, and the run goes on). detail says more.
CREATE TABLE IF NOT EXISTS feature_status (
    ds DATE NOT NULL,
    feature VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    detail VARCHAR,
    PRIMARY KEY (ds, feature)
);
