-- 024: sample_windows.rows_outside_day, rows in the hour files a window reads stamped on
-- another day than ds (in no day's sample), for warehouses created before they were counted;
-- their existing rows get NULL.
ALTER TABLE sample_windows ADD COLUMN IF NOT EXISTS rows_outside_day BIGINT;
