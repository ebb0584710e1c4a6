-- runs: the last successful publish of each day, for `feco status` and audits.
-- published_at is the wall-clock time of the publish (metadata only: nothing computed reads
-- it); config_digest identifies the configuration the day was computed with.
CREATE TABLE IF NOT EXISTS runs (
    ds DATE PRIMARY KEY,
    published_at TIMESTAMPTZ NOT NULL,
    events_sampled BIGINT NOT NULL,
    rows_sampled BIGINT NOT NULL,
    features BIGINT NOT NULL,
    config_digest VARCHAR NOT NULL
);
