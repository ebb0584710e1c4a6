-- query_events: sampled events per query in one day's sample: the day's part of its query
-- bands (query_bands.sql takes it as its day_events) and of the bands of the days after it
-- (feco.sample_folder.sampled_query_events; see segments.band_days).
-- Inputs: the relation `sample_rows`, the day's sampled rows. The placeholders {event_id} and
-- {query} are the team's columns, quoted by feco.
-- Output: query (the column's type), n (sampled events of the query: an event's rows share
-- its query, and an event id is unique within its day).
SELECT {query} AS query, count(DISTINCT {event_id}) AS n
FROM sample_rows
WHERE {query} IS NOT NULL
GROUP BY {query}
