-- 003: sample_windows.rows_null_event_id, the window's log rows without an event id (never
-- sampled), for warehouses created before it was counted; their existing rows get NULL.
ALTER TABLE sample_windows ADD COLUMN IF NOT EXISTS rows_null_event_id BIGINT;
