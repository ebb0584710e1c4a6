-- unjudged_on: what the coverage rules did not judge on a day, and why, for `feco alerts` and
-- `feco status`.
-- Inputs: unjudged. Params: $ds. Output: feature, segment_dim, segment_value, reason, detail.
SELECT feature, segment_dim, segment_value, reason, detail
FROM unjudged
WHERE ds = $ds
ORDER BY reason = 'warm_up' DESC, segment_dim, segment_value, feature NULLS FIRST;
