-- shap_daily: the attribution of the model that scored a day (ranker_daily.run_id), per
-- feature and segment of the day's sample (feco.ranker.attribution; the `score` step).
-- Exact TreeSHAP values of the explained rows (feco.ranker.attribution): all traffic and the
-- segments that cannot page take the [ranker] shap_rows rows with the lowest seeded draws of
-- the day (those that fall in them), each segment that can page its own shap_segment_rows
-- rows with the lowest draws within it (rows_explained of rows_sampled, the segment's rows
-- explained of the day's sampled rows). Sums and counts, so segments and days
-- merge: mean |SHAP| = abs_shap_sum / rows_explained, and the feature's share of the
-- segment's attribution is its abs_shap_sum over the sum of all features' (view
-- shap_daily_share). Segments as in
-- coverage_states (every configured dimension and cross, and ('all', 'all')).
CREATE TABLE IF NOT EXISTS shap_daily (
    ds DATE NOT NULL,
    run_id VARCHAR NOT NULL,
    feature VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    rows_sampled BIGINT NOT NULL,
    rows_explained BIGINT NOT NULL,
    abs_shap_sum DOUBLE NOT NULL,
    PRIMARY KEY (ds, feature, segment_dim, segment_value)
);
