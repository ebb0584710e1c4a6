-- incident_actions: what people on call did, append-only (never a day table: a rerun of a day
-- never deletes it; which state is in force is derived by sql/queries/oncall_*.sql).
-- action: 'ack', 'snooze', 'silence', 'unsilence', 'resolve', 'noise'. incident_id: the
-- incident acted on (NULL for a silence, which matches incidents by feature, segment_dim and
-- segment_value, source: NULL = any). ds: the incident's last tracked day when acted on (what
-- detect and tracking read, never the wall clock; NULL for a silence). severity_rank: the
-- incident's tier then (an ack holds back escalations up to it). held_until: end of a snooze or a
-- silence. unsilences: the action_id of the silence an 'unsilence' lifts. actor, reason: who
-- and why. detail: a resolve's message, as sent (the place, who resolved it and why).
-- acted_at: wall-clock time of the action (it orders the actions; no day's computed result
-- reads it).
CREATE TABLE IF NOT EXISTS incident_actions (
    action_id VARCHAR NOT NULL PRIMARY KEY,
    action VARCHAR NOT NULL,
    incident_id VARCHAR,
    ds DATE,
    severity_rank INTEGER,
    feature VARCHAR,
    segment_dim VARCHAR,
    segment_value VARCHAR,
    source VARCHAR,
    held_until TIMESTAMPTZ,
    unsilences VARCHAR,
    reason VARCHAR,
    detail VARCHAR,
    actor VARCHAR NOT NULL,
    acted_at TIMESTAMPTZ NOT NULL
);
