-- alert_deliveries: delivery status of each open alert on each channel (log, jsonl, webhook).
-- Kept across re-runs of a day (keyed by the stable alert_id), so an alert is delivered once
-- per channel and a failed delivery is retried by the next notify step.
-- status: 'delivered' or 'failed'; last_error never holds a secret such as a webhook URL.
CREATE TABLE IF NOT EXISTS alert_deliveries (
    alert_id VARCHAR NOT NULL,
    channel VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,
    last_attempt_at TIMESTAMPTZ NOT NULL,
    last_error VARCHAR,
    PRIMARY KEY (alert_id, channel)
);
