-- incident_costs: what an incident costs the ranker, replayed (feco.ranker.replay; the
-- `detect` step, on the days an incident opens or its loss grows past the last one replayed).
-- The reference is up to `events` events of the incident's segment from the clean sampled
-- days before its onset (reference_start to reference_end: days on which none of its
-- features alerted there); the loss is what the day's coverage in the segment lost against
-- those days (loss_shares: the share of covered rows lost, per feature; loss_kinds: 'zero' or
-- 'null', as the values were lost). Both are scored with the model valid on ds (run_id); the
-- d_* columns are the mean change over the reference's events with a relevant row (feco's
-- NDCG convention), *_low and *_high a 95% percentile bootstrap interval over those events.
-- severity: the lowest tier the cost supports ([alerts.severity] tiers: the estimated loss's
-- when the interval excludes no loss, else low; feco.alerts.cost_severity.cost_tiers).
CREATE TABLE IF NOT EXISTS incident_costs (
    ds DATE NOT NULL,
    incident_id VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    onset DATE NOT NULL,
    reference_start DATE,
    reference_end DATE,
    reference_days INTEGER NOT NULL,
    features VARCHAR[] NOT NULL,
    loss_shares DOUBLE[] NOT NULL,
    loss_kinds VARCHAR[] NOT NULL,
    events BIGINT NOT NULL,
    ndcg8_before DOUBLE,
    d_ndcg4 DOUBLE,
    d_ndcg4_low DOUBLE,
    d_ndcg4_high DOUBLE,
    d_ndcg8 DOUBLE,
    d_ndcg8_low DOUBLE,
    d_ndcg8_high DOUBLE,
    severity VARCHAR NOT NULL,
    PRIMARY KEY (ds, incident_id)
);
