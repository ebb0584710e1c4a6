-- 002: coverage_drop_results.setting, the named LightGBM setting of a cell's experiment
-- ('plain', 'config', 'regularised'), for warehouses created before the column existed;
-- their existing rows get NULL (they predate named settings).
ALTER TABLE coverage_drop_results ADD COLUMN IF NOT EXISTS setting VARCHAR;
