-- query_bands: the band of each query of a day's sample (head, torso, tail by its share of
-- the sampled events). row_segments.sql takes it as its `bands` (its text fills that
-- file's query_bands placeholder), and the compiled counts (feco.coverage_kernel) read it
-- alone, then label rows by their query.
-- Inputs: the day's sampled events per query (query, n), the day_events placeholder: filled
-- by feco.coverage with query_events.sql over the relation `sample_rows` (the day's sampled
-- rows), or, where the sample step kept them, with a read of the relation `day_events`. The
-- relation `band_history` (query, n) holds the sampled events per query of the days before
-- ds that set the bands with it (empty for bands from the day alone).
-- Params: $head_share, $torso_share.
-- Output: query, band (one row per query with events).
WITH day_events AS (
    {day_events}
),
query_events AS (
    SELECT query, sum(n) AS n
    FROM (SELECT query, n FROM day_events
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
