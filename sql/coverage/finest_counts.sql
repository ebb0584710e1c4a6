-- finest_counts: coverage counts of one day's sample at the finest segment grain.
-- Inputs: the rows of row_segments.sql (its text fills the row_segments placeholder, with
-- the "window" and the features as v0..vN carried through: NaN turned into NULL, so count(vI)
-- counts present values), and so its relations `sample_rows` and `band_history`.
-- Params: row_segments.sql's, and $t0..$tN (each feature's threshold).
-- The feature_counts placeholder is filled by feco.coverage with, per feature I,
-- `count(vI) AS pI, count_if(vI <op> $tI) AS cI`, where <op> is the feature's rule (> or !=).
-- The dimensions placeholder is filled with the segment dimensions' names (feco.dimensions:
-- product_group, region, query_band, product_age, age_band), the columns row_segments.sql gives.
-- Output: "window", the dimensions, n_rows, p0, c0, ...
-- Every other grain is a sum of these rows.
SELECT "window", {dimensions},
       count(*) AS n_rows,
       {feature_counts}
FROM ({row_segments}) AS segmented
GROUP BY ALL;
