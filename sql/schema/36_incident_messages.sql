-- incident_messages: every message an incident is due to send: its days with an event
-- (incidents), and one resolution for an incident resolved by hand (incident_actions: its
-- first 'resolve', on the incident's last tracked day then, with the action's detail; a
-- message id of its own, so it is delivered once).
-- Inputs: incidents, incident_actions. Output: every incidents column.
CREATE OR REPLACE VIEW incident_messages AS
WITH by_hand AS (
    SELECT incident_id, arg_min(ds, acted_at) AS ds, arg_min(detail, acted_at) AS detail
    FROM incident_actions
    WHERE action = 'resolve'
    GROUP BY incident_id
)
SELECT * FROM incidents WHERE event IS NOT NULL
UNION ALL
SELECT incidents.* REPLACE ('resolved' AS status, 'resolved' AS event,
                            left(md5(incidents.incident_id || '|resolved by hand'), 16) AS message_id,
                            by_hand.detail AS detail)
FROM incidents
JOIN by_hand ON by_hand.incident_id = incidents.incident_id AND by_hand.ds = incidents.ds
WHERE incidents.status <> 'resolved';
