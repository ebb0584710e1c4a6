-- coverage_reference_for_period: the stored reference statistics of one reference period.
-- Inputs: coverage_reference. Params: $start, $end (the period). Output: feature, statistic,
-- value.
SELECT feature, statistic, value
FROM coverage_reference
WHERE period_start = $start AND period_end = $end
ORDER BY feature, statistic;
