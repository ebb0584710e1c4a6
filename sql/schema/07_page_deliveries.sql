-- page_deliveries: delivery status of each incident message (incidents.message_id) on each
-- channel (log, jsonl, webhook, pagerduty, slack). Kept across re-runs of a day, so a message is delivered once
-- per channel and a failed one is retried by the next notify step (alone, or in a digest).
-- status: 'delivered', 'failed' (tried again by the next run), 'rejected' (the service
-- refused it as invalid, HTTP 400: not sent again) or 'left_out' (not sent and never will be:
-- on pagerduty, the messages of an incident that resolved before PagerDuty received its
-- trigger, which the other channels carry instead); last_error names what failed and never
-- holds a URL or key or any part of them.
CREATE TABLE IF NOT EXISTS page_deliveries (
    message_id VARCHAR NOT NULL,
    channel VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    attempts INTEGER NOT NULL,
    last_attempt_at TIMESTAMPTZ NOT NULL,
    last_error VARCHAR,
    PRIMARY KEY (message_id, channel)
);
