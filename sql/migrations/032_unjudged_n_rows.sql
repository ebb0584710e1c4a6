-- 032: unjudged no longer copies the segment's sampled rows (n_rows): feco_daily holds them,
-- and a copy went stale when a later day's counting restated a day's query bands (issue 60).
-- Existing rows lose the column; their detail keeps the figure they were judged on.
ALTER TABLE unjudged DROP COLUMN IF EXISTS n_rows;
