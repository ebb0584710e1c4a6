-- 010: sample_windows."window" is renamed window_index: WINDOW is an SQL keyword, so
-- `feco query "SELECT window FROM sample_windows"` was a parser error. Rows keep their values;
-- queries written for the old name must say window_index. Every warehouse has the old column
-- to rename: sample_windows is in the schema since the first release.
ALTER TABLE sample_windows RENAME COLUMN "window" TO window_index;
