-- 026: sample_windows.table_version, the Iceberg snapshot id or Delta version a window of logs
-- in a table was read at (NULL for logs in a folder), for warehouses created before it was
-- recorded; their existing rows get NULL (not recorded).
ALTER TABLE sample_windows ADD COLUMN IF NOT EXISTS table_version VARCHAR;
