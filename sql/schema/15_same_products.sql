-- same_products: the coverage of the products sampled both on a day and lag_days before it,
-- per feature and product-age segment (product_age, age_band; segment_value the product age
-- or band on ds), on each of the two days: n_rows_now / n_covered_now are those products' rows
-- and covered rows on ds, n_rows_then / n_covered_then on ds - lag_days. A segment whose
-- products turn over (new products) can change coverage with no product's data changing; the
-- same products' coverage cannot. Counted where the logs carry [logs] product_id.
CREATE TABLE IF NOT EXISTS same_products (
    ds DATE NOT NULL,
    lag_days SMALLINT NOT NULL,
    feature VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    n_products BIGINT NOT NULL,
    n_rows_now BIGINT NOT NULL,
    n_covered_now BIGINT NOT NULL,
    n_rows_then BIGINT NOT NULL,
    n_covered_then BIGINT NOT NULL,
    PRIMARY KEY (ds, lag_days, feature, segment_dim, segment_value)
);
