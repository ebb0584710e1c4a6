-- 011: sample_windows.hours_missing, the hours a window reads that had no log files (a day
-- sampled with --allow-incomplete; an empty list when none), for warehouses created before it
-- was recorded; their existing rows get NULL.
ALTER TABLE sample_windows ADD COLUMN IF NOT EXISTS hours_missing SMALLINT[];
