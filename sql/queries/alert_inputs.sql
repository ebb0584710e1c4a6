-- alert_inputs: everything the coverage alert rules need for one day, one row per feature
-- and segment present that day.
-- Inputs: coverage_states, feco_daily, feature_rules.
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
-- $bands_from (the first day whose query bands were drawn from their whole window of days);
-- $new_bands (the age bands of new products); $age_bands (every age band, youngest first).
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
-- reference likewise to the mix of the moving average's days. A segment whose mix of ages has
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
--     ratio_df, rest_baseline_sd (in coverage units);
--   history_min (the lowest coverage of the earlier days of the spread period, counted under
--     ds's rule) and history_days (how many): a collapse below every earlier day's level;
--   coverage_ma7 (mean daily coverage over the $ma_days calendar days ending at ds, as in the
--     feco_ma7 view), days_in_window, ratio_ma7 (the mean of the daily ratios to the rest);
--   noise_sd, noise_df (the days' own noise, free of a slow trend: from the changes between
--     consecutive kept days of the spread period, deseasoned as the spread is) and
--     ratio_noise_sd, ratio_noise_df, for the decay rule;
--   reference (mean daily coverage over the reference days with at least $min_rows rows, from
--     $bands_from on for query-band segments), reference_days, rest_reference (the mean of the
--     daily ratios to the rest over those days), scaled for all traffic and the product-age
--     segments to the mix of product ages of the moving average's days;
--   risen_reference, risen_rest_reference, risen_since: a rise held since the reference: the
--     mean of the latest $follow_days consecutive days all above the reference by
--     $follow_relative of it and $follow_absolute (the ratio's by the relative margin), and
--     the day the first such run ended (the reference follows from then on);
--   history_overlap, reference_overlap: for all traffic and the product-age segments, the share
--     of ds's rows in age bands the baseline days' (the reference days') mix holds too.
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
    SELECT feature, segment_dim, segment_value, window_index,
           n_covered / nullif(n_rows, 0) AS coverage
    FROM coverage_states
    WHERE ds = $ds
),
window_spread AS (
    SELECT feature, segment_dim, segment_value,
           count(coverage) AS windows,
           stddev_samp(coverage) / sqrt(count(coverage)) AS std_error,
           list(coverage ORDER BY window_index) AS window_coverages
    FROM day_windows
    GROUP BY feature, segment_dim, segment_value
),
band_days AS (
    -- Each age band's and query band's coverage on the days the history needs.
    SELECT ds, feature, segment_dim AS dim, segment_value AS band, n_rows, coverage, missing_share,
           CASE WHEN list_contains($new_bands, segment_value) THEN 'new' ELSE 'established' END AS age
    FROM daily
    -- Query bands only once two weeks of days have them: every day of all traffic's series is
    -- then scaled by both mixes (the days before $bands_from leave the series), and before
    -- that by the age mix alone; a series scaled on some days and not on others is no series.
    WHERE (segment_dim = 'age_band'
           OR segment_dim = 'query_band' AND ds >= $bands_from AND $ds >= $bands_from + to_days(14))
      AND segment_value <> 'unknown'
      AND (ds BETWEEN $ds - to_days(greatest($baseline_days, $spread_days, $ma_days)) AND $ds
           OR ds BETWEEN $ref_start AND $ref_end)
),
seen_levels AS (
    SELECT feature, dim, band, avg(coverage) AS level, avg(missing_share) AS missing_level
    FROM band_days
    WHERE ds < $ds AND n_rows >= $min_rows
    GROUP BY feature, dim, band
),
band_order AS (
    SELECT unnest($age_bands) AS band, unnest(range(len($age_bands))) AS position
),
unseen_levels AS (
    -- An age band of ds that no earlier day had (the first batch of new products since the
    -- history began) at the levels of the nearest band seen, the younger on a tie: products a
    -- day old taken for the youngest seen, a guess nearer than leaving their rows out; on a
    -- batch's second day the younger band held the same products the day before.
    SELECT today.feature, 'age_band' AS dim, today.band,
           arg_min(seen.level, abs(seen_order.position - today_order.position) * 2
                               - CAST(seen_order.position < today_order.position AS INTEGER)) AS level,
           arg_min(seen.missing_level, abs(seen_order.position - today_order.position) * 2
                                       - CAST(seen_order.position < today_order.position AS INTEGER)) AS missing_level
    FROM (SELECT DISTINCT feature, band FROM band_days WHERE ds = $ds AND dim = 'age_band') AS today
    JOIN band_order AS today_order ON today_order.band = today.band
    JOIN seen_levels AS seen ON seen.feature = today.feature AND seen.dim = 'age_band'
    JOIN band_order AS seen_order ON seen_order.band = seen.band
    ANTI JOIN seen_levels AS own ON own.feature = today.feature AND own.dim = 'age_band' AND own.band = today.band
    GROUP BY today.feature, today.band
),
band_levels AS (
    SELECT * FROM seen_levels
    UNION ALL BY NAME
    SELECT * FROM unseen_levels
),
mixes AS (
    -- Each day's coverage and NULL/NaN share as its mix predicts them at the bands' usual
    -- levels: all traffic by age band and by query band, new and established products by age
    -- band (bands seen before only).
    SELECT ds, feature, dim, segment_dim, segment_value, sum(n_rows * level) / nullif(sum(n_rows), 0) AS mix,
           sum(n_rows * missing_level) / nullif(sum(n_rows), 0) AS missing_mix
    FROM (SELECT ds, feature, dim, 'all' AS segment_dim, 'all' AS segment_value, n_rows, level, missing_level
          FROM band_days JOIN band_levels USING (feature, dim, band)
          UNION ALL
          SELECT ds, feature, dim, 'product_age', age, n_rows, level, missing_level
          FROM band_days JOIN band_levels USING (feature, dim, band)
          WHERE dim = 'age_band')
    GROUP BY ALL
),
mix_factors AS (
    -- Scales a day's coverage to ds's mix (the age and the query-band factors multiply), and
    -- shifts its NULL/NaN share so.
    SELECT day.ds, day.feature, day.segment_dim, day.segment_value,
           exp(sum(ln(today.mix / day.mix))) AS factor,
           sum(today.missing_mix - day.missing_mix) AS missing_shift
    FROM mixes AS day
    JOIN mixes AS today
        ON today.ds = $ds AND today.feature = day.feature AND today.dim = day.dim
       AND today.segment_dim = day.segment_dim AND today.segment_value = day.segment_value
    WHERE day.mix > 0 AND today.mix > 0
    GROUP BY ALL
),
age_mix AS (
    SELECT ds, feature, segment_dim, segment_value, mix FROM mixes WHERE dim = 'age_band'
),
reference_mix AS (
    -- Scales the reference to the mix of product ages of the moving average's days.
    SELECT feature, segment_dim, segment_value,
           avg(mix) FILTER (WHERE ds > $ds - to_days($ma_days))
               / nullif(avg(mix) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end), 0) AS factor
    FROM age_mix
    GROUP BY ALL
),
recent AS (
    -- The days the history needs and ds itself, each segment with the coverage of the rest
    -- of traffic that day (the global counts less the segment's) and, for all traffic and the
    -- product-age segments, its coverage and NULL/NaN share as they would have been with ds's
    -- mix (as_today, missing_as_today; the plain ones elsewhere).
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
series_days AS (
    -- The earlier days of the spread period, one row per series: coverage, ratio, missing.
    SELECT ds, feature, segment_dim, segment_value, series, value
    FROM (SELECT ds, feature, segment_dim, segment_value, as_today AS coverage,
                 as_today / nullif(rest_coverage, 0) AS ratio, missing_as_today AS missing
          FROM recent
          WHERE ds < $ds AND ds >= $ds - to_days($spread_days)
            AND NOT (segment_dim = 'all' AND ds < $bands_from AND $ds >= $bands_from + to_days(14)))
    UNPIVOT (value FOR series IN (coverage, ratio, missing))
),
possible_weeks AS (
    -- Series with two days of every weekday in the spread period: their weekly shape can be learnt.
    SELECT feature, segment_dim, segment_value, series
    FROM (SELECT feature, segment_dim, segment_value, series, isodow(ds) AS weekday, count(*) AS days
          FROM series_days GROUP BY ALL)
    WHERE $weekly
    GROUP BY ALL
    HAVING count(*) FILTER (WHERE days >= 2) = 7
),
loo AS (
    -- Each day's residual from the median of the other days of its weekday (of all the other
    -- days without a weekly shape): a day is never its own yardstick, so its residual is 0 by
    -- construction for none of them.
    SELECT days.*, weeks.series IS NOT NULL AS weekly_possible,
           days.value - list_aggregate(list_concat(list_slice(peers, 1, position - 1),
                                                   list_slice(peers, position + 1, len(peers))), 'median') AS loo_residual
    FROM (SELECT *,
                 list(value ORDER BY value) OVER peers AS peers,
                 row_number() OVER (peers ORDER BY value) AS position
          FROM (SELECT series_days.*, CASE WHEN weeks.series IS NULL THEN 0 ELSE isodow(series_days.ds) END AS peer_group
                FROM series_days
                LEFT JOIN possible_weeks AS weeks USING (feature, segment_dim, segment_value, series))
          WINDOW peers AS (PARTITION BY feature, segment_dim, segment_value, series, peer_group)) AS days
    LEFT JOIN possible_weeks AS weeks USING (feature, segment_dim, segment_value, series)
),
kept AS (
    -- Days within $outlier_sd robust sds (1.4826 times the median absolute deviation of those
    -- residuals) give the spread and the weekly shape; days not below that band give the level.
    -- Without a weekly shape every day counts: a robust scale would take the weekends for outliers.
    SELECT *,
           NOT weekly_possible OR abs(loo_residual - median_residual) <= $outlier_sd * robust_sd AS typical,
           NOT weekly_possible OR loo_residual - median_residual >= -$outlier_sd * robust_sd AS not_low
    FROM (SELECT *, 1.4826 * median(abs(loo_residual - median_residual)) OVER series AS robust_sd
          FROM (SELECT *, median(loo_residual) OVER series AS median_residual FROM loo
                WINDOW series AS (PARTITION BY feature, segment_dim, segment_value, series))
          WINDOW series AS (PARTITION BY feature, segment_dim, segment_value, series))
),
weekday_levels AS (
    SELECT feature, segment_dim, segment_value, series, isodow(ds) AS weekday,
           avg(value) FILTER (WHERE typical) AS level, count(*) FILTER (WHERE typical) AS days
    FROM kept
    WHERE weekly_possible
    GROUP BY ALL
),
weekly AS (
    -- A weekday's effect: the mean of its typical days less the mean of the seven, where
    -- every weekday has a typical day (of the two or more it has: a weekday whose days differ
    -- keeps its shape from the typical one, its effect's error the larger for it).
    SELECT feature, segment_dim, segment_value, series, weekday, days,
           level - avg(level) OVER series AS effect
    FROM weekday_levels
    WINDOW series AS (PARTITION BY feature, segment_dim, segment_value, series)
    QUALIFY count(*) FILTER (WHERE days >= 1) OVER series = 7
),
deseasoned AS (
    SELECT kept.*, weekly.effect IS NOT NULL AS weekly_shape,
           kept.value - coalesce(weekly.effect, 0) AS level_value,
           kept.value - coalesce(weekly.effect, 0)
               - avg(kept.value - coalesce(weekly.effect, 0)) FILTER (WHERE kept.typical) OVER series AS residual
    FROM kept
    LEFT JOIN weekly
        ON weekly.feature = kept.feature AND weekly.segment_dim = kept.segment_dim
       AND weekly.segment_value = kept.segment_value AND weekly.series = kept.series
       AND weekly.weekday = isodow(kept.ds)
    WINDOW series AS (PARTITION BY kept.feature, kept.segment_dim, kept.segment_value, kept.series)
),
levels AS (
    -- Without a recent day at its usual level (a failure lasting the whole baseline), the
    -- level of the spread period's typical days.
    SELECT feature, segment_dim, segment_value, series,
           coalesce(avg(level_value) FILTER (WHERE not_low AND ds >= $ds - to_days($baseline_days)),
                    avg(level_value) FILTER (WHERE typical)) AS level,
           greatest(count(*) FILTER (WHERE not_low AND ds >= $ds - to_days($baseline_days)), 1) AS level_days,
           sqrt(sum(residual ^ 2) FILTER (WHERE typical)
                / nullif(count(*) FILTER (WHERE typical) - CASE WHEN bool_or(weekly_shape) THEN 7 ELSE 1 END, 0))
               AS sd,
           count(*) FILTER (WHERE typical) - CASE WHEN bool_or(weekly_shape) THEN 7 ELSE 1 END AS df
    FROM deseasoned
    GROUP BY ALL
),
predicted AS (
    -- Each series' prediction for ds: its recent level plus ds's weekday effect, and the error
    -- of that prediction in units of the spread (the level's, and the effect's: a mean of a
    -- few days of that weekday).
    SELECT levels.*, levels.level + coalesce(today.effect, 0) AS prediction, today.effect AS effect,
           sqrt(1 + 1 / levels.level_days + coalesce(1 / today.days, 0)) AS error_factor
    FROM levels
    LEFT JOIN weekly AS today
        ON today.feature = levels.feature AND today.segment_dim = levels.segment_dim
       AND today.segment_value = levels.segment_value AND today.series = levels.series
       AND today.weekday = isodow($ds)
),
noise AS (
    -- The days' own noise free of a slow trend: half the mean squared change between
    -- consecutive typical days (deseasoned; von Neumann's estimator, about 2/3 as efficient as a
    -- sample variance), for the decay rule, whose 7-day average a decline under way would
    -- otherwise seem to vary by. Of the plain coverage and ratio, as the decay judges them.
    SELECT feature, segment_dim, segment_value,
           sqrt(avg(change ^ 2) FILTER (WHERE series = 'coverage') / 2) AS noise_sd,
           count(change) FILTER (WHERE series = 'coverage') * 2 / 3 AS noise_df,
           sqrt(avg(change ^ 2) FILTER (WHERE series = 'ratio') / 2) AS ratio_noise_sd,
           count(change) FILTER (WHERE series = 'ratio') * 2 / 3 AS ratio_noise_df
    FROM (SELECT feature, segment_dim, segment_value, series,
                 CASE WHEN ds - lag(ds) OVER days = 1 THEN level_value - lag(level_value) OVER days END AS change
          FROM deseasoned
          WHERE typical AND series <> 'missing'
          WINDOW days AS (PARTITION BY feature, segment_dim, segment_value, series ORDER BY ds))
    GROUP BY ALL
),
history AS (
    -- The earlier days' lowest coverage, and the moving average's days before ds.
    SELECT feature, segment_dim, segment_value,
           count(*) FILTER (WHERE ds >= $ds - to_days($baseline_days)) AS baseline_days,
           min(coverage) FILTER (WHERE ds >= $ds - to_days($spread_days)) AS history_min,
           count(*) FILTER (WHERE ds >= $ds - to_days($spread_days)) AS history_days,
           sum(coverage) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_sum,
           count(coverage) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_days,
           sum(coverage / nullif(rest_coverage, 0)) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_ratio_sum,
           count(coverage / nullif(rest_coverage, 0)) FILTER (WHERE ds > $ds - to_days($ma_days)) AS recent_ratio_days
    FROM recent
    WHERE ds < $ds
    GROUP BY ALL
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
reference AS (
    SELECT feature, segment_dim, segment_value,
           CASE WHEN count(*) >= $ref_min_days THEN avg(coverage) END AS reference,
           CASE WHEN count(rest_ratio) >= $ref_min_days THEN avg(rest_ratio) END AS rest_reference,
           count(*) AS reference_days
    FROM reference_days
    WHERE n_rows >= $min_rows AND (ds >= $bands_from OR segment_dim NOT LIKE '%query_band%')
    GROUP BY feature, segment_dim, segment_value
),
risen AS (
    -- Where every day of a run of $follow_days consecutive days (before ds, after the reference)
    -- was above the reference by both margins, per series: a launch or a rollout filling in, a
    -- level the decay's reference follows up. The latest such run's mean, and the day the
    -- first such run ended (when the reference moved).
    SELECT feature, segment_dim, segment_value,
           arg_max(block_mean, ds) FILTER (WHERE coverage_rose) AS risen_reference,
           arg_max(block_ratio_mean, ds) FILTER (WHERE ratio_rose) AS risen_rest_reference,
           min(ds) FILTER (WHERE coverage_rose) AS risen_since
    FROM (SELECT *,
                 block_days = $follow_days AND block_min >= reference * (1 + $follow_relative)
                     AND block_min >= reference + $follow_absolute AS coverage_rose,
                 block_days = $follow_days AND block_ratio_min >= rest_reference * (1 + $follow_relative) AS ratio_rose
          FROM (SELECT recent.ds, recent.feature, recent.segment_dim, recent.segment_value, reference.reference,
                       reference.rest_reference,
                       count(*) OVER block AS block_days,
                       min(recent.coverage) OVER block AS block_min, avg(recent.coverage) OVER block AS block_mean,
                       min(recent.coverage / nullif(recent.rest_coverage, 0)) OVER block AS block_ratio_min,
                       avg(recent.coverage / nullif(recent.rest_coverage, 0)) OVER block AS block_ratio_mean
                FROM recent
                JOIN reference USING (feature, segment_dim, segment_value)
                WHERE recent.ds < $ds AND recent.ds > $ref_end
                WINDOW block AS (PARTITION BY recent.feature, recent.segment_dim, recent.segment_value
                                 ORDER BY recent.ds
                                 RANGE BETWEEN INTERVAL ($follow_days - 1) DAY PRECEDING AND CURRENT ROW)))
    GROUP BY ALL
),
age_periods AS (
    -- Rows per age band on ds, over the baseline days and over the reference days: a segment
    -- whose products are of other ages than in its history (a monthly batch of new products
    -- replacing the last) is not the segment its history describes.
    SELECT CASE WHEN ds = $ds THEN 'today' ELSE 'baseline' END AS period, ds, feature, band, n_rows
    FROM band_days
    WHERE dim = 'age_band' AND ds BETWEEN $ds - to_days($baseline_days) AND $ds
    UNION ALL
    SELECT 'reference', ds, feature, band, n_rows
    FROM band_days
    WHERE dim = 'age_band' AND ds BETWEEN $ref_start AND $ref_end
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
)
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
       ratio.sd AS ratio_sd, ratio.df AS ratio_df,
       ratio.sd * today.rest_coverage * ratio.error_factor AS rest_baseline_sd,
       history.history_min, coalesce(history.history_days, 0) AS history_days,
       (coalesce(history.recent_sum, 0) + today.coverage)
           / (coalesce(history.recent_days, 0) + 1) AS coverage_ma7,
       coalesce(history.recent_days, 0) + 1 AS days_in_window,
       (coalesce(history.recent_ratio_sum, 0) + today.coverage / nullif(today.rest_coverage, 0))
           / (coalesce(history.recent_ratio_days, 0) + 1) AS ratio_ma7,
       noise.noise_sd, noise.noise_df, noise.ratio_noise_sd, noise.ratio_noise_df,
       reference.reference * coalesce(reference_mix.factor, 1) AS reference, reference.reference_days,
       reference.rest_reference,
       risen.risen_reference, risen.risen_rest_reference, risen.risen_since,
       age_overlap.history_overlap, age_overlap.reference_overlap
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
WHERE today.ds = $ds
ORDER BY today.feature, today.segment_dim, today.segment_value;
