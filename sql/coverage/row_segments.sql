-- row_segments: every sampled row with the segment values coverage counts it under.
-- finest_counts groups these rows; the ranker labels the rows it explains (SHAP per
-- segment) and replays (incident costs) with them.
-- Inputs: the relation `sample_rows`, one day's sampled rows. The canonical_columns
-- placeholder is filled by feco.coverage with the columns read, under fixed names: event_id,
-- and raw_<key> for the [logs] key of each segment dimension (feco.dimensions: raw_product_group,
-- raw_region, raw_query, raw_product_first_seen; the team's columns, quoted, or NULL when no
-- segment uses them), then whatever the caller carries through (the "window" and the
-- features as v0..vN for the counts, a row number for the ranker).
-- The query_bands placeholder is filled with query_bands.sql (each query's band, from
-- `sample_rows` and `band_history`).
-- Params: query_bands.sql's ($head_share, $torso_share); $new_since (a product first seen
-- after it is new); $age_since_0.. (the age bands' edges as first-seen dates, youngest
-- first: the age_bands placeholder is filled by feco.coverage with the CASE that names
-- each band). The column_dimensions placeholder is filled with the dimensions whose values
-- are a column's own (product_group, region), each as
-- `coalesce(nfc_normalize(CAST(sample.raw_<key> AS STRING)), 'unknown') AS <name>,`.
-- Output: the canonical columns, then every dimension: product_group, region, query_band,
-- product_age, age_band (NULL segment values read 'unknown'; the values read are
-- NFC-normalised, so a composed and a decomposed 'Österreich' are one segment, as
-- feco.coverage_kernel counts them).
WITH sample AS (
    SELECT {canonical_columns}
    FROM sample_rows
),
bands AS (
    {query_bands}
)
SELECT sample.*,
       {column_dimensions}
       coalesce(bands.band, 'unknown') AS query_band,
       CASE WHEN sample.raw_product_first_seen IS NULL THEN 'unknown'
            WHEN CAST(sample.raw_product_first_seen AS DATE) > $new_since THEN 'new'
            ELSE 'established' END AS product_age,
       {age_bands} AS age_band
FROM sample
LEFT JOIN bands ON bands.query = sample.raw_query;
