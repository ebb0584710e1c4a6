-- alert_inputs: everything the coverage alert rules need for one day, one row per feature
-- and segment present that day.
-- Inputs: coverage_states, feco_daily, feco_ma7, alerts (earlier days').
-- Params: $ds; $baseline_days (days before ds in the baseline); $spread_days (days before ds
-- whose daily values give the day-to-day spread: longer than the baseline, so that one bad
-- day or a weekend does not dominate it); $ref_start, $ref_end (the frozen reference period,
-- NULL for none).
-- Output: feature, segment_dim, segment_value, n_rows, observed (coverage on ds),
-- missing_share, windows, std_error (= sd of the day's window coverages / sqrt(windows): the
-- windows are clusters, so this is the honest error of the day's value), window_coverages,
-- baseline (mean daily coverage over the previous $baseline_days calendar days),
-- baseline_sd (sd of the daily values over the previous $spread_days days, leaving out days
-- on which this feature and segment raised a drop alert: the day-to-day variation of normal
-- days, which the windows of one day cannot show; an incident's first day must not hide its
-- second), baseline_days, baseline_missing, coverage_ma7 (trailing average including ds), reference
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
earlier_drops AS (
    SELECT DISTINCT ds, feature, segment_dim, segment_value
    FROM alerts
    WHERE rule = 'drop_vs_moving_average' AND ds < $ds
),
history AS (
    SELECT daily.feature, daily.segment_dim, daily.segment_value,
           avg(daily.coverage) FILTER (WHERE daily.ds >= $ds - to_days($baseline_days)) AS baseline,
           stddev_samp(daily.coverage) FILTER (WHERE earlier_drops.ds IS NULL) AS baseline_sd,
           count(*) FILTER (WHERE daily.ds >= $ds - to_days($baseline_days)) AS baseline_days,
           avg(daily.missing_share) FILTER (WHERE daily.ds >= $ds - to_days($baseline_days))
               AS baseline_missing
    FROM feco_daily AS daily
    LEFT JOIN earlier_drops
        ON earlier_drops.ds = daily.ds AND earlier_drops.feature = daily.feature
       AND earlier_drops.segment_dim = daily.segment_dim
       AND earlier_drops.segment_value = daily.segment_value
    WHERE daily.ds < $ds AND daily.ds >= $ds - to_days(greatest($baseline_days, $spread_days))
    GROUP BY daily.feature, daily.segment_dim, daily.segment_value
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
