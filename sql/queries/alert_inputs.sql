-- alert_inputs: everything the coverage alert rules need for one day, one row per feature
-- and segment present that day.
-- Inputs: coverage_states, feco_daily, feature_rules, alerts (earlier days').
-- Params: $ds; $baseline_days (days before ds in the baseline mean); $spread_days (days
-- before ds whose values give the day-to-day spread and the weekly pattern: longer than the
-- baseline, so one bad day does not dominate); $ref_start, $ref_end (the frozen reference
-- period, NULL for none); $min_rows (rows a reference day needs to count); $ref_min_days
-- (such days a reference needs: a segment too young or too small then has none); $ma_days
-- (the moving average's length); $weekly (adjust the baseline for the day of the week);
-- $bands_from (the first day whose query bands were drawn from their whole window of days:
-- a reference day before it is not a day of the same query-band segment); $new_bands (the
-- age bands of new products); $age_bands (every age band, youngest first).
-- All traffic and the product-age segments are judged against their previous days as today's
-- mix of product ages would have given them: each earlier day's coverage times the ratio of
-- today's to that day's coverage predicted from its rows per age band at the bands' usual
-- levels (a batch of new products landing changes the mix, not the data's health; a band no
-- earlier day had is taken at the nearest band's levels), and each
-- earlier day's NULL/NaN share plus the difference of the two days' shares so predicted; their
-- reference likewise to the mix of the moving average's days. The moving average and the
-- ratios to the rest stay plain. A segment whose mix of ages has little in common with its
-- history's (history_overlap, reference_overlap) is not judged by that history.
-- Output, per feature and segment:
--   n_rows, observed (coverage on ds), missing_share;
--   windows, std_error (sd of the day's window coverages / sqrt(windows): the windows are
--     clusters, so this is the honest error of the day's value), window_coverages;
--   baseline (mean daily coverage over the previous $baseline_days calendar days, plus, with
--     $weekly, the usual deviation of ds's day of the week: its mean over the spread period
--     minus the mean of the seven weekday means), baseline_days, baseline_missing (their mean
--     NULL/NaN share), missing_sd, missing_df (the sd of the NULL/NaN share over the spread
--     period's normal days, scaled as baseline_sd, and its degrees of freedom),
--     weekday_effect (that deviation, NULL when not applied);
--   day_sd, day_df: the sd of the daily values of the spread period's normal days, those that
--     raised no drop alert for this feature in this segment or in all traffic (a segment that
--     fell with all traffic raises none of its own), so an incident's first day does not
--     hide its second; with $weekly, the sd of their residuals from their weekday's mean, on
--     n - 7 degrees of freedom, so a weekly swing is not mistaken for noise. The weekly
--     adjustment needs two normal days of every weekday; a segment with fewer gets none.
--     day_df is the sd's degrees of freedom (n - 1 or n - 7);
--   baseline_sd: day_sd scaled by sqrt(1 + 1/baseline_days): ds is compared with a mean of
--     baseline_days days, which has its own error (the weekday effect's is left out);
--   rest_coverage (the rest of traffic's coverage on ds: the global counts less the
--     segment's; NULL for the global segment), rest_ratio (observed / rest_coverage);
--   rest_baseline (the segment's coverage at its usual ratio to the rest of traffic: the
--     ratio's mean over the previous $baseline_days days that were normal, since on a day all
--     traffic fell the rest fell and the ratio with it, times rest_coverage) and
--     rest_baseline_sd (the ratio's sd over the spread period's normal days, ratio_sd, on
--     ratio_df degrees of freedom, in coverage units and scaled as baseline_sd): a day-to-day
--     swing moves every segment alike, so against the rest a segment's own drop stands out;
--   coverage_ma7 (mean daily coverage over the $ma_days calendar days ending at ds, as in
--     the feco_ma7 view, computed here from the recent days only so that a day's cost does
--     not grow with the history), days_in_window, ratio_ma7 (the mean of the daily ratios to
--     the rest over the same days, NULL for the global segment);
--   noise_sd, noise_df (the days' own noise, free of a slow trend: from the changes between
--     consecutive normal days of the spread period, weekday-adjusted as day_sd is) and
--     ratio_noise_sd, ratio_noise_df (the same of the ratio to the rest), for the decay rule;
--   reference (mean daily coverage over the reference days with at least $min_rows rows, from
--     $bands_from on for query-band segments),
--     reference_days, rest_reference (the mean of the segment's daily ratios to the rest over
--     those days), scaled for all traffic and the product-age segments to the mix of product
--     ages of the moving average's days;
--   history_overlap, reference_overlap: for those segments, the share of ds's rows in age
--     bands the baseline days' (the reference days') mix holds too: the sum over bands of the
--     smaller of the two shares (NULL elsewhere, or without such days).
-- Every statistic of a feature is taken over the days counted under ds's coverage rule only
-- (feature_rules.rule_since): a changed rule starts a new series, judged once it has history.
WITH rule_starts AS (
    SELECT feature, rule_since FROM feature_rules WHERE ds = $ds
),
daily AS (
    SELECT feco_daily.*
    FROM feco_daily
    LEFT JOIN rule_starts USING (feature)
    WHERE rule_starts.rule_since IS NULL OR feco_daily.ds >= rule_starts.rule_since
),
day_windows AS (
    SELECT feature, segment_dim, segment_value, "window",
           n_covered / nullif(n_rows, 0) AS coverage
    FROM coverage_states
    WHERE ds = $ds
),
window_spread AS (
    SELECT feature, segment_dim, segment_value,
           count(coverage) AS windows,
           stddev_samp(coverage) / sqrt(count(coverage)) AS std_error,
           list(coverage ORDER BY "window") AS window_coverages
    FROM day_windows
    GROUP BY feature, segment_dim, segment_value
),
age_bands AS (
    -- Each age band's coverage on the days the history needs, and whether it is a band of new
    -- products (a batch of new products landing changes a segment's mix of product ages).
    SELECT ds, feature, segment_value AS band, n_rows, coverage, missing_share,
           CASE WHEN list_contains($new_bands, segment_value) THEN 'new' ELSE 'established' END AS age
    FROM daily
    WHERE segment_dim = 'age_band' AND segment_value <> 'unknown'
      AND (ds BETWEEN $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)) AND $ds
           OR ds BETWEEN $ref_start AND $ref_end)
),
seen_levels AS (
    SELECT feature, band, avg(coverage) AS level, avg(missing_share) AS missing_level
    FROM age_bands
    WHERE ds < $ds AND n_rows >= $min_rows
    GROUP BY feature, band
),
band_order AS (
    SELECT unnest($age_bands) AS band, unnest(range(len($age_bands))) AS position
),
unseen_levels AS (
    -- A band of ds that no earlier day had (the first batch of new products since the history
    -- began) at the levels of the nearest band seen, the younger on a tie: products a day old
    -- taken for the youngest seen, a guess nearer than leaving their rows out; on a batch's
    -- second day the younger band held the same products the day before.
    SELECT today.feature, today.band,
           arg_min(seen.level, abs(seen_order.position - today_order.position) * 2
                               - CAST(seen_order.position < today_order.position AS INTEGER)) AS level,
           arg_min(seen.missing_level, abs(seen_order.position - today_order.position) * 2
                                       - CAST(seen_order.position < today_order.position AS INTEGER)) AS missing_level
    FROM (SELECT DISTINCT feature, band FROM age_bands WHERE ds = $ds) AS today
    JOIN band_order AS today_order ON today_order.band = today.band
    JOIN seen_levels AS seen ON seen.feature = today.feature
    JOIN band_order AS seen_order ON seen_order.band = seen.band
    ANTI JOIN seen_levels AS own ON own.feature = today.feature AND own.band = today.band
    GROUP BY today.feature, today.band
),
band_levels AS (
    SELECT * FROM seen_levels
    UNION ALL BY NAME
    SELECT * FROM unseen_levels
),
age_mixes AS (
    -- Each day's coverage and NULL/NaN share of all traffic and of new and established
    -- products as their mix of age bands predicts them at the bands' usual levels (bands seen
    -- before only).
    SELECT ds, feature, segment_dim, segment_value, sum(n_rows * level) / nullif(sum(n_rows), 0) AS mix,
           sum(n_rows * missing_level) / nullif(sum(n_rows), 0) AS missing_mix
    FROM (SELECT ds, feature, 'all' AS segment_dim, 'all' AS segment_value, n_rows, level, missing_level
          FROM age_bands JOIN band_levels USING (feature, band)
          UNION ALL
          SELECT ds, feature, 'product_age', age, n_rows, level, missing_level
          FROM age_bands JOIN band_levels USING (feature, band))
    GROUP BY ALL
),
mix_factors AS (
    -- Scales a day's coverage to ds's mix of product ages, and shifts its NULL/NaN share so.
    SELECT day.ds, day.feature, day.segment_dim, day.segment_value, today.mix / nullif(day.mix, 0) AS factor,
           today.missing_mix - day.missing_mix AS missing_shift
    FROM age_mixes AS day
    JOIN age_mixes AS today
        ON today.ds = $ds AND today.feature = day.feature
       AND today.segment_dim = day.segment_dim AND today.segment_value = day.segment_value
),
reference_mix AS (
    -- Scales the reference to the mix of product ages of the moving average's days.
    SELECT feature, segment_dim, segment_value,
           avg(mix) FILTER (WHERE ds > $ds - to_days($ma_days))
               / nullif(avg(mix) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end), 0) AS factor
    FROM age_mixes
    GROUP BY ALL
),
recent AS (
    -- The days the history needs and ds itself, each segment with the coverage of the rest
    -- of traffic that day (the global counts less the segment's) and, for all traffic and the
    -- product-age segments, its coverage and NULL/NaN share as they would have been with ds's
    -- mix of product ages (as_today, missing_as_today; the plain ones elsewhere).
    SELECT daily.*,
           daily.coverage * coalesce(factor.factor, 1) AS as_today,
           least(greatest(daily.missing_share + coalesce(factor.missing_shift, 0), 0), 1) AS missing_as_today,
           (any_value(daily.n_covered) FILTER (WHERE daily.segment_dim = 'all') OVER same_day - daily.n_covered)
               / nullif(any_value(daily.n_rows) FILTER (WHERE daily.segment_dim = 'all') OVER same_day
                        - daily.n_rows, 0)
               AS rest_coverage
    FROM daily
    LEFT JOIN mix_factors AS factor USING (ds, feature, segment_dim, segment_value)
    WHERE daily.ds BETWEEN $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)) AND $ds
    WINDOW same_day AS (PARTITION BY daily.ds, daily.feature)
),
drop_days AS (
    SELECT DISTINCT ds, feature, segment_dim, segment_value
    FROM alerts
    WHERE rule = 'drop_vs_moving_average'
),
previous_days AS (
    SELECT daily.ds, daily.feature, daily.segment_dim, daily.segment_value, daily.as_today AS coverage,
           daily.coverage AS plain_coverage,
           daily.missing_as_today AS missing_share, daily.as_today / nullif(daily.rest_coverage, 0) AS rest_ratio,
           daily.rest_coverage,
           own.ds IS NULL AND everywhere.ds IS NULL AS normal
    FROM recent AS daily
    LEFT JOIN drop_days AS own
        ON own.ds = daily.ds AND own.feature = daily.feature
       AND own.segment_dim = daily.segment_dim AND own.segment_value = daily.segment_value
    LEFT JOIN drop_days AS everywhere
        ON everywhere.ds = daily.ds AND everywhere.feature = daily.feature AND everywhere.segment_dim = 'all'
    WHERE daily.ds < $ds
),
history AS (
    SELECT feature, segment_dim, segment_value,
           avg(coverage) FILTER (WHERE ds >= $ds - to_days($baseline_days)) AS baseline,
           count(*) FILTER (WHERE ds >= $ds - to_days($baseline_days)) AS baseline_days,
           avg(missing_share) FILTER (WHERE ds >= $ds - to_days($baseline_days)) AS baseline_missing,
           stddev_samp(missing_share) FILTER (WHERE normal) AS missing_sd,
           count(missing_share) FILTER (WHERE normal) - 1 AS missing_df,
           stddev_samp(coverage) FILTER (WHERE normal) AS day_sd,
           count(coverage) FILTER (WHERE normal) - 1 AS day_df,
           avg(rest_ratio) FILTER (WHERE ds >= $ds - to_days($baseline_days) AND normal) AS rest_ratio,
           stddev_samp(rest_ratio) FILTER (WHERE normal) AS ratio_sd,
           count(rest_ratio) FILTER (WHERE normal) - 1 AS ratio_df,
           sum(plain_coverage) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_sum,
           count(plain_coverage) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_days,
           sum(plain_coverage / nullif(rest_coverage, 0)) FILTER (WHERE ds > $ds - to_days($ma_days))
               AS recent_ratio_sum,
           count(plain_coverage / nullif(rest_coverage, 0)) FILTER (WHERE ds > $ds - to_days($ma_days))
               AS recent_ratio_days
    FROM previous_days
    GROUP BY feature, segment_dim, segment_value
),
normal_days AS (
    SELECT ds, feature, segment_dim, segment_value, coverage, plain_coverage, rest_ratio, rest_coverage,
           isodow(ds) AS weekday,
           avg(coverage) OVER same_weekday AS weekday_mean,
           avg(plain_coverage) OVER same_weekday AS plain_weekday_mean,
           count(coverage) OVER same_weekday AS weekday_count
    FROM previous_days
    WHERE normal
    WINDOW same_weekday AS (PARTITION BY feature, segment_dim, segment_value, isodow(ds))
),
weekly AS (
    -- A weekday's rows sum weekday_mean / weekday_count to its mean once, so the sum over all
    -- rows divided by 7 is the mean of the seven weekday means.
    SELECT feature, segment_dim, segment_value,
           any_value(weekday_mean) FILTER (WHERE weekday = isodow($ds))
               - sum(weekday_mean / weekday_count) / 7 AS weekday_effect,
           sqrt(sum((coverage - weekday_mean) ^ 2) / (count(coverage) - 7)) AS residual_sd,
           count(coverage) - 7 AS residual_df
    FROM normal_days
    GROUP BY feature, segment_dim, segment_value
    HAVING $weekly AND count(DISTINCT weekday) FILTER (WHERE weekday_count >= 2) = 7
),
adjusted AS (
    SELECT normal_days.*,
           plain_coverage - CASE WHEN weekly.feature IS NULL THEN 0 ELSE plain_weekday_mean END AS residual,
           plain_coverage / nullif(rest_coverage, 0) AS plain_ratio
    FROM normal_days
    LEFT JOIN weekly USING (feature, segment_dim, segment_value)
),
successive AS (
    SELECT *,
           residual - lag(residual) OVER series AS residual_change,
           plain_ratio - lag(plain_ratio) OVER series AS ratio_change,
           ds - lag(ds) OVER series = 1 AS consecutive
    FROM adjusted
    WINDOW series AS (PARTITION BY feature, segment_dim, segment_value ORDER BY ds)
),
noise AS (
    -- The days' own noise free of a slow trend: half the mean squared change between
    -- consecutive normal days (weekday-adjusted where the weekly pattern applies; von
    -- Neumann's estimator, about 2/3 as efficient as a sample variance), for the decay rule,
    -- whose 7-day average a decline under way would otherwise seem to vary by. Of the plain
    -- coverage, as the decay judges it.
    SELECT feature, segment_dim, segment_value,
           sqrt(avg(residual_change ^ 2) FILTER (WHERE consecutive) / 2) AS noise_sd,
           count(residual_change) FILTER (WHERE consecutive) * 2 / 3 AS noise_df,
           sqrt(avg(ratio_change ^ 2) FILTER (WHERE consecutive) / 2) AS ratio_noise_sd,
           count(ratio_change) FILTER (WHERE consecutive) * 2 / 3 AS ratio_noise_df
    FROM successive
    GROUP BY feature, segment_dim, segment_value
),
reference_days AS (
    SELECT ds, feature, segment_dim, segment_value, n_rows, coverage,
           coverage / nullif(
               (any_value(n_covered) FILTER (WHERE segment_dim = 'all') OVER same_day - n_covered)
                   / nullif(any_value(n_rows) FILTER (WHERE segment_dim = 'all') OVER same_day - n_rows, 0),
               0) AS rest_ratio
    FROM daily
    WHERE ds BETWEEN $ref_start AND $ref_end
    WINDOW same_day AS (PARTITION BY ds, feature)
),
age_periods AS (
    -- Rows per age band on ds, over the baseline days and over the reference days: a segment
    -- whose products are of other ages than in its history (a monthly batch of new products
    -- replacing the last) is not the segment its history describes.
    SELECT CASE WHEN ds = $ds THEN 'today' ELSE 'baseline' END AS period, ds, feature,
           segment_value AS band, n_rows
    FROM daily
    WHERE segment_dim = 'age_band' AND segment_value <> 'unknown'
      AND ds BETWEEN $ds - to_days($baseline_days) AND $ds
    UNION ALL
    SELECT 'reference', ds, feature, segment_value, n_rows
    FROM daily
    WHERE segment_dim = 'age_band' AND segment_value <> 'unknown' AND ds BETWEEN $ref_start AND $ref_end
),
period_bands AS (
    SELECT period, ds, feature, 'all' AS segment_dim, 'all' AS segment_value, band, n_rows
    FROM age_periods
    UNION ALL
    SELECT period, ds, feature, 'product_age',
           CASE WHEN list_contains($new_bands, band) THEN 'new' ELSE 'established' END, band, n_rows
    FROM age_periods
),
period_mix AS (
    -- Each band's mean share of its segment's rows over a period's days.
    SELECT period, feature, segment_dim, segment_value, band,
           sum(share) / any_value(days) AS share
    FROM (SELECT *, n_rows / sum(n_rows) OVER (PARTITION BY period, ds, feature, segment_dim, segment_value) AS share,
                 count(DISTINCT ds) OVER (PARTITION BY period, feature, segment_dim, segment_value) AS days
          FROM period_bands)
    GROUP BY ALL
),
band_shares AS (
    SELECT feature, segment_dim, segment_value, band,
           coalesce(sum(share) FILTER (WHERE period = 'today'), 0) AS today,
           coalesce(sum(share) FILTER (WHERE period = 'baseline'), 0) AS baseline,
           coalesce(sum(share) FILTER (WHERE period = 'reference'), 0) AS reference,
           count(*) FILTER (WHERE period = 'baseline') AS baseline_seen,
           count(*) FILTER (WHERE period = 'reference') AS reference_seen
    FROM period_mix
    GROUP BY ALL
),
age_overlap AS (
    -- The share of ds's rows in a segment that its history's mix of product ages holds too
    -- (the sum over bands of the smaller share): 1 for the same mix, 0 for none in common;
    -- NULL without history.
    SELECT feature, segment_dim, segment_value,
           CASE WHEN sum(baseline_seen) > 0 THEN sum(least(today, baseline)) END AS history_overlap,
           CASE WHEN sum(reference_seen) > 0 THEN sum(least(today, reference)) END AS reference_overlap
    FROM band_shares
    GROUP BY ALL
),
reference AS (
    SELECT feature, segment_dim, segment_value,
           CASE WHEN count(*) >= $ref_min_days THEN avg(coverage) END AS reference,
           CASE WHEN count(rest_ratio) >= $ref_min_days THEN avg(rest_ratio) END AS rest_reference,
           count(*) AS reference_days
    FROM reference_days
    WHERE n_rows >= $min_rows AND (ds >= $bands_from OR segment_dim NOT LIKE '%query_band%')
    GROUP BY feature, segment_dim, segment_value
)
SELECT today.feature, today.segment_dim, today.segment_value, today.n_rows,
       today.coverage AS observed, today.missing_share,
       window_spread.windows, window_spread.std_error, window_spread.window_coverages,
       history.baseline + coalesce(weekly.weekday_effect, 0) AS baseline,
       coalesce(history.baseline_days, 0) AS baseline_days,
       history.baseline_missing, history.missing_sd * sqrt(1 + 1 / history.baseline_days) AS missing_sd,
       history.missing_df, weekly.weekday_effect,
       coalesce(weekly.residual_sd, history.day_sd) AS day_sd,
       coalesce(weekly.residual_df, history.day_df) AS day_df,
       coalesce(weekly.residual_sd, history.day_sd) * sqrt(1 + 1 / history.baseline_days) AS baseline_sd,
       today.rest_coverage,
       today.coverage / nullif(today.rest_coverage, 0) AS rest_ratio,
       history.rest_ratio * today.rest_coverage AS rest_baseline,
       history.ratio_sd, history.ratio_df,
       history.ratio_sd * today.rest_coverage * sqrt(1 + 1 / history.baseline_days) AS rest_baseline_sd,
       (coalesce(history.recent_sum, 0) + today.coverage)
           / (coalesce(history.recent_days, 0) + 1) AS coverage_ma7,
       coalesce(history.recent_days, 0) + 1 AS days_in_window,
       (coalesce(history.recent_ratio_sum, 0) + today.coverage / nullif(today.rest_coverage, 0))
           / (coalesce(history.recent_ratio_days, 0) + 1) AS ratio_ma7,
       noise.noise_sd, noise.noise_df, noise.ratio_noise_sd, noise.ratio_noise_df,
       reference.reference * coalesce(reference_mix.factor, 1) AS reference, reference.reference_days, reference.rest_reference,
       age_overlap.history_overlap, age_overlap.reference_overlap
FROM recent AS today
JOIN window_spread USING (feature, segment_dim, segment_value)
LEFT JOIN history USING (feature, segment_dim, segment_value)
LEFT JOIN weekly USING (feature, segment_dim, segment_value)
LEFT JOIN noise USING (feature, segment_dim, segment_value)
LEFT JOIN reference USING (feature, segment_dim, segment_value)
LEFT JOIN reference_mix USING (feature, segment_dim, segment_value)
LEFT JOIN age_overlap USING (feature, segment_dim, segment_value)
WHERE today.ds = $ds
ORDER BY today.feature, today.segment_dim, today.segment_value;
