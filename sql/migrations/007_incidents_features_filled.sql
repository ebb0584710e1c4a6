-- incidents.features for rows written before migration 006: their one feature ([] for the
-- sampled volume's incidents, which have none).
UPDATE incidents
SET features = CASE WHEN feature IS NULL THEN []::VARCHAR[] ELSE [feature] END
WHERE features IS NULL;
