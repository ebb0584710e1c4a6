-- coverage_states: mergeable counts per day, window, feature and segment.
-- Counts are over rows (query-product pairs) of sampled events. A value is present when it
-- is neither NULL nor NaN; covered when present and passing the feature's coverage rule.
-- The global segment is ('all', 'all'); crosses join dimension names and values with ' x '.
-- Ratios are never stored: views derive them, so days and segments merge exactly.
-- window_index: the sampling window, 0-based (`window` before migration 031: WINDOW is an SQL
-- keyword), as in sample_windows.
CREATE TABLE IF NOT EXISTS coverage_states (
    ds DATE NOT NULL,
    window_index SMALLINT NOT NULL,
    feature VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    n_rows BIGINT NOT NULL,
    n_present BIGINT NOT NULL,
    n_covered BIGINT NOT NULL,
    PRIMARY KEY (ds, window_index, feature, segment_dim, segment_value)
);
