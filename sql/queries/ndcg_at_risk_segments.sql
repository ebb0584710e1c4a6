-- ndcg_at_risk_segments: the values of the [ranker] segments dimensions on day $ds, each of
-- which the NDCG at risk measures its own losses in (feco.ranker.at_risk).
-- Inputs: coverage_states. Params: $ds, $dims (segment dimensions, e.g. ['region']).
-- Output: segment_dim, segment_value.
SELECT DISTINCT segment_dim, segment_value
FROM coverage_states
WHERE ds = $ds AND list_contains($dims, segment_dim)
ORDER BY segment_dim, segment_value;
