-- 031: coverage_states."window" is renamed window_index, as sample_windows' was (010): WINDOW
-- is an SQL keyword, so `feco query "SELECT window FROM coverage_states"` was a parser error.
-- Rows keep their values; queries written for the old name must say window_index. A renaming
-- cannot be written to hold on a table that has it already (one created after it), hence the
-- condition:
-- applies when: EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'coverage_states' AND column_name = 'window')
ALTER TABLE coverage_states RENAME COLUMN "window" TO window_index;
