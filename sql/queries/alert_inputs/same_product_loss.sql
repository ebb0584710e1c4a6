-- same_product_loss: how much coverage the same products lost since the reference, beyond
-- their usual change, per product-age segment (the same_products table).
-- Each day's change is the coverage of the products sampled both on it and lag_days before,
-- on it less on that day before. Summed over the days since the reference ended (or since
-- the reference followed a rise, risen_since) and divided by lag_days, the changes telescope
-- to the same products' last lag_days days less their lag_days days before those: what the
-- segment's 7-day average lost on its own products, with no turnover of products in it.
-- Their usual change (new products gain engagement as they age) is the reference days' mean,
-- taken off each day's; the loss is (usual - mean change since) * days since / lag_days, and
-- its sd the reference days' sd of the change * sqrt(changes since) / lag_days.
-- Inputs: risen. Params: $ds, $ref_start, $ref_end.
-- Output: feature, segment_dim, segment_value, same_products_loss, same_products_sd,
-- same_products_days (the reference days with a change: three or more, else no loss).
SELECT feature, segment_dim, segment_value,
       CASE WHEN usual_days >= 3 THEN (usual - avg(change) FILTER (WHERE since))
           * datediff('day', any_value(since_day), $ds) / any_value(lag_days) END AS same_products_loss,
       CASE WHEN usual_days >= 3 THEN usual_sd * sqrt(count(*) FILTER (WHERE since))
           / any_value(lag_days) END AS same_products_sd,
       usual_days AS same_products_days
FROM (SELECT changes.*, changes.ds > changes.since_day AS since,
             avg(change) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end) OVER series AS usual,
             stddev_samp(change) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end) OVER series AS usual_sd,
             count(change) FILTER (WHERE ds BETWEEN $ref_start AND $ref_end) OVER series AS usual_days
      FROM (SELECT same.ds, same.lag_days, same.feature, same.segment_dim, same.segment_value,
                   same.n_covered_now / same.n_rows_now - same.n_covered_then / same.n_rows_then AS change,
                   greatest(CAST($ref_end AS DATE), risen.risen_since) AS since_day
            FROM same_products AS same
            LEFT JOIN risen USING (feature, segment_dim, segment_value)
            WHERE same.ds <= $ds AND same.n_rows_now > 0 AND same.n_rows_then > 0) AS changes
      WINDOW series AS (PARTITION BY feature, segment_dim, segment_value))
GROUP BY feature, segment_dim, segment_value, usual, usual_sd, usual_days
HAVING count(*) FILTER (WHERE since) > 0;
