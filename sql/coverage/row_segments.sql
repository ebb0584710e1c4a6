-- row_segments: every sampled row with the segment values coverage counts it under.
-- Runs unchanged in DuckDB and in Spark SQL. finest_counts groups these rows; the ranker
-- labels the rows it explains (SHAP per segment) and replays (incident costs) with them.
-- Inputs: the relation `sample_rows`, one day's sampled rows. The canonical_columns
-- placeholder is filled by feco.coverage with the columns read, under fixed names: event_id,
-- raw_query, raw_product_group, raw_region, raw_first_seen (the team's columns, quoted, or
-- NULL when no segment uses them), then whatever the caller carries through (the "window"
-- and the features as v0..vN for the counts, a row number for the ranker).
-- The relation `band_history` (query, n) holds the sampled events per query of the days
-- before ds that set the bands with it (empty for bands from the day alone).
-- Params: $head_share, $torso_share (query bands by share of those sampled events);
-- $new_since (a product first seen after it is new); $age_since_0.. (the age bands' edges as
-- first-seen dates, youngest first: the age_bands placeholder is filled by feco.coverage with
-- the CASE that names each band).
-- Output: the canonical columns, then product_group, region, query_band, product_age,
-- age_band (NULL segment values read 'unknown').
WITH sample AS (
    SELECT {canonical_columns}
    FROM sample_rows
),
events AS (
    SELECT DISTINCT event_id, raw_query AS query FROM sample
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
SELECT sample.*,
       coalesce(CAST(sample.raw_product_group AS STRING), 'unknown') AS product_group,
       coalesce(CAST(sample.raw_region AS STRING), 'unknown') AS region,
       coalesce(bands.band, 'unknown') AS query_band,
       CASE WHEN sample.raw_first_seen IS NULL THEN 'unknown'
            WHEN CAST(sample.raw_first_seen AS DATE) > $new_since THEN 'new'
            ELSE 'established' END AS product_age,
       {age_bands} AS age_band
FROM sample
LEFT JOIN bands ON bands.query = sample.raw_query;
