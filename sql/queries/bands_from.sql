-- bands_from: the first day whose query bands were drawn from a whole window of sampled days
-- (segments.band_days): before it they came from fewer days, and are not the same segments.
-- Inputs: sample_windows. Params: $band_days. Output: bands_from (year 1 without samples).
SELECT coalesce(min(ds) + to_days($band_days - 1), DATE '0001-01-01') AS bands_from
FROM sample_windows;
