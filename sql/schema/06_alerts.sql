-- alerts: one row per fired alert rule, with the values and thresholds that made it fire.
-- Written by the detect step; re-running a day replaces that day's alerts.
-- alert_id is stable for (ds, feature, segment, rule). Alerts are not delivered: they attach
-- to incidents (see 08_incidents.sql), which page. status: 'open' for a headline alert,
-- 'ongoing' for a headline that fired the day before too, 'grouped' for one
-- rolled up under another alert (parent_id) of the same feature and rule, 'suppressed' for
-- a low-volume mark. severity: critical, high, medium,
-- low. importance: the feature's share of the ranker's importance (NULL until known).
-- Ratios here are the rule's own inputs (observed and baseline coverage), kept for audit.
CREATE TABLE IF NOT EXISTS alerts (
    ds DATE NOT NULL,
    alert_id VARCHAR NOT NULL PRIMARY KEY,
    feature VARCHAR,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    rule VARCHAR NOT NULL,
    observed DOUBLE,
    baseline DOUBLE,
    threshold DOUBLE,
    drop_abs DOUBLE,
    drop_rel DOUBLE,
    std_error DOUBLE,
    severity VARCHAR NOT NULL,
    importance DOUBLE,
    status VARCHAR NOT NULL,
    parent_id VARCHAR,
    n_rows BIGINT,
    detail VARCHAR
);
