-- 020: model_runs gains scored_rows, the test rows a coverage-drop run scored: with tied_rows
-- (021) it gives the share of rows whose order only the tie rule sets. Existing rows get NULL:
-- runs stored before it were not counted.
ALTER TABLE model_runs ADD COLUMN IF NOT EXISTS scored_rows BIGINT;
