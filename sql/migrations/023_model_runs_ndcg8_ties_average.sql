-- 023: model_runs gains ndcg8_ties_average, NDCG@8 (feco's convention) averaged over every
-- order of each tied group: the value no tie rule decides. Existing rows get NULL.
ALTER TABLE model_runs ADD COLUMN IF NOT EXISTS ndcg8_ties_average DOUBLE;
