-- kept: which days are typical (the spread, the weekly shape) and which are not low (the level).
-- Days within $outlier_sd robust sds (1.4826 times the median absolute deviation of those
-- residuals) give the spread and the weekly shape; days not below that band give the level.
-- Without a weekly shape every day counts: a robust scale would take the weekends for outliers.
-- Inputs: loo. Params: $outlier_sd.
-- Output: the columns of loo, median_residual, robust_sd, typical, not_low.
SELECT *,
       NOT weekly_possible OR abs(loo_residual - median_residual) <= $outlier_sd * robust_sd AS typical,
       NOT weekly_possible OR loo_residual - median_residual >= -$outlier_sd * robust_sd AS not_low
FROM (SELECT *, 1.4826 * median(abs(loo_residual - median_residual)) OVER series AS robust_sd
      FROM (SELECT *, median(loo_residual) OVER series AS median_residual FROM loo
            WINDOW series AS (PARTITION BY feature, segment_dim, segment_value, series))
      WINDOW series AS (PARTITION BY feature, segment_dim, segment_value, series));
