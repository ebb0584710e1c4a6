-- ndcg_at_risk_losses: each feature's coverage counts in one segment on $ds and over the
-- reference days, with the day's sampling error, for the deficits the NDCG at risk replays
-- (feco.ranker.at_risk).
-- Inputs: coverage_states. Params: $ds, $reference (a list of dates), $features,
-- $segment_dim, $segment_value.
-- Output: feature, day_rows, day_present, day_covered, day_se (the standard error of the
-- day's coverage: the spread of its windows' coverage / sqrt(windows), the eight windows being
-- clusters; NULL with one window), ref_rows, ref_present, ref_covered.
WITH day_windows AS (
    SELECT feature, n_rows, n_present, n_covered, n_covered / n_rows AS coverage
    FROM coverage_states
    WHERE ds = $ds AND segment_dim = $segment_dim AND segment_value = $segment_value
      AND list_contains($features, feature) AND n_rows > 0
),
day AS (
    SELECT feature,
           CAST(sum(n_rows) AS BIGINT) AS day_rows,
           CAST(sum(n_present) AS BIGINT) AS day_present,
           CAST(sum(n_covered) AS BIGINT) AS day_covered,
           stddev_samp(coverage) / sqrt(count(*)) AS day_se
    FROM day_windows
    GROUP BY feature
),
reference AS (
    SELECT feature,
           CAST(sum(n_rows) AS BIGINT) AS ref_rows,
           CAST(sum(n_present) AS BIGINT) AS ref_present,
           CAST(sum(n_covered) AS BIGINT) AS ref_covered
    FROM coverage_states
    WHERE list_contains($reference, ds) AND segment_dim = $segment_dim AND segment_value = $segment_value
      AND list_contains($features, feature)
    GROUP BY feature
)
SELECT day.feature, day_rows, day_present, day_covered, day_se, ref_rows, ref_present, ref_covered
FROM day
JOIN reference USING (feature)
ORDER BY day.feature;
