-- same_products: per product-age segment, the coverage of the products sampled both on a day
-- and LAG_DAYS (feco.same_products) before it, on each of the two days (the rows of the same
-- products: a segment whose products turn over keeps its coverage on them unless their data
-- changed).
-- Inputs: the rows of row_segments.sql over the day's `sample_rows` (its text fills the
-- row_segments placeholder), carrying product_key and the features as v0..vN; the relation
-- `earlier_sample_rows`, the earlier day's rows, read through the earlier_columns placeholder
-- (filled with the product column as product_key and the features as v0..vN, as for the day).
-- The covered_counts placeholder is filled by feco.same_products with, per feature I,
-- `count_if(vI <op> $tI) AS cI` (the feature's coverage rule, as finest_counts.sql counts
-- it), and summed_counts with `sum(today.cI) AS now_cI, sum(earlier.cI) AS then_cI`.
-- Params: row_segments.sql's, and $t0..$tN.
-- Output: product_age, age_band, n_products, n_rows_now, n_rows_then, then per feature I
-- now_cI and then_cI (the covered rows of those products on each day).
WITH today AS (
    SELECT product_key, product_age, age_band, count(*) AS n_rows, {covered_counts}
    FROM ({row_segments}) AS segmented
    WHERE product_key IS NOT NULL
    GROUP BY ALL
),
earlier AS (
    SELECT product_key, count(*) AS n_rows, {covered_counts}
    FROM (SELECT {earlier_columns} FROM earlier_sample_rows) AS earlier_rows
    WHERE product_key IS NOT NULL
    GROUP BY product_key
)
SELECT today.product_age, today.age_band, count(*) AS n_products,
       sum(today.n_rows) AS n_rows_now, sum(earlier.n_rows) AS n_rows_then,
       {summed_counts}
FROM today
JOIN earlier USING (product_key)
GROUP BY ALL;
