-- missing_features: configured features absent from a day's logs.
-- Inputs: feature_status. Params: $ds. Output: feature, detail.
SELECT feature, detail
FROM feature_status
WHERE ds = $ds AND status = 'missing_column'
ORDER BY feature;
