-- ndcg_at_risk: what the day's coverage costs the model serving it (feco.ranker.at_risk; the
-- publish step, every day a model serves). Every coverage deficit of the model's features on
-- ds against the reference days (reference_start to reference_end: the last published days
-- before ds, after the model's training when known, on which no feature alerted anywhere),
-- measured per [ranker] segments value (region) and applied together to up to
-- [alerts.severity] events clean events of those days, each event losing its own region's
-- deficits, in `draws` draws of the rows hit; scored with the model (run_id) before and after.
-- Per segment ('all', 'all' and each region): features and loss_shares (the segment's
-- deficits: the share of covered rows lost; all traffic's as measured there), events (those
-- with a relevant row, feco's convention), ndcg8_sum (their NDCG@8 before), d_ndcg8_sum (the
-- sum over events of the change, averaged over draws; NDCG at risk = d_ndcg8_sum / events,
-- view ndcg_at_risk_daily) and d_ndcg8_low / d_ndcg8_high (95% percentile interval of that
-- mean over resampled events and draws).
CREATE TABLE IF NOT EXISTS ndcg_at_risk (
    ds DATE NOT NULL,
    run_id VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    reference_start DATE NOT NULL,
    reference_end DATE NOT NULL,
    reference_days INTEGER NOT NULL,
    features VARCHAR[] NOT NULL,
    loss_shares DOUBLE[] NOT NULL,
    events BIGINT NOT NULL,
    draws INTEGER NOT NULL,
    ndcg8_sum DOUBLE NOT NULL,
    d_ndcg8_sum DOUBLE NOT NULL,
    d_ndcg8_low DOUBLE,
    d_ndcg8_high DOUBLE,
    PRIMARY KEY (ds, segment_dim, segment_value)
);
