-- window_spread: the spread between the day's windows (clusters: the honest error of the day's
-- value).
-- Inputs: day_windows. Params: none.
-- Output: feature, segment_dim, segment_value, windows, std_error, window_coverages.
SELECT feature, segment_dim, segment_value,
       count(coverage) AS windows,
       stddev_samp(coverage) / sqrt(count(coverage)) AS std_error,
       list(coverage ORDER BY window_index) AS window_coverages
FROM day_windows
GROUP BY feature, segment_dim, segment_value;
