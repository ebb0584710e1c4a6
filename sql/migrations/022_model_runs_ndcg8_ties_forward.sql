-- 022: model_runs gains ndcg8_ties_forward, NDCG@8 (feco's convention) with tied scores in row
-- order, earlier rows first (feco's own rule puts later rows first), so the claims report
-- shows how far the tie rule alone moves a run. Existing rows get NULL.
ALTER TABLE model_runs ADD COLUMN IF NOT EXISTS ndcg8_ties_forward DOUBLE;
