-- band_levels: every band's usual levels, seen or taken from the nearest band.
-- Inputs: seen_levels, unseen_levels. Params: none.
-- Output: feature, dim, band, level, missing_level.
SELECT * FROM seen_levels
UNION ALL BY NAME
SELECT * FROM unseen_levels;
