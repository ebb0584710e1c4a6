-- report_sampling_study: the most recent day's sampling study, for the report's
-- error-versus-cost chart and table.
-- Inputs: sampling_study. Params: none.
-- Output: every sampling_study column, cheapest first within each strategy.
SELECT *
FROM sampling_study
WHERE ds = (SELECT max(ds) FROM sampling_study)
ORDER BY strategy, rows_read, windows, events_per_window;
