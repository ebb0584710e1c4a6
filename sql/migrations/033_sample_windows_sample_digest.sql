-- 033: sample_windows.sample_digest, the sha256 of a window's sampled files, which tells the
-- sample the warehouse holds from a rerun's (feco.sampling.day_folder), for warehouses created
-- before it was recorded; their existing rows get NULL (not recorded: told apart by their
-- counts alone).
ALTER TABLE sample_windows ADD COLUMN IF NOT EXISTS sample_digest VARCHAR;
