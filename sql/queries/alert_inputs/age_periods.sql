-- age_periods: rows per age band on $ds, over the baseline days and over the reference days.
-- Rows per age band on ds, over the baseline days and over the reference days: a segment
-- whose products are of other ages than in its history (a monthly batch of new products
-- replacing the last) is not the segment its history describes.
-- Inputs: band_days. Params: $ds, $baseline_days, $ref_start, $ref_end.
-- Output: period ('today', 'baseline', 'reference'), ds, feature, band, n_rows.
SELECT CASE WHEN ds = $ds THEN 'today' ELSE 'baseline' END AS period, ds, feature, band, n_rows
FROM band_days
WHERE dim = 'age_band' AND ds BETWEEN $ds - to_days($baseline_days) AND $ds
UNION ALL
SELECT 'reference', ds, feature, band, n_rows
FROM band_days
WHERE dim = 'age_band' AND ds BETWEEN $ref_start AND $ref_end;
