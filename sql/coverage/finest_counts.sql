-- finest_counts: coverage counts of one day's sample at the finest segment grain.
-- Runs unchanged in DuckDB (feco.coverage) and in Spark SQL (feco.spark_engine).
-- Inputs: the relation `sample_rows`, the day's sampled rows with their "window" column.
-- The canonical_columns placeholder is filled by feco.coverage with the columns the counts
-- read, under fixed names: event_id, query, product_group, region, product_first_seen (the
-- team's columns, quoted, or NULL when no segment uses them) and the features as v0..vN
-- (NaN turned into NULL, so count(vI) counts present values).
-- The relation `band_history` (query, n) holds the sampled events per query of the days
-- before ds that set the bands with it (empty for bands from the day alone).
-- Params: $head_share, $torso_share (query bands by share of those sampled events);
-- $new_since (a product first seen after it is new); $t0..$tN (each feature's threshold).
-- The feature_counts placeholder is filled by feco.coverage with, per feature I,
-- `count(vI) AS pI, count_if(vI <op> $tI) AS cI`, where <op> is the feature's rule (> or !=).
-- Output: "window", product_group, region, query_band, product_age, n_rows, p0, c0, ...
-- NULL segment values read 'unknown'; every other grain is a sum of these rows.
WITH sample AS (
    SELECT {canonical_columns}
    FROM sample_rows
),
events AS (
    SELECT DISTINCT event_id, query FROM sample
),
query_events AS (
    SELECT query, sum(n) AS n
    FROM (SELECT query, count(*) AS n FROM events WHERE query IS NOT NULL GROUP BY query
          UNION ALL
          SELECT query, n FROM band_history)
    GROUP BY query
),
ranked AS (
    SELECT query,
           (sum(n) OVER (ORDER BY n DESC, query ROWS UNBOUNDED PRECEDING) - n) / sum(n) OVER ()
               AS share_before
    FROM query_events
),
bands AS (
    SELECT query,
           CASE WHEN share_before < $head_share THEN 'head'
                WHEN share_before < $head_share + $torso_share THEN 'torso'
                ELSE 'tail' END AS band
    FROM ranked
)
SELECT sample."window",
       coalesce(CAST(sample.product_group AS STRING), 'unknown') AS product_group,
       coalesce(CAST(sample.region AS STRING), 'unknown') AS region,
       coalesce(bands.band, 'unknown') AS query_band,
       CASE WHEN sample.product_first_seen IS NULL THEN 'unknown'
            WHEN CAST(sample.product_first_seen AS DATE) > $new_since THEN 'new'
            ELSE 'established' END AS product_age,
       count(*) AS n_rows,
       {feature_counts}
FROM sample
LEFT JOIN bands ON bands.query = sample.query
GROUP BY ALL;
