-- reference_moves_on: the decay references that follow a rise on a day, for `feco status`.
-- Inputs: reference_moves. Params: $ds. Output: feature, segment_dim, segment_value,
-- reference, followed, since.
SELECT feature, segment_dim, segment_value, reference, followed, since
FROM reference_moves
WHERE ds = $ds
ORDER BY since, feature, segment_dim, segment_value;
