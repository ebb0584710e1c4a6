-- alert_inputs: everything the coverage alert rules need for one day, one row per feature
-- and segment present that day.
-- Inputs: coverage_states, feco_daily, feco_ma7.
-- Params: $ds; $baseline_days (days before ds in the baseline); $ref_start, $ref_end (the
-- frozen reference period, NULL for none).
-- Output: feature, segment_dim, segment_value, n_rows, observed (coverage on ds),
-- missing_share, windows, std_error (= sd of the day's window coverages / sqrt(windows): the
-- windows are clusters, so this is the honest error of the day's value), window_coverages,
-- baseline (mean daily coverage over the previous $baseline_days calendar days),
-- baseline_sd (sd of those daily values: day-to-day variation, which the windows of one day
-- cannot show), baseline_days, baseline_missing, coverage_ma7 (trailing average including ds), reference
-- (mean daily coverage over the reference period).
WITH day_windows AS (
    SELECT feature, segment_dim, segment_value, "window",
           n_covered / nullif(n_rows, 0) AS coverage
    FROM coverage_states
    WHERE ds = $ds
),
spread AS (
    SELECT feature, segment_dim, segment_value,
           count(coverage) AS windows,
           stddev_samp(coverage) / sqrt(count(coverage)) AS std_error,
           list(coverage ORDER BY "window") AS window_coverages
    FROM day_windows
    GROUP BY feature, segment_dim, segment_value
),
history AS (
    SELECT feature, segment_dim, segment_value,
           avg(coverage) AS baseline,
           stddev_samp(coverage) AS baseline_sd,
           count(*) AS baseline_days,
           avg(missing_share) AS baseline_missing
    FROM feco_daily
    WHERE ds < $ds AND ds >= $ds - to_days($baseline_days)
    GROUP BY feature, segment_dim, segment_value
),
reference AS (
    SELECT feature, segment_dim, segment_value, avg(coverage) AS reference
    FROM feco_daily
    WHERE ds BETWEEN $ref_start AND $ref_end
    GROUP BY feature, segment_dim, segment_value
)
SELECT today.feature, today.segment_dim, today.segment_value, today.n_rows,
       today.coverage AS observed, today.missing_share,
       spread.windows, spread.std_error, spread.window_coverages,
       history.baseline, history.baseline_sd, coalesce(history.baseline_days, 0) AS baseline_days,
       history.baseline_missing,
       moving.coverage_ma7,
       reference.reference
FROM feco_daily AS today
JOIN spread USING (feature, segment_dim, segment_value)
JOIN feco_ma7 AS moving
    ON moving.ds = today.ds AND moving.feature = today.feature
   AND moving.segment_dim = today.segment_dim AND moving.segment_value = today.segment_value
LEFT JOIN history USING (feature, segment_dim, segment_value)
LEFT JOIN reference USING (feature, segment_dim, segment_value)
WHERE today.ds = $ds
ORDER BY today.feature, today.segment_dim, today.segment_value;
