-- 004: sample_windows.rows_null_timestamp, log rows without a timestamp in the hour files a
-- window reads (in no window), for warehouses created before it was counted; their existing
-- rows get NULL.
ALTER TABLE sample_windows ADD COLUMN IF NOT EXISTS rows_null_timestamp BIGINT;
