-- feco_daily: coverage per day, feature and segment, merged over the day's windows.
-- Inputs: coverage_states. Output: ds, feature, segment_dim, segment_value, n_rows,
-- n_present, n_covered, coverage (= n_covered / n_rows: the FeCo score, share of rows in
-- which the feature is covered), missing_share (= 1 - n_present / n_rows: NULL or NaN).
CREATE OR REPLACE VIEW feco_daily AS
WITH merged AS (
    SELECT ds, feature, segment_dim, segment_value,
           sum(n_rows)::BIGINT AS n_rows, sum(n_present)::BIGINT AS n_present,
           sum(n_covered)::BIGINT AS n_covered
    FROM coverage_states
    GROUP BY ds, feature, segment_dim, segment_value
)
SELECT ds, feature, segment_dim, segment_value, n_rows, n_present, n_covered,
       n_covered / nullif(n_rows, 0) AS coverage,
       1 - n_present / nullif(n_rows, 0) AS missing_share
FROM merged;
