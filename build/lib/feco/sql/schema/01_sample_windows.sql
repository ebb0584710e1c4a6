-- sample_windows: one row per sampling window of a day.
-- Inputs: written by the publish step from the sample step's window summary.
-- Columns: ds, window (0-based), window_start/window_end (UTC), events_available in the
-- window, events_sampled (fewer than wanted when the window was short: the shortfall), step
-- (k of the systematic sample; 1 when the window was taken whole, NULL when it was empty).
CREATE TABLE IF NOT EXISTS sample_windows (
    ds DATE NOT NULL,
    "window" SMALLINT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    window_end TIMESTAMPTZ NOT NULL,
    events_available BIGINT NOT NULL,
    events_sampled BIGINT NOT NULL,
    step DOUBLE,
    PRIMARY KEY (ds, "window")
);
