-- incident_losses: each feature's coverage counts in one segment on $ds and over an
-- incident's reference days, for the loss its replay applies (feco.alerts.cost_severity).
-- Inputs: coverage_states. Params: $ds, $reference (a list of dates), $features,
-- $segment_dim, $segment_value.
-- Output: feature, day_rows, day_present, day_covered, ref_rows, ref_present, ref_covered.
SELECT feature,
       CAST(sum(n_rows) FILTER (WHERE ds = $ds) AS BIGINT) AS day_rows,
       CAST(sum(n_present) FILTER (WHERE ds = $ds) AS BIGINT) AS day_present,
       CAST(sum(n_covered) FILTER (WHERE ds = $ds) AS BIGINT) AS day_covered,
       CAST(sum(n_rows) FILTER (WHERE ds <> $ds) AS BIGINT) AS ref_rows,
       CAST(sum(n_present) FILTER (WHERE ds <> $ds) AS BIGINT) AS ref_present,
       CAST(sum(n_covered) FILTER (WHERE ds <> $ds) AS BIGINT) AS ref_covered
FROM coverage_states
WHERE segment_dim = $segment_dim AND segment_value = $segment_value
  AND list_contains($features, feature)
  AND (ds = $ds OR list_contains($reference, ds))
GROUP BY feature
ORDER BY feature;
