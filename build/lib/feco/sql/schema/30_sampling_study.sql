-- sampling_study: how close each sampling configuration comes to a full day's coverage, and
-- what it costs (`feco sampling-study`); the report draws its error-versus-cost curve.
-- Inputs: written by feco.sampling_study.store_study; a new study of a day replaces its rows.
-- Columns: ds (the day studied), strategy ('windows': systematic within evenly spread
-- windows as feco samples; 'random': simple random sample of events over the whole day;
-- 'reservoir': one streaming pass keeping a uniform sample of events), windows and
-- events_per_window (the configuration; the random strategies take the same number of events
-- the windowed one did), events_sampled, rows_sampled, rows_read (rows the strategy had to
-- read), seconds (wall clock of drawing the sample and counting its coverage, first repeat),
-- mean_error_points (mean over repeats of the mean over features of |sampled - full-day
-- coverage| in points), max_error_points (the largest over features and repeats), repeats.
CREATE TABLE IF NOT EXISTS sampling_study (
    ds DATE NOT NULL,
    strategy VARCHAR NOT NULL,
    windows INTEGER NOT NULL,
    events_per_window INTEGER NOT NULL,
    events_sampled BIGINT NOT NULL,
    rows_sampled BIGINT NOT NULL,
    rows_read BIGINT NOT NULL,
    seconds DOUBLE NOT NULL,
    mean_error_points DOUBLE NOT NULL,
    max_error_points DOUBLE NOT NULL,
    repeats INTEGER NOT NULL,
    PRIMARY KEY (ds, strategy, windows, events_per_window)
);
