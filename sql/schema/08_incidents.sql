-- incidents: the state of each incident on each day it is tracked (a day table: re-running a
-- day replaces its rows, computed from that day's alerts and the previous day's rows).
-- An incident is one feature (NULL: the day's whole volume) in one root segment (the headline
-- segment of the day it opened) over a span of days; every rule's alerts of that feature
-- whose segment it holds attach to it while it is not resolved (alert_ids: those of ds).
-- A source outage (features of one upstream source failing on one day in one segment,
-- [logs.sources]) is one incident: source names it, features lists them, feature is the one
-- that failed worst. features is [feature] for any other incident, [] for the volume's.
-- status: 'open' (first day), 'ongoing', 'resolved' (coverage back within its normal band,
-- above normal_floor with no alert but a lagging decay, for normal_days = the configured days).
-- severity / severity_rank: the highest so far (4 critical, 3 high, 2 medium, 1 low, 0 info);
-- paged_rank: the rank last paged (0: not paged yet, too small or too mild to page).
-- event: the message due on ds ('opened', 'escalated', 'resolved', 'grew': a paged incident gained a
-- feature whose failure would page on its own; NULL for none), message_id
-- its stable id (so re-running a day never pages twice). headline_*: the day's most severe,
-- most localised alert (NULL on a day without alerts). rows_lost: the largest number of
-- covered rows the headline segment lost on one day (n_rows x drop), the incident's size.
-- not_paged: why the day's headline paged no one when it would have been news (too mild, a
-- small segment, a cross, drops before page_after_days of history); NULL otherwise.
CREATE TABLE IF NOT EXISTS incidents (
    ds DATE NOT NULL,
    incident_id VARCHAR NOT NULL,
    feature VARCHAR,
    segment_dim VARCHAR NOT NULL,
    segment_value VARCHAR NOT NULL,
    opened_ds DATE NOT NULL,
    status VARCHAR NOT NULL,
    severity VARCHAR NOT NULL,
    severity_rank INTEGER NOT NULL,
    paged_rank INTEGER NOT NULL,
    normal_floor DOUBLE,
    root_coverage DOUBLE,
    normal_days INTEGER NOT NULL,
    rows_lost BIGINT NOT NULL,
    headline_alert_id VARCHAR,
    headline_rule VARCHAR,
    headline_dim VARCHAR,
    headline_value VARCHAR,
    alert_ids VARCHAR[] NOT NULL,
    event VARCHAR,
    message_id VARCHAR,
    detail VARCHAR,
    source VARCHAR,
    features VARCHAR[],
    not_paged VARCHAR,
    PRIMARY KEY (ds, incident_id)
);
