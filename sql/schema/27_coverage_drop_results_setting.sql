-- coverage_drop_results.setting for warehouses created before the column existed: the named
-- LightGBM setting of the cell's experiment ('plain', 'config', 'regularised').
ALTER TABLE coverage_drop_results ADD COLUMN IF NOT EXISTS setting VARCHAR;
