-- bands_from: the warehouse's first day, the first with query bands: the days of its first
-- band window share one set (feco.coverage.first_window), so every day's bands are comparable.
-- Inputs: sample_windows. Output: bands_from (year 1 without samples).
SELECT coalesce(min(ds), DATE '0001-01-01') AS bands_from
FROM sample_windows;
