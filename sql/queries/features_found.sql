-- features_found: of $features, those the logs held on some day other than $ds. A configured
-- feature absent from a day's logs and never found is a config error (a typo, or a column not
-- logged yet); one found before and gone now is an incident (feco.tasks.compute_coverage).
-- Inputs: feature_status. Params: $features (a list of names), $ds. Output: feature.
SELECT DISTINCT feature
FROM feature_status
WHERE list_contains($features, feature) AND status = 'ok' AND ds <> $ds
ORDER BY feature;
