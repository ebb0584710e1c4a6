-- sample_windows: one row per sampling window of a day.
-- Inputs: written by the publish step from the sample step's window summary.
-- Columns: ds, window_index (0-based; `window` before schema version 10: WINDOW is an SQL
-- keyword), window_start/window_end (UTC), events_available in the window, events_sampled
-- (fewer than wanted when the window was short: the shortfall), step (k of the systematic
-- sample; 1 when the window was taken whole, NULL when it was empty), rows_null_event_id (the
-- window's rows without an event id: in no event, so never sampled), rows_null_timestamp (rows
-- without a timestamp in the hour files the window reads, so in no window; a file two windows
-- read is counted in the first), hours_missing (hours the window reads that had no log rows in
-- the window: no log files, or files holding only other times, so all its hours; a day sampled
-- with --allow-incomplete; empty when none), rows_outside_day (rows in the hour files the
-- window reads stamped on another day than ds, so in no day's sample; counted as
-- rows_null_timestamp; 0 for logs in a table, where such a row is read on its own day),
-- table_version (logs in an Iceberg or Delta table: the snapshot id or version the window was
-- read at, which `feco run --as-of` pins a rerun to; NULL for logs in a folder), sample_digest
-- (the sha256 of the window's sampled files: which of two samples of the day the warehouse
-- holds, when a rerun is killed before its publish commits). The last six are NULL for days
-- sampled before they were recorded.
CREATE TABLE IF NOT EXISTS sample_windows (
    ds DATE NOT NULL,
    window_index SMALLINT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    window_end TIMESTAMPTZ NOT NULL,
    events_available BIGINT NOT NULL,
    events_sampled BIGINT NOT NULL,
    step DOUBLE,
    rows_null_event_id BIGINT,
    rows_null_timestamp BIGINT,
    hours_missing SMALLINT[],
    rows_outside_day BIGINT,
    table_version VARCHAR,
    sample_digest VARCHAR,
    PRIMARY KEY (ds, window_index)
);
