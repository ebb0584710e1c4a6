-- 010: sample_windows."window" is renamed window_index: WINDOW is an SQL keyword, so
-- `feco query "SELECT window FROM sample_windows"` was a parser error. Rows keep their values;
-- queries written for the old name must say window_index. A renaming cannot be written to hold
-- on a table that has it already (one created after it, or a warehouse of a release that
-- applied it before the ledger), hence the condition:
-- applies when: EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'main' AND table_name = 'sample_windows' AND column_name = 'window')
ALTER TABLE sample_windows RENAME COLUMN "window" TO window_index;
