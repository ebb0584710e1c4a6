-- 021: model_runs gains tied_rows, the scored rows that share their score with another row of
-- their query (feco.ranker.experiment.tie_counts): a model of a few trees scores many documents
-- alike. Existing rows get NULL: runs stored before it were not counted.
ALTER TABLE model_runs ADD COLUMN IF NOT EXISTS tied_rows BIGINT;
