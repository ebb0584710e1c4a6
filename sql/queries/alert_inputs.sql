-- alert_inputs: everything the coverage alert rules need for one day, one row per feature
-- and segment present that day.
-- Inputs: coverage_states, feco_daily, feature_rules, through one part per relation in
-- sql/queries/alert_inputs/ and sql/queries/shared/ (feco.sql_files.composed puts them before
-- this statement).
-- Params: $ds; $baseline_days (recent days whose level predicts ds); $spread_days (days before
-- ds that give each series' weekly shape and day-to-day spread: longer than the baseline, so
-- one bad day does not dominate); $weekly (learn each weekday's usual level); $outlier_sd
-- (a day further than this many robust sds from its weekday's usual level is left out of the
-- spread, and below it out of the level: what makes the statistics robust to the failures
-- they judge, without reading which days alerted); $ref_start, $ref_end (the frozen reference
-- period, NULL for none); $min_rows (rows a reference day, and a day giving a band's usual
-- level, needs); $ref_min_days (such days a reference needs); $ma_days (the moving average's
-- length); $follow_days (days a rise must hold before the decay's reference follows it);
-- $follow_relative, $follow_absolute (by how much above the reference they must all be);
-- $bands_from (the warehouse's first day, the first with query bands);
-- $new_bands (the age bands of new products); $age_bands (every age band, youngest first);
-- $collapse_share (the collapse rule's share of the lowest earlier day).
--
-- Every statistic of a feature is taken over the days counted under ds's coverage rule only
-- (feature_rules.rule_since): a changed rule starts a new series, judged once it has history.
--
-- Three series per feature and segment are judged: its coverage, its ratio to the rest of
-- traffic (the global counts less its own: NULL for all traffic) and its NULL/NaN share. All
-- traffic and the product-age segments are judged against their previous days as today's mix
-- would have given them: each earlier day's coverage times the ratio of today's to that day's
-- coverage predicted from its rows per age band, and for all traffic per query band (once two
-- weeks of days have query bands), at the
-- bands' usual levels (a batch of new products landing, a weekend's or a holiday's searches
-- going deeper into the tail, changes the mix, not the data's health; an age band no earlier
-- day had is taken at the nearest band's levels, the younger on a tie), and each earlier
-- day's NULL/NaN share plus the difference of the two days' shares so predicted; their
-- reference likewise to the mix of the moving average's days. Every other segment counted in
-- a cross with the query band (product_group x query_band) is judged so at its own query mix,
-- its ratio to the rest at the rest's too. A segment whose mix of ages has
-- little in common with its history's (history_overlap, reference_overlap) is not judged by
-- that history.
--
-- Each series' usual level and spread are robust once every weekday has two days in the
-- spread period ($weekly): a day whose residual from the median of the other days of its
-- weekday is further than $outlier_sd robust sds (1.4826 times those residuals' median
-- absolute deviation) from the others' is left out of the spread and the weekly shape (a
-- failure's days, by their own values, whether or not they alerted), and one below that band
-- out of the level too. The weekly shape is each weekday's mean over the typical days less the
-- mean of the seven; the spread the sd of the typical days' residuals from it, on their number
-- less 7 degrees of freedom; the prediction for ds the mean of the last $baseline_days days not
-- below the band, deseasoned, plus ds's weekday effect, its error the spread times
-- sqrt(1 + 1/n_level + 1/n_weekday) (the level's and the effect's own). A segment whose weekends
-- differ learns it from its weekends. Without a weekly shape (the first two weeks, or $weekly
-- off) every day counts, the spread is their sd around their mean on n - 1 degrees of freedom:
-- a robust scale would take the weekends for outliers.
--
-- Output, per feature and segment:
--   n_rows, observed (coverage on ds), missing_share;
--   windows, std_error (sd of the day's window coverages / sqrt(windows): the windows are
--     clusters, so this is the honest error of the day's value), window_coverages;
--   baseline (coverage predicted for ds), baseline_days (days of the last $baseline_days
--     published),
--     weekday_effect (NULL without the weekly shape), day_sd, day_df (the spread),
--     baseline_sd (day_sd scaled by sqrt(1 + 1/baseline_days): the level has its own error);
--   baseline_missing, missing_sd, missing_df: the same of the NULL/NaN share;
--   rest_coverage (the rest of traffic's coverage on ds), rest_ratio (observed / rest_coverage),
--     rest_baseline (the ratio predicted for ds times rest_coverage, at most 1 and at most
--     the series' own prediction: a rest that rose does not raise what it is expected to hold), ratio_sd,
--     ratio_df, rest_baseline_sd (in coverage units), ratio_weekday_effect (the ratio's, as
--     weekday_effect);
--   yesterday_level, yesterday_ratio_level: the day before ds's coverage and ratio to the rest,
--     at ds's mix, less that day's weekday effect (NULL without that day);
--   history_min (the lowest coverage of the earlier days of the spread period, counted under
--     ds's rule, leaving out days below $collapse_share of their median: a collapsed day is
--     no level) and history_days (how many): a collapse below every earlier day's level;
--   coverage_ma7 (mean daily coverage over the $ma_days calendar days ending at ds, as in the
--     feco_ma7 view), days_in_window, ratio_ma7 (the mean of the daily ratios to the rest);
--   noise_sd, noise_df (the days' own noise, free of a slow trend: from the changes between
--     consecutive kept days of the spread period, deseasoned as the spread is) and
--     ratio_noise_sd, ratio_noise_df, for the decay rule;
--   reference (mean daily coverage over the reference days with at least $min_rows rows),
--     reference_days, rest_reference (the mean of the daily ratios to the rest over those
--     days), scaled to the moving average's days' mix as the history is (for all traffic
--     and the product-age segments their mix of product ages and query bands, for a segment
--     counted in a cross with the query band its query bands and the rest's);
--   risen_reference, risen_rest_reference, risen_since: a rise held since the reference: the
--     mean of the latest $follow_days consecutive days all above the reference by
--     $follow_relative of it and $follow_absolute (the ratio's by the relative margin), and
--     the day the first such run ended (the reference follows from then on);
--   history_overlap, reference_overlap: for all traffic and the product-age segments, the share
--     of ds's rows in age bands the baseline days' (the reference days') mix holds too;
--   same_products_loss, same_products_sd, same_products_days: for the product-age segments,
--     the coverage the same products lost since the reference beyond their usual change
--     (same_product_loss: a cohort of new products turning over loses none).
SELECT today.feature, today.segment_dim, today.segment_value, today.n_rows,
       today.coverage AS observed, today.missing_share,
       window_spread.windows, window_spread.std_error, window_spread.window_coverages,
       least(own.prediction, 1) AS baseline, coalesce(history.baseline_days, 0) AS baseline_days,
       own.effect AS weekday_effect,
       own.sd AS day_sd, own.df AS day_df, own.sd * own.error_factor AS baseline_sd,
       least(greatest(missing.prediction, 0), 1) AS baseline_missing,
       missing.sd * missing.error_factor AS missing_sd, missing.df AS missing_df,
       today.rest_coverage,
       today.coverage / nullif(today.rest_coverage, 0) AS rest_ratio,
       -- capped at the series' own prediction: a rest that rose (a launch in other segments)
       -- is their news, not a loss in this one
       least(ratio.prediction * today.rest_coverage, 1,
             CASE WHEN ratio.prediction IS NOT NULL THEN own.prediction END) AS rest_baseline,
       ratio.sd AS ratio_sd, ratio.df AS ratio_df, ratio.effect AS ratio_weekday_effect,
       history.yesterday_coverage - coalesce(own.yesterday_effect, 0) AS yesterday_level,
       history.yesterday_ratio - coalesce(ratio.yesterday_effect, 0) AS yesterday_ratio_level,
       ratio.sd * today.rest_coverage * ratio.error_factor AS rest_baseline_sd,
       history.history_min, coalesce(history.history_days, 0) AS history_days,
       (coalesce(history.recent_sum, 0) + today.coverage)
           / (coalesce(history.recent_days, 0) + 1) AS coverage_ma7,
       coalesce(history.recent_days, 0) + 1 AS days_in_window,
       (coalesce(history.recent_ratio_sum, 0) + today.coverage / nullif(today.rest_coverage, 0))
           / (coalesce(history.recent_ratio_days, 0) + 1) AS ratio_ma7,
       noise.noise_sd, noise.noise_df, noise.ratio_noise_sd, noise.ratio_noise_df,
       reference.reference * coalesce(reference_mix.factor, 1) AS reference, reference.reference_days,
       reference.rest_reference * coalesce(reference_mix.factor / reference_mix.rest_factor, 1) AS rest_reference,
       risen.risen_reference, risen.risen_rest_reference, risen.risen_since,
       age_overlap.history_overlap, age_overlap.reference_overlap,
       same_product_loss.same_products_loss, same_product_loss.same_products_sd,
       same_product_loss.same_products_days
FROM recent AS today
JOIN window_spread USING (feature, segment_dim, segment_value)
LEFT JOIN predicted AS own
    ON own.feature = today.feature AND own.segment_dim = today.segment_dim
   AND own.segment_value = today.segment_value AND own.series = 'coverage'
LEFT JOIN predicted AS ratio
    ON ratio.feature = today.feature AND ratio.segment_dim = today.segment_dim
   AND ratio.segment_value = today.segment_value AND ratio.series = 'ratio'
LEFT JOIN predicted AS missing
    ON missing.feature = today.feature AND missing.segment_dim = today.segment_dim
   AND missing.segment_value = today.segment_value AND missing.series = 'missing'
LEFT JOIN history USING (feature, segment_dim, segment_value)
LEFT JOIN noise USING (feature, segment_dim, segment_value)
LEFT JOIN reference USING (feature, segment_dim, segment_value)
LEFT JOIN reference_mix USING (feature, segment_dim, segment_value)
LEFT JOIN risen USING (feature, segment_dim, segment_value)
LEFT JOIN age_overlap USING (feature, segment_dim, segment_value)
LEFT JOIN same_product_loss USING (feature, segment_dim, segment_value)
WHERE today.ds = $ds
ORDER BY today.feature, today.segment_dim, today.segment_value;
