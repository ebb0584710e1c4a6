-- query_bands: the band of each query of a day's sample (head, torso, tail by its share of
-- the sampled events). Runs unchanged in DuckDB and in Spark SQL: row_segments.sql takes it
-- as its `bands` (its text fills that file's query_bands placeholder), and the compiled
-- counts (feco.coverage_kernel) read it alone, then label rows by their query.
-- Inputs: the relation `sample_rows`, one day's sampled rows; the event_id and query
-- placeholders are filled by feco.coverage with the team's columns, quoted (the query as
-- CAST(NULL AS STRING) when no segment uses query bands). The relation `band_history`
-- (query, n) holds the sampled events per query of the days before ds that set the bands
-- with it (empty for bands from the day alone).
-- Params: $head_share, $torso_share.
-- Output: query, band (one row per query with events).
WITH events AS (
    SELECT DISTINCT {event_id} AS event_id, {query} AS query FROM sample_rows
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
)
SELECT query,
       CASE WHEN share_before < $head_share THEN 'head'
            WHEN share_before < $head_share + $torso_share THEN 'torso'
            ELSE 'tail' END AS band
FROM ranked;
