-- sample_windows: one row per sampling window of a day.
-- Inputs: written by the publish step from the sample step's window summary.
-- Columns: ds, window (0-based), window_start/window_end (UTC), events_available in the
-- window, events_sampled (fewer than wanted when the window was short: the shortfall), step
-- (k of the systematic sample; 1 when the window was taken whole, NULL when it was empty),
-- rows_null_event_id (the window's rows without an event id: in no event, so never sampled),
-- rows_null_timestamp (rows without a timestamp in the hour files the window reads, so in no
-- window; a file two windows read is counted in the first). Both NULL for days sampled before
-- they were counted.
CREATE TABLE IF NOT EXISTS sample_windows (
    ds DATE NOT NULL,
    "window" SMALLINT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    window_end TIMESTAMPTZ NOT NULL,
    events_available BIGINT NOT NULL,
    events_sampled BIGINT NOT NULL,
    step DOUBLE,
    rows_null_event_id BIGINT,
    rows_null_timestamp BIGINT,
    PRIMARY KEY (ds, "window")
);
